"""dominant_strategy: your strictly dominant action (a choice); every generated game has one."""

from __future__ import annotations

from collections.abc import Mapping

import numpy as np

from cwm.nfg import solver
from cwm.nfg.answers import AnswerKey, choice_key
from cwm.nfg.families.base_games import dilemma, dress, random_tables
from cwm.nfg.families.family import Built, Family, opponent
from cwm.nfg.game import MatrixGame, NfgFormatError
from cwm.types import JSON


def question_fields(game: MatrixGame, me: int, question: Mapping[str, JSON], probabilities: str) -> dict[str, object]:
    return {"opponent": opponent(game, me)}


def solve(game: MatrixGame, me: int, question: Mapping[str, JSON]) -> AnswerKey:
    """The one action better than each other action against every opposing action.

    Raises:
      NfgFormatError: ``me`` has no strictly dominant action in this game.
    """
    action = solver.dominant_action(game, me)
    if action is None:
        raise NfgFormatError(f"player {me} has no strictly dominant action in this game")
    return choice_key(game.actions[me], [action])


def generate(rng: np.random.Generator, disguise: dict[str, JSON]) -> Built:
    """A dilemma or a random game of 2 or 3 actions each, redrawn until you have a dominant action."""
    me = int(rng.integers(2))
    while True:
        tables = dilemma(rng) if rng.random() < 0.5 else random_tables(rng, int(rng.integers(2, 4)),
                                                                       int(rng.integers(2, 4)))
        game, _ = dress(rng, tables, disguise)
        if solver.dominant_action(game, me) is not None:
            return game, me, {}


FAMILY = Family("dominant_strategy", "choice", question_fields, solve, generate)
