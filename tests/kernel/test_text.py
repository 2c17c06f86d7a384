"""cwm.text.clean: untrusted text (a model's exception message, a forfeit reason) made safe to write and print,
and the check reports that carry such text through render, to_json and from_json."""

from __future__ import annotations

import json
import types
from pathlib import Path

import pytest

from cwm import checks
from cwm.games import trajectories
from cwm.sandbox import Sandbox
from cwm.text import clean, clean_json
from cwm.types import VALUE_LIMIT, CheckFailure, CheckReport, error_report

POISONED = Path(__file__).resolve().parents[1] / "data" / "planners" / "broken" / "poisoned_message.py"
RAW = "a\ud800b\x1b[31mred\x1b[0m\x00\x07\x7f\x9b\u2028\u202e\rend"


def _safe(text: str) -> bool:
    """No surrogate, control character, line separator or bidi control is left (newline and tab aside)."""
    return not any(0xD800 <= ord(c) <= 0xDFFF or (ord(c) < 0x20 and c not in "\n\t") or 0x7F <= ord(c) <= 0x9F
                   or c in "\u2028\u2029\u202a\u202b\u202c\u202d\u202e\u2066\u2067\u2068\u2069" for c in text)


def test_clean_neutralises_every_kind_of_hostile_character():
    out = clean(RAW)
    assert _safe(out) and "\n" not in out
    out.encode("utf-8")  # a lone surrogate would raise here
    assert out == "a\ufffdb\\x1b[31mred\\x1b[0m\\x00\\x07\\x7f\\x9b\\u2028\\u202e\\rend"


def test_multiline_keeps_lines_and_tabs_but_not_carriage_returns():
    out = clean("one\r\ntwo\tthree\rFORGED", multiline=True)
    assert out == "one\ntwo\tthree\\rFORGED"
    assert clean("one\ntwo") == "one\\ntwo"


@pytest.mark.parametrize("limit", [50, 2000])
def test_long_text_is_cut_to_the_limit_with_a_marker(limit):
    out = clean("x" * 10_000, limit=limit)
    assert len(out) <= limit and out.endswith("more characters cut]")
    kept = len(out) - len(out[out.index("..."):])
    assert f"[{10_000 - kept} more characters cut]" in out
    assert clean("short", limit=limit) == "short"


@pytest.mark.parametrize("text", [RAW, "x" * 5000, "plain", "ok\nlines\ttabs", "\\x1b already escaped"])
def test_cleaning_clean_text_changes_nothing(text):
    for multiline in (False, True):
        once = clean(text, multiline=multiline)
        assert clean(once, multiline=multiline) == once


def test_a_str_subclass_is_read_as_its_plain_string():
    class Liar(str):
        def __str__(self) -> str:
            raise RuntimeError("never called")

        def replace(self, *args: object) -> str:  # type: ignore[override]
            raise RuntimeError("never called")

    out = clean(Liar("bad\x1b"), multiline=True)
    assert type(out) is str and out == "bad\\x1b"


def test_clean_json_reaches_every_string_and_keeps_the_shape():
    value = {"k\x00": ["a\ud800", ("b\x1b",), 3, None, 1.5], "n": {"deep": "\u202e"}}
    out = clean_json(value)
    assert out == {"k\\x00": ["a\ufffd", ("b\\x1b",), 3, None, 1.5], "n": {"deep": "\\u202e"}}
    json.dumps(out, ensure_ascii=False).encode("utf-8")


# ---------------------------------------------------------------------------------------------------
# check reports built from a model whose exception message is poisoned


def _poisoned_module() -> types.ModuleType:
    module = types.ModuleType("poisoned")
    exec(compile(POISONED.read_text(encoding="utf-8"), str(POISONED), "exec"), module.__dict__)
    return module


def _assert_report_is_safe(report: CheckReport) -> None:
    assert report.failures, "the poisoned model must fail checks"
    traces = [f.traceback for f in report.failures if f.traceback]
    assert traces and all("\\x1b[2J" in t and "\\x00" in t and "\ufffd" in t for t in traces)
    assert _safe(report.summary()) and all(_safe(f.render()) for f in report.failures)
    text = json.dumps(report.to_json(), ensure_ascii=False)
    text.encode("utf-8")  # the run directory writes reports with ensure_ascii=False
    assert CheckReport.from_json(json.loads(text)) == report


def test_a_poisoned_exception_message_in_process_gives_a_safe_report():
    trajs = trajectories.collect("tic_tac_toe", 3, seed=0)
    _assert_report_is_safe(checks.run_checks(_poisoned_module(), trajs))


def test_a_poisoned_exception_message_in_the_sandbox_gives_a_safe_report():
    trajs = trajectories.collect("tic_tac_toe", 3, seed=0)
    box = Sandbox()
    try:
        report = box.check_world_model(POISONED.read_text(encoding="utf-8"), trajs)
    finally:
        box.close()
    _assert_report_is_safe(report)


def test_the_sandbox_verdict_of_a_poisoned_job_is_cleaned():
    from cwm.sandbox import CALL_JOB

    source = POISONED.read_text(encoding="utf-8")
    at_import = 'raise ValueError("bad \\ud800 \\x1b[2J\\x00")\n' + source
    state = {"board": ["x", "o", "x"] + ["."] * 6, "player": 1, "winner": None}
    box = Sandbox()
    try:
        raised = box.run(CALL_JOB, source, {"function": "apply_action", "args": [state, "o(1,1)"]})
        load = box.run(CALL_JOB, at_import, {"function": "get_initial_state", "args": []})
    finally:
        box.close()
    assert raised.kind == "error" and "ValueError: cell \ufffd gone\\x1b[2J" in raised.error and _safe(raised.error)
    assert load.kind == "load" and load.error.endswith("ValueError: bad \ufffd \\x1b[2J\\x00") and _safe(load.error)


def test_a_poisoned_report_read_back_from_disk_is_cleaned():
    # a report.json written before reports were cleaned (json.dumps escapes the surrogate, so it was writable)
    raw = {"by_type": {"transition": {"passed": 0, "total": 1}}, "transitions_passed": 0, "transitions_total": 1,
           "failures": [{"test_type": "transition", "trajectory": 0, "step": 2, "call": "apply_action\x1b[2J",
                         "expected": {"board": "x\x00"}, "got": ["\ud800"], "diff": "d\x1b[31m",
                         "traceback": "Traceback\n  ValueError: \x1b]0;title\x07", "history": ["x(0,0)\x00"]}],
           "error": "load: \ud800\x1b[2J"}
    report = CheckReport.from_json(json.loads(json.dumps(raw)))
    failure = report.failures[0]
    assert failure.call == "apply_action\\x1b[2J" and failure.got == ["\ufffd"] and failure.expected == {"board": "x\\x00"}
    assert failure.traceback == "Traceback\n  ValueError: \\x1b]0;title\\x07" and failure.history == ("x(0,0)\\x00",)
    assert report.error == "load: \ufffd\\x1b[2J"
    assert _safe(report.summary()) and _safe(failure.render())


def test_a_report_error_and_a_failure_are_cut_to_their_limits():
    assert len(error_report("e" * 100_000).error) <= 8000
    failure = CheckFailure("transition", 0, 0, "c" * 10_000, None, "g" * 10_000, "d" * 10_000, "t" * 100_000)
    assert len(failure.call) <= 2000 and len(failure.diff) <= 2000
    assert len(failure.traceback) <= 8000
    # a value is kept whole up to VALUE_LIMIT characters (a prompt shows it whole or leaves it out), then cut
    assert failure.got == "g" * 10_000
    # a string is cut at VALUE_LIMIT; a value whose text is over VALUE_CHARS is not kept, only its length
    huge = CheckFailure("transition", 0, 0, "c", "e" * 200_000, ["g" * 200_000], "d")
    assert huge.expected is None and huge.got is None
    assert [(field, length) for field, length, _ in huge.not_kept] == [("expected", VALUE_LIMIT + 2),
                                                                     ("got", VALUE_LIMIT + 4)]


def test_the_command_line_prints_a_poisoned_error_as_one_clean_line(tmp_path, capsys):
    from cwm.cli import main

    model = tmp_path / "m.py"
    model.write_text('raise ValueError("bad \\ud800 \\x1b[2J\\x1b[31mRED\\x00\\nFORGED")\n', encoding="utf-8")
    trajs = tmp_path / "t.jsonl"
    trajectories.save(trajs, trajectories.collect("tic_tac_toe", 1, seed=0))
    assert main(["check", str(model), "--game", "tic_tac_toe", "--trajectories", str(trajs)]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and _safe(err)
    assert err.endswith("bad \ufffd \\x1b[2J\\x1b[31mRED\\x00\\nFORGED\n")
