"""A planning worker's answer is bounded: of its per-move stats only the known keys, as finite numbers, reach the
match's record, and an answer with more stats entries or longer keys than any real planning server writes
(tests/data/sleepers/ungated/forged_stats.py: 2,500 keys of 8,000 characters, 20 MB) forfeits the match with
that reason, its transcript staying small."""

from __future__ import annotations

import json
from typing import Any

import pytest

from cwm import games
from cwm.agents.base import AgentError, RandomAgent
from cwm.agents.worker import MAX_STATS_ENTRIES, MAX_STATS_KEY_CHARS, STATS_KEYS, WorkerAgent, known_stats
from cwm.arena import play_match
from cwm.arena import transcript as arena_transcript
from cwm.sandbox import Sandbox
from cwm.sandbox.session import Session
from cwm.types import JSON
from planners.config import SearchConfig

from .programs import REFERENCE, UNGATED, read

SEARCH = SearchConfig(num_simulations=50, rollouts=1)


class UngatedSandbox(Sandbox):
    """A sandbox whose planning workers skip the static gate (so that a sleeper can reach its answer pipe;
    production code has no way to ask for this)."""

    def open_session(self, job: str, source: str, payload: JSON, *, move_cpu_s: float, limits: Any = None,
                     gate: bool = True) -> Session:
        return super().open_session(job, source, payload, move_cpu_s=move_cpu_s, limits=limits, gate=False)


def _transcript(source: str, name: str, box: Sandbox) -> tuple[Any, dict[str, JSON]]:
    """One tic-tac-toe match of the model (seat 0) against a random agent, and its transcript as the arena
    builds it (``cwm.arena.run.run_match``)."""
    game = games.load_game("tic_tac_toe")
    agent = WorkerAgent({"model.py": source}, "tic_tac_toe", SEARCH, name=name, seed=0, move_cpu_s=2.0, sandbox=box)
    actions: list[int] = []
    try:
        outcome = play_match(game, [agent, RandomAgent(seed=1)], seed=0, move_time_limit=2.0, actions=actions)
    finally:
        agent.close()
    record = {"key": "k", "seats": ["m", "random"], "seed": 0, "returns": list(outcome.returns),
              "forfeit_seat": outcome.forfeit_seat, "forfeit_kind": outcome.forfeit_kind, "reason": outcome.reason,
              "moves": outcome.moves, "duration_s": 0.0, "actions": actions}
    built = arena_transcript.build(game, record, game_name="tic_tac_toe", specs=["m", "random"],
                                   agents=[{"log": agent.log, "stats": agent.stats()}, {"log": [], "stats": {}}])
    return outcome, built


@pytest.fixture(scope="module")
def box():
    with UngatedSandbox(isolation="process") as sandbox:
        yield sandbox


def test_a_worker_answering_huge_stats_forfeits_and_its_transcript_stays_small(box):
    program = read(UNGATED / "forged_stats.py")
    outcome, built = _transcript(program.source, "forged_stats", box)
    assert (outcome.forfeit_seat, outcome.forfeit_kind) == (0, "exception"), outcome
    assert "stats over their bounds (2,500 entries" in outcome.reason
    assert outcome.moves == 2, "the sleeper forges its answer at its second move"
    assert len(json.dumps(built)) < 16_000, "the forged stats reached the transcript"


def test_a_clean_worker_keeps_its_known_stats_in_the_transcript(box):
    outcome, built = _transcript(REFERENCE, "reference", box)
    assert outcome.forfeit_seat is None and outcome.moves >= 5
    log = built["seats"][0]["log"]
    assert log and all(set(entry) <= STATS_KEYS | {"player", "move_simulations"} for entry in log)
    # each move's own search (at most its 50 simulations; fewer where the solver proved the root) adds up
    assert all(0 < entry["move_simulations"] <= 50 for entry in log), log
    assert sum(entry["move_simulations"] for entry in log) == log[-1]["simulations"]
    assert len(json.dumps(built)) < 16_000


def test_known_stats_keeps_known_finite_numbers_only():
    found = {"simulations": 50, "searches": 2, "move_cpu_s": 0.01, "move_wall_s": float("nan"), "draws": 2**70,
             "fallback_moves": True, "moves": "3", "won": 1}
    assert known_stats(found, "m") == {"simulations": 50, "searches": 2, "move_cpu_s": 0.01}


@pytest.mark.parametrize("found", [
    {f"k{i}": i for i in range(MAX_STATS_ENTRIES + 1)},
    {"s" * (MAX_STATS_KEY_CHARS + 1): 1},
    {7: 1},
], ids=["too-many", "long-key", "int-key"])
def test_stats_over_their_bounds_forfeit(found):
    with pytest.raises(AgentError, match="world model m's worker answered stats over their bounds"):
        known_stats(found, "m")
