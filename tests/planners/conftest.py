"""Shared helpers for the planner tests: fixture paths, model loading, and score intervals."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from cwm import games, model

DATA = Path(__file__).resolve().parent.parent / "data" / "planners"


def load_fixture_model(name: str, game: str = "tic_tac_toe") -> model.WorldModel:
    source = (DATA / name).read_text(encoding="utf-8")
    module = model.load_source(source, name=Path(name).stem)
    return model.WorldModel(module, codec=model.ActionCodec.from_game(games.load_game(game)), name=Path(name).stem)


def mean_ci(values: list[float]) -> tuple[float, float, float]:
    """Mean and 95% normal interval."""
    arr = np.asarray(values, dtype=float)
    half = 1.96 * arr.std(ddof=1) / np.sqrt(len(arr)) if len(arr) > 1 else 0.0
    return float(arr.mean()), float(arr.mean() - half), float(arr.mean() + half)


@pytest.fixture
def ttt_model() -> model.WorldModel:
    return load_fixture_model("ttt_model.py")
