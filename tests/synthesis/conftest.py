"""Fixtures of the synthesis tests: training and test games of tic-tac-toe."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

# CI imports tests with --import-mode=importlib, which puts no test directory on sys.path; the test
# modules import their helpers (synth_helpers.py) from this directory.
sys.path.insert(0, str(Path(__file__).resolve().parent))

from cwm.games import trajectories


@pytest.fixture(scope="session")
def train() -> list:
    return trajectories.collect("tic_tac_toe", 5, seed=0)


@pytest.fixture(scope="session")
def small_test() -> list:
    return trajectories.collect("tic_tac_toe", 3, seed=500)
