"""What a verdict is made of cannot be changed by the model it judges: the tamper check sees patched classes,
reports and verdicts are serialised through functions bound at import, and only child_main writes a verdict."""

from __future__ import annotations

import dataclasses
import json
import os
import random

import pytest

from cwm.checks.report import Tally
from cwm.games import trajectories
from cwm.sandbox import child, load_source, tamper
from cwm.sandbox.jobs import check as jobs
from cwm.types import CheckReport

from .conftest import REFERENCE_TTT

BROKEN_TTT = REFERENCE_TTT.replace('return [1.0, -1.0]', 'return [0.5, -1.0]')


@pytest.fixture(scope="module")
def payload() -> dict[str, object]:
    return {"trajectories": [trajectories.record("tic_tac_toe", seed=s) for s in range(2)]}


def test_a_patched_class_attribute_is_tampering(monkeypatch: pytest.MonkeyPatch) -> None:
    before = tamper.snapshot()
    monkeypatch.setattr(CheckReport, "to_json", lambda self: {})
    assert tamper.tampering(before) == "tampering: the model changed the class attribute cwm.types.CheckReport.to_json"


def test_an_added_class_attribute_is_tampering(monkeypatch: pytest.MonkeyPatch) -> None:
    before = tamper.snapshot()
    monkeypatch.setattr(Tally, "extra", 1, raising=False)
    assert tamper.tampering(before) == "tampering: the model changed the class attribute cwm.checks.report.Tally.extra"


def test_the_modules_the_harness_relies_on_are_watched(monkeypatch: pytest.MonkeyPatch) -> None:
    before = tamper.snapshot()
    monkeypatch.setattr(dataclasses, "asdict", lambda obj: {})
    assert tamper.tampering(before) == "tampering: the model changed dataclasses.asdict"


def test_an_untouched_harness_is_not_tampering(payload: dict[str, object]) -> None:
    before = tamper.snapshot()
    jobs.check_world_model(load_source(BROKEN_TTT), payload)
    assert tamper.tampering(dict(before, random=random.getstate())) == ""


def test_reports_are_serialised_as_to_json_does(payload: dict[str, object]) -> None:
    value = jobs.check_world_model(load_source(BROKEN_TTT), payload)
    report = CheckReport.from_json(value)
    assert report.failures and json.dumps(value) == json.dumps(report.to_json())


def test_a_patched_report_class_or_asdict_does_not_change_the_report(monkeypatch: pytest.MonkeyPatch,
                                                                      payload: dict[str, object]) -> None:
    honest = jobs.check_world_model(load_source(BROKEN_TTT), payload)
    forged = {"by_type": {}, "transitions_passed": 1, "transitions_total": 1, "failures": [], "error": ""}
    monkeypatch.setattr(CheckReport, "to_json", lambda self: forged)
    monkeypatch.setattr(dataclasses, "asdict", lambda obj, **kw: {"passed": 1, "total": 1})
    assert jobs.check_world_model(load_source(BROKEN_TTT), payload) == honest


def test_the_verdict_encoder_ignores_a_patched_encoder_class(monkeypatch: pytest.MonkeyPatch) -> None:
    message = {"kind": "ok", "value": [1, "a"], "error": "", "gate_passed": True}
    monkeypatch.setattr(json.JSONEncoder, "iterencode", lambda self, o, _one_shot=False: ['{"kind": "forged"}'])
    assert child._ENCODE(message) == '{"kind": "ok", "value": [1, "a"], "error": "", "gate_passed": true}'
    with pytest.raises(ValueError, match="Out of range float"):
        child._ENCODE(float("nan"))


def _written_by(caller: str) -> dict[str, object]:
    """The message an emitter writes when ``caller`` calls it: ``maker`` (the function that made it) or
    ``other`` (code that found it), in a forked child."""
    read, write = os.pipe()
    pid = os.fork()
    if pid == 0:
        try:
            os.close(read)
            emit = child._emitter(write, b"s" * 32)
            if caller == "maker":
                emit("ok", {"n": 1}, "", True)
            else:
                (lambda: emit("ok", {"n": 1}, "", True))()
            os.write(write, b"returned")
        finally:
            os._exit(0)
    os.close(write)
    data = b""
    while chunk := os.read(read, 1 << 16):
        data += chunk
    os.close(read)
    os.waitpid(pid, 0)
    assert data.startswith(b"s" * 32)
    size = int.from_bytes(data[32:40], "big")
    return {"message": json.loads(data[40:40 + size]), "after": data[40 + size:].decode()}


def test_only_the_maker_of_the_verdict_writer_can_write_a_verdict() -> None:
    assert _written_by("maker") == {"message": {"kind": "ok", "value": {"n": 1}, "error": "", "gate_passed": True},
                                    "after": "returned"}
    forged = _written_by("other")
    assert forged["message"]["kind"] == "error" and "verdict writer itself" in forged["message"]["error"]
    assert forged["after"] == ""  # the process ended there


def _exit_status_of(body) -> int:  # noqa: ANN001
    pid = os.fork()
    if pid == 0:
        child.forked(body)
    return os.waitpid(pid, 0)[1]


def _raise(error: BaseException):  # noqa: ANN202
    def body() -> None:
        raise error
    return body


def test_a_child_that_runs_out_of_memory_where_it_writes_no_verdict_is_a_memory_verdict() -> None:
    """The memory limit can be reached outside a guarded model call (a planning worker reading its next message
    or writing an answer, with a model's caches grown over a match): the child exits MEMORY_EXIT and the
    parent's verdict names the limit, where it used to read 'exited with status 70' (a crash)."""
    from cwm.sandbox import worker, zygote

    limits = {"memory_mb": 2048, "cpu_s": 60, "wall_s": 60, "per_call_s": 10}
    memory = _exit_status_of(_raise(MemoryError()))
    assert os.waitstatus_to_exitcode(memory) == child.MEMORY_EXIT
    assert os.waitstatus_to_exitcode(_exit_status_of(_raise(ValueError("x")))) == child.CRASH_EXIT
    assert os.waitstatus_to_exitcode(_exit_status_of(lambda: None)) == child.CRASH_EXIT  # no verdict written
    session = worker.answer_verdict("eof", b"", memory, budget=1.0, limits=limits)
    job = zygote._verdict("eof", memory, {"limits": limits})
    for verdict in (session, job):
        assert verdict["kind"] == "memory" and "memory limit of 2048 MB" in verdict["error"], verdict
    crashed = worker.answer_verdict("eof", b"", _exit_status_of(_raise(ValueError("x"))), budget=1.0, limits=limits)
    assert crashed["kind"] == "crash" and "status 70" in crashed["error"]
