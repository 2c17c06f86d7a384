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
    # each match's LLM log holds its own calls once, not once per pass that replayed the match from its start
    from cwm.arena.run import _safe

    for row in rows:
        seat = row["seats"].index(agents[1])
        log = out / "llm" / _safe(row["key"]) / "llm_log.jsonl"
        assert len(log.read_text().splitlines()) == row["stats"][seat]["llm_calls"] >= 1


def test_a_batch_agent_that_waits_is_not_scored_in_a_single_match(tmp_path: Path) -> None:
    from cwm.agents.llm import LLMPolicyAgent
    from cwm.arena.run import play_match
    from cwm.games import load_game
    from cwm.llm import BatchFileClient

    agent = LLMPolicyAgent(BatchFileClient(tmp_path / "b"), "tic_tac_toe", seed=0)
    with pytest.raises(PendingBatch):
        play_match(load_game("tic_tac_toe"), [agent, agent], seed=0)
    assert agent.log == []  # no answer, no failure: nothing to log until the reply is there


def test_an_llm_on_a_batch_directory_is_the_same_agent_wherever_its_folder_is(tmp_path: Path) -> None:
    from cwm.agents.fingerprint import agent_fingerprint, former_fingerprint
    from cwm.agents.grammar import parse_agent_spec
    from cwm.arena.plan import ArenaError

    here, there = parse_agent_spec(f"llm:batch:{tmp_path / 'a' / 'gemini'}"), parse_agent_spec(
        f"llm:batch:{tmp_path / 'b' / 'gemini'}")
    assert agent_fingerprint(here) == agent_fingerprint(there) == "llm:batch:gemini"
    assert agent_fingerprint(parse_agent_spec(f"llm:batch:{tmp_path / 'gpt'}")) != agent_fingerprint(here)
    # a folder an older cwm wrote names the agent by the folder's whole path: refused for resuming, in one line
    batch, out = tmp_path / "batch", tmp_path / "arena"
    agents = ["random", f"llm:batch:{batch}"]
    plan = TournamentPlan(matches=1)
    for _ in range(10):
        try:
            tournament("tic_tac_toe", agents, plan, out_dir=out, executor="inline", progress=False)
            break
        except PendingBatch:
            answer_pending(batch, FirstFreeCell())
    old = former_fingerprint(parse_agent_spec(agents[1]))
    assert old == agents[1]
    rows = [json.loads(line) for line in (out / "matches.jsonl").read_text().splitlines()]
    for row in rows:
        row["fingerprints"] = [old if fp == agent_fingerprint(parse_agent_spec(agents[1])) else fp
                               for fp in row["fingerprints"]]
    (out / "matches.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows))
    with pytest.raises(ArenaError, match="older cwm"):
        tournament("tic_tac_toe", agents, plan, out_dir=out, executor="inline", progress=False)
