"""estimate_mixed: the maximum-likelihood mixed strategy behind the opponent's past picks (a distribution)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import numpy as np

from cwm.nfg import solver
from cwm.nfg.answers import AnswerKey, distribution_key
from cwm.nfg.families.base_games import cycle, dress, random_tables
from cwm.nfg.families.family import Built, Family, action_names, opponent
from cwm.nfg.game import MatrixGame
from cwm.types import JSON


def question_fields(game: MatrixGame, me: int, question: Mapping[str, JSON], probabilities: str) -> dict[str, object]:
    history: Sequence[str] = question["opponent_history"]
    return {"opponent": opponent(game, me), "rounds": len(history), "history": ", ".join(history),
            "opponent_actions": ", ".join(game.actions[1 - me])}


def solve(game: MatrixGame, me: int, question: Mapping[str, JSON]) -> AnswerKey:
    """Each of the opponent's actions at its relative frequency in the history."""
    other = game.other(me)
    estimate = solver.frequency_estimate(game.actions[other], question["opponent_history"])
    return distribution_key(game.actions[other], [estimate])


def generate(rng: np.random.Generator, disguise: dict[str, JSON]) -> Built:
    """A cycle or a 3-row random game; 10 to 20 picks drawn from a Dirichlet-random mixed strategy."""
    game, _ = dress(rng, cycle(rng) if rng.random() < 0.5 else random_tables(rng, 3, int(rng.integers(2, 4))),
                    disguise)
    me = int(rng.integers(2))
    theirs = game.actions[1 - me]
    mix = rng.dirichlet(np.ones(len(theirs)))
    length = int(rng.choice([10, 12, 15, 20]))
    history = [str(theirs[int(k)]) for k in rng.choice(len(theirs), size=length, p=mix)]
    return game, me, {"opponent_history": history}


def question_from_data(data: Mapping[str, JSON]) -> JSON:
    return {"opponent_history": action_names(data["OPPONENT_HISTORY"], "OPPONENT_HISTORY")}


FAMILY = Family("estimate_mixed", "distribution", question_fields, solve, generate,
                data_names=("OPPONENT_HISTORY",), question_from_data=question_from_data)
