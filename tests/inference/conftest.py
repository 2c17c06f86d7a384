"""Fixtures for the inference tests: recorded Leduc games, the reference model, and an inference function
that searches the model itself for a consistent history (a hand-written test fixture, exact but slow)."""

from __future__ import annotations

import random
from pathlib import Path

import pytest

from cwm import value_rules
from cwm.games import trajectories
from cwm.sandbox import load_source

DATA = Path(__file__).resolve().parents[1] / "data"


def model_search_inference(module):  # noqa: ANN001, ANN201
    """A ``resample_history`` for ``module`` that walks the model's own game tree, depth first in a seeded
    random order, pruning every branch where the player's observation or own action differs."""

    def resample_history(events, player_id, seed):  # noqa: ANN001, ANN202
        rng = random.Random(seed)
        wanted = [value_rules.canonical(e["observation"]) for e in events]

        def walk(state, depth):  # noqa: ANN001, ANN202
            if not value_rules.same(value_rules.canonical(module.get_observations(state)[player_id]), wanted[depth]):
                return None
            if depth == len(events) - 1:
                return []
            own = events[depth]["action"]
            mover = module.get_current_player(state)
            if (mover == player_id) != (own is not None):
                return None
            options = [own] if own is not None else list(module.get_legal_actions(state))
            rng.shuffle(options)
            for action in options:
                rest = walk(module.apply_action(state, action), depth + 1)
                if rest is not None:
                    return [action, *rest]
            return None

        found = walk(module.get_initial_state(), 0)
        if found is None:
            raise ValueError("no history of the model matches these events")
        return found

    return resample_history


@pytest.fixture(scope="session")
def leduc_games():
    return trajectories.collect("leduc_poker", 4, seed=0)


@pytest.fixture(scope="session")
def leduc_source():
    return (DATA / "reference" / "leduc_poker_model.py").read_text()


@pytest.fixture(scope="session")
def leduc_module(leduc_source):
    return load_source(leduc_source, name="leduc_reference")
