"""The arena's move clock: CPU time decides a move's forfeit; the wall-clock backstop, past its floor, waits
while the move is slowed (it uses little CPU) and ends one only past the backstop at the CPU share it got."""

from __future__ import annotations

import threading

import pyspiel
import pytest

from cwm.agents.base import AgentBase
from cwm.arena import clock
from cwm.arena.clock import MoveTimeout, agent_move
from cwm.sandbox import watch


class _Waits(AgentBase):
    """A move that takes ``seconds`` of wall time and almost no CPU (a move slowed by a busy machine, or one
    waiting for its worker's answer)."""

    def __init__(self, seconds: float):
        self.seconds = seconds

    def step(self, state: pyspiel.State) -> int:
        threading.Event().wait(self.seconds)
        return state.legal_actions()[0]


class _Spins(AgentBase):
    def step(self, state: pyspiel.State) -> int:
        while True:
            pass


@pytest.fixture
def short_floor(monkeypatch: pytest.MonkeyPatch) -> None:
    """A backstop floor of 0.1 s instead of three limits and 30 s, so that the tests are short."""
    monkeypatch.setattr(clock, "hard_wall", lambda limit: 0.1)


def _state() -> pyspiel.State:
    return pyspiel.load_game("tic_tac_toe").new_initial_state()


def test_a_move_past_the_floor_that_uses_little_cpu_is_not_forfeited(short_floor: None) -> None:
    # past the 0.1 s floor the timer finds the move got almost no CPU, and waits for the backstop at that
    # share (3 limits / 2% of a core = 7.5 s) instead of forfeiting it
    assert agent_move(_Waits(0.6), _state(), 0.05) == 0


def test_a_move_that_gets_no_cpu_for_the_whole_backstop_is_ended_by_the_wall_clock(
        short_floor: None, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(watch, "MIN_SHARE", 1.0)  # the backstop then never grows past three limits (0.15 s)
    with pytest.raises(MoveTimeout, match="the move got almost no CPU time for longer than its wall-clock backstop"):
        agent_move(_Waits(30.0), _state(), 0.05)


def test_a_spinning_move_is_ended_by_its_cpu_limit(short_floor: None) -> None:
    with pytest.raises(MoveTimeout, match="the move used more than its limit of 0.2 s of CPU time"):
        agent_move(_Spins(), _state(), 0.2)
