"""best_response_pure: your best reply when the opponent's pick is known (a choice among your actions)."""

from __future__ import annotations

from collections.abc import Mapping

import numpy as np

from cwm.nfg import solver
from cwm.nfg.answers import AnswerKey, choice_key
from cwm.nfg.families.base_games import any_game, dress
from cwm.nfg.families.family import Built, Family, action_name, opponent
from cwm.nfg.game import MatrixGame, to_fraction
from cwm.types import JSON


def question_fields(game: MatrixGame, me: int, question: Mapping[str, JSON], probabilities: str) -> dict[str, object]:
    return {"opponent": opponent(game, me), "opponent_action": question["opponent_action"]}


def solve(game: MatrixGame, me: int, question: Mapping[str, JSON]) -> AnswerKey:
    """Every action of yours that pays the most against the opponent's known action (ties all accepted)."""
    mix = {question["opponent_action"]: to_fraction(1)}
    return choice_key(game.actions[me], solver.best_responses(game, me, mix))


def generate(rng: np.random.Generator, disguise: dict[str, JSON]) -> Built:
    """Any base game; the opponent's action drawn uniformly."""
    game, _ = dress(rng, any_game(rng), disguise)
    me = int(rng.integers(2))
    return game, me, {"opponent_action": str(rng.choice(game.actions[1 - me]))}


def question_from_data(data: Mapping[str, JSON]) -> JSON:
    return {"opponent_action": action_name(data["OPPONENT_ACTION"])}


FAMILY = Family("best_response_pure", "choice", question_fields, solve, generate,
                data_names=("OPPONENT_ACTION",), question_from_data=question_from_data)
