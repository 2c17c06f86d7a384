"""A match's record has a cap: a seat whose record (its agent's ``log``) grows past the transcript cap forfeits at
the move that passed it, with the reason named, so the transcript then written stays near the cap; a seat under
the cap plays on. The cap is lowered here so that a few moves pass it."""

from __future__ import annotations

import json

import pyspiel
import pytest

from cwm import games
from cwm.agents.base import AgentBase, RandomAgent
from cwm.arena import play_match
from cwm.arena import transcript as arena_transcript

CAP = 1_000_000
ENTRY = 300_000  # characters each move adds to the chatty agent's record


class Chatty(AgentBase):
    """Plays the first legal action and records ``size`` characters per move (a prompt and a reply)."""

    def __init__(self, size: int):
        self.size = size
        self.log: list[dict[str, str]] = []

    def step(self, state: pyspiel.State) -> int:
        self.log.append({"prompt": "p" * (self.size // 2), "reply": "r" * (self.size // 2)})
        return int(state.legal_actions()[0])


@pytest.fixture()
def small_cap(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(arena_transcript, "RECORD_CAP_BYTES", CAP)


@pytest.mark.parametrize("seat", [0, 1])
def test_a_record_past_the_cap_forfeits_at_the_move_that_passed_it(small_cap, seat):
    game = games.load_game("tic_tac_toe")
    chatty = Chatty(ENTRY)
    agents = [RandomAgent(seed=3)]
    agents.insert(seat, chatty)
    actions: list[int] = []
    outcome = play_match(game, agents, seed=0, actions=actions)
    assert (outcome.forfeit_seat, outcome.forfeit_kind) == (seat, "exception"), outcome
    assert outcome.reason.startswith(f"RecordCapError: seat {seat}'s record of this match grew to ")
    assert f"past the transcript cap of {CAP:,} bytes" in outcome.reason
    assert len(chatty.log) == 4, "the 4th move of 300 KB passes a cap of 1 MB"
    assert len(actions) == outcome.moves == 2 * 3 + seat  # its 4th move is not applied
    assert outcome.returns[seat] == game.min_utility()


def test_a_record_under_the_cap_plays_to_the_end(small_cap):
    game = games.load_game("tic_tac_toe")
    outcome = play_match(game, [Chatty(ENTRY // 2), Chatty(ENTRY // 2)], seed=0)
    assert outcome.forfeit_seat is None and outcome.moves == 7  # the first seat's anti-diagonal


def test_the_meter_counts_each_entry_once_as_json(small_cap):
    meter = arena_transcript.RecordMeter(2)
    agent = Chatty(10)
    for _ in range(3):
        agent.log.append({"a": 1})
        meter.check(1, agent)
    assert meter.size == [0, 3 * len(json.dumps({"a": 1}))]
    meter.check(1, agent)  # nothing new
    assert meter.size[1] == 3 * len(json.dumps({"a": 1}))
