"""Fixtures that tests of several packages use; a package's own fixtures live in its folder's conftest.py.

- ``ttt_games``, ``leduc_games`` and ``leduc_source``: recorded games and the reference Leduc model (the
  checks and synthesis tests of the value and inference targets).

They are fixtures (not importable helpers) because CI runs pytest with --import-mode=importlib, where test
folders are not on sys.path, and no test imports another folder's conftest.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from cwm.games import trajectories

DATA = Path(__file__).resolve().parent / "data"
REFERENCE = DATA / "reference"


@pytest.fixture(scope="session")
def ttt_games() -> list:
    return trajectories.collect("tic_tac_toe", 3, seed=0)


@pytest.fixture(scope="session")
def leduc_games():
    return trajectories.collect("leduc_poker", 4, seed=0)


@pytest.fixture(scope="session")
def leduc_source():
    return (REFERENCE / "leduc_poker_model.py").read_text()
