"""Matches with an LLM agent on the batch client (``llm:batch:DIR``): a match whose agent waits for a reply
is neither scored nor saved, the tournament says how many wait and where, and running it again after the
replies are written plays every waiting match from its start to the same end, with no forfeit."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from cwm.agents import Settings
from cwm.arena import tournament
from cwm.arena.plan import TournamentPlan
from cwm.llm import PendingBatch, Request, Response, Usage
from cwm.llm.batch import answer_pending, pending_requests
from planners.config import SearchConfig


class FirstFreeCell:
    """A hand-written answerer for the test: the first empty cell of the tic-tac-toe board in the prompt."""

    model = "first-free-cell (hand-written for a test)"
    ledger = None

    def __init__(self) -> None:
        self.asked = 0

    def complete(self, request: Request) -> Response:
        self.asked += 1
        text = request.messages[-1].text
        player = int(re.search(r"You are player (\d)", text).group(1))
        moves = text.split("## This game so far", 1)[1].split("## Your current observation", 1)[0]
        taken = set(re.findall(r"[xo]\((\d),(\d)\)", moves))
        free = next((r, c) for r in "012" for c in "012" if (r, c) not in taken)
        return Response((f"ACTION: {'xo'[player]}({free[0]},{free[1]})",), ("stop",), Usage(10, 5), 0.0, self.model)


def test_matches_wait_for_batch_replies_and_finish_after_they_are_written(tmp_path: Path) -> None:
    batch, out = tmp_path / "batch", tmp_path / "arena"
    agents = ["random", f"llm:batch:{batch}"]
    plan = TournamentPlan(matches=2, settings=Settings(search=SearchConfig(num_simulations=10, rollouts=1)))
    answerer, rounds = FirstFreeCell(), 0
    while True:
        try:
            results = tournament("tic_tac_toe", agents, plan, out_dir=out, executor="local:2", progress=False)
            break
        except PendingBatch as e:
            waiting = len(pending_requests(batch))
            assert e.pending == waiting >= 1 and "wait for LLM replies" in str(e)
            saved = (out / "matches.jsonl").read_text().splitlines() if (out / "matches.jsonl").exists() else []
            assert all(json.loads(line)["forfeit_seat"] is None for line in saved)  # waiting is not a forfeit
            assert answer_pending(batch, answerer) == waiting
            rounds += 1
            assert rounds < 10, "the tournament should end within a game's moves"
    assert len(results) == 4 and rounds >= 2  # the LLM moves at least twice in a game
    assert all(r.forfeit_seat is None for r in results)  # every match played to its end: no forfeit
    rows = [json.loads(line) for line in (out / "matches.jsonl").read_text().splitlines()]
    assert len(rows) == 4 and len({r["key"] for r in rows}) == 4  # each match saved once
    assert not pending_requests(batch)  # nothing left unanswered


def test_a_batch_agent_that_waits_is_not_scored_in_a_single_match(tmp_path: Path) -> None:
    from cwm.agents.llm import LLMPolicyAgent
    from cwm.arena.run import play_match
    from cwm.games import load_game
    from cwm.llm import BatchFileClient

    agent = LLMPolicyAgent(BatchFileClient(tmp_path / "b"), "tic_tac_toe", seed=0)
    with pytest.raises(PendingBatch):
        play_match(load_game("tic_tac_toe"), [agent, agent], seed=0)
    assert agent.log == []  # no answer, no failure: nothing to log until the reply is there
