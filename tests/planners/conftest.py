"""Shared fixtures for the planner tests: the fixture folder, model loading, and score intervals.

They are fixtures (not importable helpers) because CI runs pytest with --import-mode=importlib, where
test folders are not on sys.path.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import numpy as np
import pytest

from cwm import games, model
from cwm.sandbox import load_source

DATA = Path(__file__).resolve().parent.parent / "data" / "planners"


def _load(name: str, game: str = "tic_tac_toe") -> model.WorldModel:
    source = (DATA / name).read_text(encoding="utf-8")
    module = load_source(source, name=Path(name).stem)
    return model.WorldModel(module, codec=model.ActionCodec.from_game(games.load_game(game)), name=Path(name).stem)


def _mean_ci(values: list[float]) -> tuple[float, float, float]:
    arr = np.asarray(values, dtype=float)
    half = 1.96 * arr.std(ddof=1) / np.sqrt(len(arr)) if len(arr) > 1 else 0.0
    return float(arr.mean()), float(arr.mean() - half), float(arr.mean() + half)


@pytest.fixture
def data_dir() -> Path:
    """tests/data/planners."""
    return DATA


@pytest.fixture
def fixture_model() -> Callable[..., model.WorldModel]:
    """Loads a model file from tests/data/planners as a WorldModel with the game's action ids."""
    return _load


@pytest.fixture
def mean_ci() -> Callable[[list[float]], tuple[float, float, float]]:
    """Mean and 95% normal interval of a list of scores."""
    return _mean_ci


@pytest.fixture
def ttt_model() -> model.WorldModel:
    return _load("ttt_model.py")
