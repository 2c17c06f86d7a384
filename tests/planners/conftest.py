"""Fixtures of the planner tests: the tic-tac-toe model of tests/data/planners. The fixture folder, model
loading and score intervals (``data_dir``, ``fixture_model``, ``mean_ci``) are shared with the agents tests
and live in tests/conftest.py.

They are fixtures (not importable helpers) because CI runs pytest with --import-mode=importlib, where
test folders are not on sys.path.
"""

from __future__ import annotations

from collections.abc import Callable

import pytest

from cwm import model


@pytest.fixture
def ttt_model(fixture_model: Callable[..., model.WorldModel]) -> model.WorldModel:
    return fixture_model("ttt_model.py")
