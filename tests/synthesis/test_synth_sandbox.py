"""The loop with candidates checked in the sandbox: a hanging program and a hostile one are scored, not fatal."""

from __future__ import annotations

from pathlib import Path

import pytest
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
    from cwm.sandbox.checkers import world_model_checker
    from cwm.synthesis import extract_code

    source = extract_code(reply("hang"), ["get_initial_state"]).candidates[0]
    report = world_model_checker(train[:1])(source)
    assert not report.all_passed and report.pass_rate == 0.0
    assert "ran longer than its time budget of 2.0 s" in " ".join(f.render() for f in report.failures)


def test_a_failure_report_reads_the_same_in_the_sandbox_and_in_process(train: list) -> None:
    """The LLM's feedback may not depend on where a check ran: the module name, the error message and the
    traceback (quoting the model's own raising line) are the same, so a session recorded with sandboxed checks
    replays with in-process ones (a real bargaining session's second prompt showed a traceback that did not)."""
    from synth_helpers import program

    from cwm.sandbox import Sandbox
    from cwm.sandbox.checkers import world_model_checker
    from cwm.synthesis.render import first_failure_per_type, render_failures

    good = program("correct")
    line = '    row, col = int(action[2]), int(action[4])\n'
    assert good.count(line) == 1
    broken = good.replace(line, line + '    if action == "x(1,1)":\n        raise ValueError("centre taken")\n')
    with Sandbox() as box:
        contained = world_model_checker(train, sandbox=box)(broken)
    in_process = world_model_checker(train)(broken)
    texts = [render_failures(r, first_failure_per_type(r)) for r in (contained, in_process)]
    assert texts[0] == texts[1], texts
    assert 'File "<cwm_model>", line 42, in apply_action\n        raise ValueError("centre taken")' in texts[0]
    assert "ValueError: centre taken" in texts[0] and contained.pass_rate == in_process.pass_rate < 1.0


@pytest.mark.parametrize("source,error", [
    ("import os\n", "static: line 1: import of 'os' is not allowed"),
    ("def get_initial_state(:\n", "static: syntax error at line 1"),
    ("def get_initial_state():\n    return {}\n", "load: cwm_model: missing contract function(s): get_current_player"),
    ("raise ValueError('boom')\n", "load: cwm_model: running the module raised ValueError: boom"),
])
def test_a_refused_module_is_reported_the_same_in_the_sandbox_and_in_process(train: list, source: str,
                                                                               error: str) -> None:
    from cwm.sandbox import Sandbox
    from cwm.sandbox.checkers import world_model_checker

    with Sandbox() as box:
        contained = world_model_checker(train[:1], sandbox=box)(source)
    in_process = world_model_checker(train[:1])(source)
    assert contained.error == in_process.error and contained.error.startswith(error), (contained.error,
                                                                                     in_process.error)


def test_the_programs_of_one_reply_are_checked_in_one_batch_with_the_reports_each_gets_alone(tmp_path, monkeypatch):
    """A reply holding two whole programs: the loop checks both in one sandbox batch (``Sandbox.check_batch``),
    each program in a child of its own (different untrusted programs never share one), and every node's report
    is the one the program gets checked alone, in-process as in the sandbox."""
    from cwm.sandbox import Sandbox

    batches: list[int] = []
    real = Sandbox.check_batch

    def counted(self, jobs, **kw):
        batches.append(len(jobs))
        assert kw.get("one_child") is False
        return real(self, jobs, **kw)

    monkeypatch.setattr(Sandbox, "check_batch", counted)
    two = reply("01_initial_buggy") + "\n\n" + reply("03_refine_correct")
    contained = synthesize(tmp_path / "sandbox", ScriptedClient([two]), isolate=True)
    alone = synthesize(tmp_path / "in_process", ScriptedClient([two]), isolate=False)
    assert batches == [2]
    assert [n.source for n in contained.nodes] == [n.source for n in alone.nodes] and len(contained.nodes) == 2
    assert [n.pass_rate for n in contained.nodes] == [n.pass_rate for n in alone.nodes]
    assert contained.nodes[0].pass_rate < 1.0 and contained.solved
