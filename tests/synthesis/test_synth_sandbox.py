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


def test_in_process_checks_run_under_the_call_budget(train: list) -> None:
    # without the sandbox the checker still bounds each call (cwm.sandbox.call_budget): a hang is a failure
    from cwm.synthesis import extract_code
    from cwm.synthesis.target import world_model_checker

    source = extract_code(reply("hang"), ["get_initial_state"]).candidates[0]
    report = world_model_checker(train[:1])(source)
    assert not report.all_passed and report.pass_rate == 0.0
    assert "ran longer than its time budget of 2.0 s" in " ".join(f.render() for f in report.failures)
