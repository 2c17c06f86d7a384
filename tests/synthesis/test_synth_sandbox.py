"""The loop with candidates checked in the sandbox: a hanging program and a hostile one are scored, not fatal."""

from __future__ import annotations

from pathlib import Path

from synth_helpers import reply, synthesize

from cwm.llm import ScriptedClient


def test_hanging_and_hostile_candidates_in_the_sandbox(tmp_path: Path) -> None:
    marker = Path("/tmp/cwm_pwned")
    marker.unlink(missing_ok=True)
    llm = ScriptedClient([reply("hang"), reply("hostile"), reply("03_refine_correct")])
    result = synthesize(tmp_path, llm, isolate=True)
    hang, hostile, good = result.nodes
    assert hang.pass_rate == 0.0 and "timeout" in hang.error and not hang.expandable
    assert hostile.pass_rate == 0.0 and "'os'" in hostile.error
    assert good.solved and result.solved and result.llm_calls == 3 and not marker.exists()
