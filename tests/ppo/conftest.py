"""Fixtures for the PPO tests: the games of the reference models (or the oracle) as envs, with their
hand-written encoders. The reference files and encoders themselves (``source``, ``encode``) are shared with
other packages' tests and live in tests/conftest.py.

Fixtures rather than helpers: CI runs pytest with --import-mode=importlib, where test folders are not on
sys.path.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from cwm import games
from cwm.games.oracle import oracle_model
from cwm.model import ActionCodec, WorldModel
from cwm.ppo.train import ground_truth_envs
from cwm.sandbox import load_source
from planners.env import LocalEnvs

REFERENCE = Path(__file__).resolve().parents[1] / "data" / "reference"


def world_model(game: str) -> WorldModel:
    """The hand-written reference model where there is one (tic-tac-toe, Leduc), else the oracle."""
    file = REFERENCE / f"{game}_model.py"
    if not file.exists():
        return oracle_model(game)
    module = load_source(file.read_text(encoding="utf-8"), name=f"{game}_model")
    return WorldModel(module, codec=ActionCodec.from_game(games.load_game(game)), name=f"{game}_model")


@pytest.fixture
def model_envs(encode: Callable[[str], Callable[[Any, int], Any]]) -> Callable[[str], LocalEnvs]:
    """A game's envs inside its reference (or oracle) world model, with its hand-written encoder."""
    return lambda game: LocalEnvs.of_model(world_model(game), encode(game))


@pytest.fixture
def real_envs(encode: Callable[[str], Callable[[Any, int], Any]]) -> Callable[[str], LocalEnvs]:
    """A game's envs on its ground truth, with its hand-written encoder."""
    return lambda game: ground_truth_envs(game, encode(game))
