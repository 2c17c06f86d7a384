"""nash and nash_3x3: your strategy in a game's unique Nash equilibrium (a distribution).

Both ask the same question and share its text (``prompts/nfg/questions/nash_3x3.md`` includes ``nash.md``) and
answer key; they differ in the games drawn: ``nash`` a dilemma, a cycle or a 2x2 game with one equilibrium,
``nash_3x3`` a general-sum 3x3 game whose one equilibrium is mixed.
"""

from __future__ import annotations

from collections.abc import Mapping

import numpy as np

from cwm.nfg import solver
from cwm.nfg.answers import AnswerKey, distribution_key
from cwm.nfg.families.base_games import cycle, dilemma, dress, random_tables
from cwm.nfg.families.family import Built, Family
from cwm.nfg.game import MatrixGame, NfgFormatError
from cwm.types import JSON


def question_fields(game: MatrixGame, me: int, question: Mapping[str, JSON], probabilities: str) -> dict[str, object]:
    return {"my_actions": ", ".join(game.actions[me])}


def solve(game: MatrixGame, me: int, question: Mapping[str, JSON]) -> AnswerKey:
    """Your strategy in each equilibrium support enumeration finds (once per distinct strategy).

    Raises:
      NfgFormatError: no equilibrium found (a degenerate game).
    """
    equilibria = solver.nash_equilibria(game)
    if not equilibria:
        raise NfgFormatError("support enumeration found no equilibrium (a degenerate game)")
    mine: list = []
    for profile in equilibria:
        if profile[me] not in mine:
            mine.append(profile[me])
    return distribution_key(game.actions[me], mine)


def generate_2x2(rng: np.random.Generator, disguise: dict[str, JSON]) -> Built:
    """A dilemma, a cycle, or a 2x2 game without payoff ties and with exactly one equilibrium."""
    me = int(rng.integers(2))
    kind = rng.integers(3)
    if kind == 0:
        return dress(rng, dilemma(rng), disguise)[0], me, {}
    if kind == 1:
        return dress(rng, cycle(rng), disguise)[0], me, {}
    while True:  # nondegenerate: no payoff ties a best response could hide behind
        a, b = random_tables(rng, 2, 2)
        if a[0][0] != a[1][0] and a[0][1] != a[1][1] and b[0][0] != b[0][1] and b[1][0] != b[1][1]:
            game, _ = dress(rng, (a, b), disguise)
            if len(solver.nash_equilibria(game)) == 1:
                return game, me, {}


def generate_3x3(rng: np.random.Generator, disguise: dict[str, JSON]) -> Built:
    """A general-sum 3x3 game that is nondegenerate and has exactly one equilibrium, a mixed one."""
    me = int(rng.integers(2))
    while True:
        game, _ = dress(rng, random_tables(rng, 3, 3), disguise)
        if not solver.is_nondegenerate(game):
            continue
        equilibria = solver.nash_equilibria(game)
        if len(equilibria) == 1 and sum(p > 0 for p in equilibria[0][me].values()) >= 2:
            return game, me, {}


NASH = Family("nash", "distribution", question_fields, solve, generate_2x2)
NASH_3X3 = Family("nash_3x3", "distribution", question_fields, solve, generate_3x3)
