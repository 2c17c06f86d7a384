"""play_strategy: your moves in a repeated dilemma when you follow a named strategy (a sequence)."""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence

import numpy as np

from cwm.nfg import solver
from cwm.nfg.answers import AnswerKey, sequence_key
from cwm.nfg.families.base_games import dilemma, dress, roles
from cwm.nfg.families.family import Built, Family, action_name, action_names, opponent, roles_from_data
from cwm.nfg.game import MatrixGame
from cwm.nfg.phrases import describe_strategy
from cwm.types import JSON


def question_fields(game: MatrixGame, me: int, question: Mapping[str, JSON], probabilities: str) -> dict[str, object]:
    partner: Sequence[str] = question["partner_history"]
    return {"opponent": opponent(game, me), "rounds": len(partner), "history": ", ".join(partner),
            "strategy": describe_strategy(question["strategy"], question["roles"])}


def solve(game: MatrixGame, me: int, question: Mapping[str, JSON]) -> AnswerKey:
    """The strategy's moves against the partner's, round by round (``solver.play_out``)."""
    moves = solver.play_out(question["strategy"], question["partner_history"], question["roles"])
    return sequence_key(game.actions[me], moves)


def generate(rng: np.random.Generator, disguise: dict[str, JSON]) -> Built:
    """A dilemma, 5 to 8 random partner moves and one of ``solver.STRATEGIES``."""
    game, order = dress(rng, dilemma(rng), disguise)
    me = int(rng.integers(2))
    names = roles(game, order, me)
    partner = [names[str(m)] for m in rng.choice([solver.COOPERATE, solver.DEFECT], size=int(rng.integers(5, 9)))]
    return game, me, {"strategy": str(rng.choice(solver.STRATEGIES)), "partner_history": partner, "roles": names}


def question_from_data(data: Mapping[str, JSON]) -> JSON:
    """A strategy written as the LLM likes (``Tit for tat``) is spelled like ``solver.STRATEGIES`` (``tit-for-tat``)."""
    roles_ = roles_from_data(data)
    strategy = re.sub(r"[\s_-]+", "-", action_name(data["STRATEGY"]).strip().lower())
    return {"strategy": strategy, "partner_history": action_names(data["PARTNER_HISTORY"], "PARTNER_HISTORY"),
            "roles": roles_}


FAMILY = Family("play_strategy", "sequence", question_fields, solve, generate,
                data_names=("STRATEGY", "PARTNER_HISTORY", "COOPERATE", "DEFECT"),
                question_from_data=question_from_data, data_prompt_fields={"strategies": ", ".join(solver.STRATEGIES)})
