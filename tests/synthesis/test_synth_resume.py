"""Interrupted runs resume from the run directory without asking the LLM again for a journaled reply."""

from __future__ import annotations

from pathlib import Path

import pytest
from synth_helpers import BUGGY_THEN_FIXED, KillAfter, Killed, reply, synthesize

from cwm.llm import BadRequestError, ScriptedClient
from cwm.llm.fakes import Fail
from cwm.llm.testing import fake_gemini  # noqa: F401  (fixture)
from cwm.synthesis import ResumeError

SCRIPT = ["01_initial_buggy", "01_initial_buggy", "02_refine_partial", "two_versions", "03_refine_correct"]


def _outcome(result: object) -> dict:
    out = result.outcome()  # type: ignore[attr-defined]
    out.pop("run_dir")
    return out


@pytest.mark.parametrize("k", [1, 3])
def test_killed_run_resumes_to_the_same_result(tmp_path: Path, k: int) -> None:
    replies = [reply(n) for n in SCRIPT]
    whole = synthesize(tmp_path / "whole", ScriptedClient(replies), seed=0)
    assert whole.solved and whole.llm_calls == 4
    first = ScriptedClient(replies)
    with pytest.raises(Killed):
        synthesize(tmp_path / "cut", KillAfter(first, k), seed=0)
    assert len(first.calls) == k
    second = ScriptedClient(replies[k:])
    resumed = synthesize(tmp_path / "cut", second, seed=0)
    # the k journaled replies were replayed; only the rest was asked, each once
    assert len(second.calls) == whole.llm_calls - k
    assert [c.messages for c in first.calls + second.calls] == [c.messages for c in _calls(whole)]
    assert _outcome(resumed) == _outcome(whole)


def _calls(result: object) -> list:
    # the requests an uninterrupted run made, read back from its journal
    import json

    from cwm.llm import Request

    root = Path(result.run_dir)  # type: ignore[attr-defined]
    return [Request.from_json(json.loads(p.read_text())["request"]) for p in sorted((root / "calls").glob("*.json"))]


def test_resume_against_the_fake_gemini_server(tmp_path: Path, fake_gemini) -> None:  # noqa: F811
    texts = [reply(n) for n in BUGGY_THEN_FIXED]
    fake_gemini.script(texts[0], Fail(400, "the provider went away"))
    with pytest.raises(BadRequestError):
        synthesize(tmp_path / "run", fake_gemini.client(), seed=1)
    assert fake_gemini.request_count == 2
    fake_gemini.script(texts[1], texts[2])
    result = synthesize(tmp_path / "run", fake_gemini.client(), seed=1)
    assert result.solved and result.llm_calls == 3
    assert fake_gemini.request_count == 4  # 1 answered + 1 failed, then only the 2 calls not journaled
    prompts = [r.body["contents"][-1]["parts"][0]["text"] for r in fake_gemini.requests]
    assert prompts[0].startswith("Write a code world model") and sum(p == prompts[0] for p in prompts) == 1
    assert result.input_tokens > 0 and result.output_tokens > 0


def test_finished_run_is_not_repeated(tmp_path: Path) -> None:
    replies = [reply(n) for n in BUGGY_THEN_FIXED]
    first = synthesize(tmp_path, ScriptedClient(replies))
    again = ScriptedClient([])
    second = synthesize(tmp_path, again)
    assert again.calls == [] and _outcome(second) == _outcome(first)


def test_a_directory_of_another_run_is_refused(tmp_path: Path) -> None:
    synthesize(tmp_path, ScriptedClient([reply("03_refine_correct")]), seed=0)
    with pytest.raises(ResumeError, match="seed"):
        synthesize(tmp_path, ScriptedClient([reply("03_refine_correct")]), seed=1)


def test_a_different_training_set_is_refused(tmp_path: Path) -> None:
    synthesize(tmp_path, ScriptedClient([reply("03_refine_correct")]))
    with pytest.raises(ResumeError, match="num_train"):
        synthesize(tmp_path, ScriptedClient([reply("03_refine_correct")]), num_train=3)
