"""Several LLM calls in flight: they really overlap, and the run does not depend on reply timing."""

from __future__ import annotations

from pathlib import Path

import pytest
from synth_helpers import IndexedClient, KillAfter, Killed, SlowIndexedClient, reply, synthesize

from cwm.llm import ScriptedClient

SCRIPT = ["01_initial_buggy", "02_refine_partial", "01_initial_buggy", "02_refine_partial", "no_code",
          "01_initial_buggy", "two_versions", "03_refine_correct"] * 2


def _outcome(result: object) -> dict:
    out = result.outcome()  # type: ignore[attr-defined]
    out.pop("run_dir")
    return out


def test_calls_overlap_and_timing_does_not_change_the_run(tmp_path: Path) -> None:
    replies = [reply(n) for n in SCRIPT]
    outcomes = []
    for timing_seed in (0, 1):
        llm = SlowIndexedClient(replies, seed=timing_seed)
        outcomes.append(_outcome(synthesize(tmp_path / str(timing_seed), llm, budget=12, concurrency=4, seed=2)))
        assert llm.max_in_flight > 1
        assert set(llm.asked.values()) == {1}
    assert outcomes[0] == outcomes[1]


def test_kill_with_calls_in_flight_then_resume(tmp_path: Path) -> None:
    replies = [reply(n) for n in SCRIPT]
    whole = synthesize(tmp_path / "whole", IndexedClient(replies), budget=12, concurrency=3, seed=4)
    first = IndexedClient(replies)
    with pytest.raises(Killed):
        synthesize(tmp_path / "cut", KillAfter(first, 4), budget=12, concurrency=3, seed=4)  # type: ignore[arg-type]
    second = IndexedClient(replies)
    resumed = synthesize(tmp_path / "cut", second, budget=12, concurrency=3, seed=4)
    assert _outcome(resumed) == _outcome(whole)
    assert not set(first.asked) & set(second.asked)  # no call was asked in both sessions
    assert sorted(set(first.asked) | set(second.asked)) == list(range(whole.llm_calls))


def test_several_candidates_per_call_all_become_nodes(tmp_path: Path) -> None:
    from cwm.synthesis import RequestSettings

    llm = ScriptedClient([[reply("01_initial_buggy"), reply("no_code"), reply("two_versions")]])
    result = synthesize(tmp_path, llm, request=RequestSettings(candidates_per_call=3))
    assert llm.calls[0].n == 3 and result.llm_calls == 1 and result.solved
    assert [(n.call, n.candidate) for n in result.nodes] == [(0, 0), (0, 1), (0, 2), (0, 3)]
    assert [n.source == "" for n in result.nodes] == [False, True, False, False]
