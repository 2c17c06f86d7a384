"""zero_sum_maximin: your maximin strategy in a zero-sum game of 2x2 up to 7x7 (a distribution scored by
exploitability: any strategy a best-responding opponent cannot exploit beyond a threshold is correct)."""

from __future__ import annotations

from collections.abc import Mapping
from fractions import Fraction

import numpy as np

from cwm.nfg import zero_sum
from cwm.nfg.answers import AnswerKey, Exploitability
from cwm.nfg.families.base_games import dress
from cwm.nfg.families.family import Built, Family, opponent
from cwm.nfg.game import MatrixGame, NfgFormatError
from cwm.types import JSON

# A zero-sum strategy is correct when a best-responding opponent gains at most this share of the answerer's
# payoff range (max - min) against it; a strategy written to 3 decimals stays well inside it.
EXPLOITABILITY_TOLERANCE = Fraction(1, 50)
MAX_ZERO_SUM_SIZE = 7


def question_fields(game: MatrixGame, me: int, question: Mapping[str, JSON], probabilities: str) -> dict[str, object]:
    return {"opponent": opponent(game, me), "my_actions": ", ".join(game.actions[me])}


def zero_sum_key(game: MatrixGame, me: int, *, tolerance: Fraction = EXPLOITABILITY_TOLERANCE) -> AnswerKey:
    """The key of a maximin question: one optimal strategy (for the ideal) and the exploitability rule.

    Raises:
      NfgFormatError: the game is not zero-sum.
    """
    if not game.is_zero_sum():
        raise NfgFormatError("zero_sum_maximin: the game is not zero-sum (some outcome's payoffs do not sum to 0)")
    mine = game.matrix(me)
    solution = zero_sum.solve_zero_sum(mine)
    spread = max(max(r) for r in mine) - min(min(r) for r in mine)
    rule = Exploitability(tuple(tuple(r) for r in mine), solution.value, float(tolerance * spread))
    return AnswerKey("distribution", tuple(game.actions[me]), (solution.row,), exploitability=rule)


def solve(game: MatrixGame, me: int, question: Mapping[str, JSON]) -> AnswerKey:
    """``zero_sum_key`` with the default tolerance (the question has no parameters)."""
    return zero_sum_key(game, me)


def generate(rng: np.random.Generator, disguise: dict[str, JSON]) -> Built:
    """A zero-sum game of 2x2 up to 7x7 in which every pure strategy of yours is exploitable beyond the
    scoring threshold (so the answer must mix)."""
    me = int(rng.integers(2))
    while True:
        rows, cols = (int(k) for k in rng.integers(2, MAX_ZERO_SUM_SIZE + 1, size=2))
        a = rng.integers(-5, 6, size=(rows, cols)).tolist()
        game, _ = dress(rng, (a, [[-v for v in r] for r in a]), disguise)
        rule = zero_sum_key(game, me).exploitability
        assert rule is not None
        if rule.value - max(min(r) for r in rule.payoffs) > rule.threshold:
            return game, me, {}


FAMILY = Family("zero_sum_maximin", "distribution", question_fields, solve, generate)
