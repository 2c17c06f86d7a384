"""Fixtures of the synthesis tests: training and test games of tic-tac-toe; for the value target, the
reference tic-tac-toe model, hand-written value functions for it (a sound one, its sign-flipped twin, one that
says nothing), scripted replies, and a bundle of the model. The recorded games of tic-tac-toe and Leduc poker
and Leduc's reference model, which the checks tests use too, are in tests/conftest.py."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

# CI imports tests with --import-mode=importlib, which puts no test directory on sys.path; the test
# modules import their helpers (synth_helpers.py) from this directory.
sys.path.insert(0, str(Path(__file__).resolve().parent))

from cwm.bundle import export_bundle
from cwm.games import trajectories
from planners.config import SearchConfig

DATA = Path(__file__).resolve().parents[1] / "data"
VALUES = DATA / "values"
TTT = (DATA / "reference" / "tic_tac_toe_model.py").read_text()
GOOD = (VALUES / "tic_tac_toe_value.py").read_text()
FLIPPED = (VALUES / "tic_tac_toe_value_flipped.py").read_text()
NEUTRAL = (VALUES / "neutral_value.py").read_text()
INITIAL_REPLY = (VALUES / "replies" / "initial.md").read_text()
REFINE_REPLY = (VALUES / "replies" / "refine.md").read_text()
# Weak enough that a value at the leaves matters, cheap enough for a fast suite.
FAST = SearchConfig(num_simulations=50, rollouts=2)


@pytest.fixture(scope="session")
def train() -> list:
    return trajectories.collect("tic_tac_toe", 5, seed=0)


@pytest.fixture(scope="session")
def small_test() -> list:
    return trajectories.collect("tic_tac_toe", 3, seed=500)


@pytest.fixture()
def ttt_bundle(tmp_path: Path, ttt_games: list) -> Path:
    return export_bundle(tmp_path / "bundle", game="tic_tac_toe", model_source=TTT, train=ttt_games,
                         provenance={"llm": "hand-written fixture"})
