"""Fixtures of the synthesis tests: training and test games of tic-tac-toe."""

from __future__ import annotations

import pytest

from cwm import trajectories


@pytest.fixture(scope="session")
def train() -> list:
    return trajectories.collect("tic_tac_toe", 5, seed=0)


@pytest.fixture(scope="session")
def small_test() -> list:
    return trajectories.collect("tic_tac_toe", 3, seed=500)
