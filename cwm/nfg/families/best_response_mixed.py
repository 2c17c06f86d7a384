"""best_response_mixed: your best reply to the opponent's known mixed strategy (a choice among your actions)."""

from __future__ import annotations

from collections.abc import Mapping
from fractions import Fraction

import numpy as np

from cwm.nfg import solver
from cwm.nfg.answers import AnswerKey, choice_key
from cwm.nfg.families.base_games import cycle, dress, random_tables
from cwm.nfg.families.family import Built, Family, action_name, opponent
from cwm.nfg.game import MatrixGame, fraction_json, to_fraction
from cwm.nfg.phrases import part, probability
from cwm.types import JSON


def question_fields(game: MatrixGame, me: int, question: Mapping[str, JSON], probabilities: str) -> dict[str, object]:
    mix = question["opponent_mix"]
    return {"opponent": opponent(game, me),
            "mix": ", ".join(part("parts/mix_item", action=a, probability=probability(to_fraction(p), probabilities))
                             for a, p in mix.items())}


def solve(game: MatrixGame, me: int, question: Mapping[str, JSON]) -> AnswerKey:
    """Every action of yours with the highest expected payoff against the mix (ties all accepted)."""
    mix = {a: to_fraction(p, where=f"opponent_mix[{a!r}]") for a, p in question["opponent_mix"].items()}
    return choice_key(game.actions[me], solver.best_responses(game, me, mix))


def generate(rng: np.random.Generator, disguise: dict[str, JSON]) -> Built:
    """A cycle or a 3-column random game; a mix in halves, quarters, fifths or tenths over two or more actions."""
    game, _ = dress(rng, cycle(rng) if rng.random() < 0.5 else random_tables(rng, int(rng.integers(2, 4)), 3),
                    disguise)
    me = int(rng.integers(2))
    theirs = game.actions[1 - me]
    denominator = int(rng.choice([2, 4, 5, 10]))
    counts = [denominator]
    while sum(c > 0 for c in counts) < 2:  # a genuinely mixed strategy: at least two actions in play
        cuts = sorted(int(c) for c in rng.integers(0, denominator + 1, size=len(theirs) - 1))
        counts = [b - a for a, b in zip([0, *cuts], [*cuts, denominator])]
    mix = {a: fraction_json(Fraction(c, denominator)) for a, c in zip(theirs, counts)}
    return game, me, {"opponent_mix": mix}


def question_from_data(data: Mapping[str, JSON]) -> JSON:
    """The mix as exact fractions; percentages (entries summing to exactly 100) become probabilities."""
    mix = {action_name(a): to_fraction(p, where=f"OPPONENT_MIX[{a!r}]").limit_denominator(1000)
           for a, p in data["OPPONENT_MIX"].items()}
    total = sum(mix.values(), Fraction(0))
    return {"opponent_mix": {a: p / total for a, p in mix.items()} if total == 100 else mix}


FAMILY = Family("best_response_mixed", "choice", question_fields, solve, generate,
                data_names=("OPPONENT_MIX",), question_from_data=question_from_data)
