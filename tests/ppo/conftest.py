"""Fixtures for the PPO tests: the reference models and hand-written encoders, and their games as envs.

Fixtures rather than helpers: CI runs pytest with --import-mode=importlib, where test folders are not on
sys.path.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from cwm import games
from cwm.contract import ENCODER_API
from cwm.games.oracle import oracle_model
from cwm.model import ActionCodec, WorldModel
from cwm.ppo.train import ground_truth_envs
from cwm.sandbox import load_source
from planners.env import LocalEnvs

REFERENCE = Path(__file__).resolve().parents[1] / "data" / "reference"


def reference_source(name: str) -> str:
    return (REFERENCE / name).read_text(encoding="utf-8")


def encoder(game: str) -> Callable[[Any, int], Any]:
    return load_source(reference_source(f"{game}_encoder.py"), name=f"{game}_encoder", api=ENCODER_API).encode


def world_model(game: str) -> WorldModel:
    """The hand-written reference model where there is one (tic-tac-toe, Leduc), else the oracle."""
    file = REFERENCE / f"{game}_model.py"
    if not file.exists():
        return oracle_model(game)
    module = load_source(file.read_text(encoding="utf-8"), name=f"{game}_model")
    return WorldModel(module, codec=ActionCodec.from_game(games.load_game(game)), name=f"{game}_model")


@pytest.fixture
def source() -> Callable[[str], str]:
    """The text of a file in tests/data/reference."""
    return reference_source


@pytest.fixture
def encode() -> Callable[[str], Callable[[Any, int], Any]]:
    """The hand-written encoder of a game, loaded (gated) in this process."""
    return encoder


@pytest.fixture
def model_envs() -> Callable[[str], LocalEnvs]:
    """A game's envs inside its reference (or oracle) world model, with its hand-written encoder."""
    return lambda game: LocalEnvs.of_model(world_model(game), encoder(game))


@pytest.fixture
def real_envs() -> Callable[[str], LocalEnvs]:
    """A game's envs on its ground truth, with its hand-written encoder."""
    return lambda game: ground_truth_envs(game, encoder(game))
