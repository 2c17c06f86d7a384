"""classify_partner: which partner type most likely produced a repeated dilemma's history (a label).

Types are ``cwm.nfg.solver.PARTNER_TYPES``, each slipping with a known probability (the tremble); the
answer is ``ambiguous`` when the most likely types tie exactly.
"""

from __future__ import annotations

from collections.abc import Mapping

import numpy as np

from cwm.nfg import solver
from cwm.nfg.answers import AnswerKey, label_key
from cwm.nfg.families.base_games import dilemma, dress, roles
from cwm.nfg.families.family import Built, Family, action_names, opponent, roles_from_data
from cwm.nfg.game import MatrixGame, fraction_json, to_fraction
from cwm.nfg.phrases import describe_strategy, part, probability
from cwm.types import JSON

LABELS = (*solver.PARTNER_TYPES, solver.AMBIGUOUS)


def question_fields(game: MatrixGame, me: int, question: Mapping[str, JSON], probabilities: str) -> dict[str, object]:
    """The rounds so far, one line each, and the types' rules (the tremble is always written as a fraction)."""
    them = opponent(game, me)
    rounds = [part("parts/round", round=t, mine=mine, theirs=theirs, opponent=them)
              for t, (mine, theirs) in enumerate(question["history"], 1)]
    types = [part("parts/type_line", label=name, description=describe_strategy(name, question["roles"]))
             for name in solver.PARTNER_TYPES]
    return {"opponent": them, "rounds": len(rounds), "history": "\n".join(rounds), "types": "\n".join(types),
            "tremble": probability(to_fraction(question["tremble"]), "fraction")}


def solve(game: MatrixGame, me: int, question: Mapping[str, JSON]) -> AnswerKey:
    """The most likely type under a uniform prior (``solver.classify_partner``)."""
    history = [(str(a), str(b)) for a, b in question["history"]]
    tremble = to_fraction(question.get("tremble", solver.DEFAULT_TREMBLE), where="tremble")
    return label_key(LABELS, [solver.classify_partner(history, question["roles"], tremble=tremble)])


def generate(rng: np.random.Generator, disguise: dict[str, JSON]) -> Built:
    """A dilemma and 6 to 10 rounds: ours at random, the partner's by a random type with the default tremble."""
    game, order = dress(rng, dilemma(rng), disguise)
    me = int(rng.integers(2))
    names = roles(game, order, me)
    rule = solver.RULES[str(rng.choice(solver.PARTNER_TYPES))]
    ours: list[str] = []
    theirs: list[str] = []
    for _ in range(int(rng.integers(6, 11))):
        move = rule(theirs, ours) or str(rng.choice([solver.COOPERATE, solver.DEFECT]))
        if rng.random() < float(solver.DEFAULT_TREMBLE):
            move = solver.DEFECT if move == solver.COOPERATE else solver.COOPERATE
        ours.append(str(rng.choice([solver.COOPERATE, solver.DEFECT])))
        theirs.append(move)
    history = [[names[a], names[b]] for a, b in zip(ours, theirs)]
    return game, me, {"history": history, "roles": names, "tremble": fraction_json(solver.DEFAULT_TREMBLE)}


def question_from_data(data: Mapping[str, JSON]) -> JSON:
    roles_ = roles_from_data(data)
    tremble = to_fraction(data["TREMBLE"], where="TREMBLE").limit_denominator(1000)
    history = [action_names(pair, "HISTORY entry") for pair in data["HISTORY"]]
    return {"history": history, "roles": roles_, "tremble": tremble}


FAMILY = Family("classify_partner", "label", question_fields, solve, generate,
                data_names=("HISTORY", "COOPERATE", "DEFECT", "TREMBLE"), question_from_data=question_from_data)
