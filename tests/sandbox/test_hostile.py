"""The adversarial corpus: every program under tests/data/hostile gets its exact verdict, in both isolation
modes, with the static gate on and (where the file says so) off, and leaves nothing behind."""

from __future__ import annotations

import dataclasses
import json
from dataclasses import dataclass
from pathlib import Path

import pytest

from cwm.sandbox import CALL_JOB, CHECK_JOB, BatchJob, JobResult, Sandbox, static_gate
from cwm.types import CheckReport, ModelLoadError

from .conftest import HOSTILE, REFERENCE_TTT, TEST_LIMITS, descendants, leftovers, markers


@dataclass(frozen=True)
class Case:
    name: str
    source: str
    job: str
    expect: str
    ungated: str
    header: dict[str, str]

    @classmethod
    def read(cls, path: Path) -> Case:
        source = path.read_text()
        header = {}
        for line in source.splitlines():
            if not line.startswith("# ") or ":" not in line:
                break
            key, _, value = line[2:].partition(":")
            header[key.strip()] = value.strip()
        return cls(path.stem, source, header["job"], header["expect"], header.get("ungated", ""), header)

    def verdict(self, key: str, mode: str) -> str:
        """The expected verdict; a file may give a different one per isolation mode (``ungated-bwrap:``)."""
        return self.header.get(f"{key}-{mode}", self.header.get(key, ""))


CASES = [Case.read(p) for p in sorted(HOSTILE.glob("*.py"))]
UNGATED = [c for c in CASES if c.ungated]


def run_case(sb: Sandbox, case: Case, *, gate: bool, trajectories: tuple) -> JobResult:
    # A file may raise the wall-clock limit (``# wall_s: 20``) so that a CPU-limit verdict cannot turn into
    # a wall-clock one on a loaded machine.
    limits = dataclasses.replace(TEST_LIMITS, wall_s=float(case.header.get("wall_s", TEST_LIMITS.wall_s)))
    if case.job == "check":
        return sb.run(CHECK_JOB, case.source, {"trajectories": list(trajectories)}, gate=gate, limits=limits)
    _, function = case.job.split()
    return sb.run(CALL_JOB, case.source, {"function": function}, gate=gate, limits=limits)


def assert_verdict(result: JobResult, expect: str) -> None:
    kind, _, text = expect.partition(": ")
    if kind == "ok":
        assert result.kind == "ok", result
        assert result.value == json.loads(text)
    elif kind == "fails":
        assert result.kind == "ok", result
        report = CheckReport.from_json(result.value)
        assert not report.all_passed
        assert any(text in f.render() for f in report.failures), report.summary()
    else:
        assert (result.kind, result.ok) == (kind, False), result
        assert text in result.error, result.error


def assert_clean(sb: Sandbox) -> None:
    assert markers() == [], "a hostile program wrote outside the sandbox"
    assert leftovers(sb.idle_processes) == set(), "a process was left behind"  # type: ignore[attr-defined]
    good = sb.run(CALL_JOB, REFERENCE_TTT, {"function": "get_initial_state"})
    assert good.ok and good.value == {"board": ["."] * 9, "player": 0}, good
    assert sb.restarts == 0 or "wall-clock" in good.error


def test_the_corpus_is_large_enough() -> None:
    assert len(CASES) >= 30
    assert len({c.name for c in CASES}) == len(CASES)


@pytest.mark.parametrize("case", CASES, ids=[c.name for c in CASES])
def test_hostile_program_gets_its_verdict(sandbox: Sandbox, case: Case, ttt_trajectories: tuple) -> None:
    result = run_case(sandbox, case, gate=True, trajectories=ttt_trajectories)
    assert_verdict(result, case.verdict("expect", sandbox.mode))
    assert_clean(sandbox)


@pytest.mark.parametrize("case", UNGATED, ids=[c.name for c in UNGATED])
def test_layers_behind_the_gate_hold(sandbox: Sandbox, case: Case, ttt_trajectories: tuple) -> None:
    """With the static gate switched off, the runtime layers alone still give a verdict and contain it."""
    result = run_case(sandbox, case, gate=False, trajectories=ttt_trajectories)
    assert_verdict(result, case.verdict("ungated", sandbox.mode))
    assert_clean(sandbox)


def batch_job(case: Case, *, gate: bool, trajectories: tuple) -> BatchJob:
    """``run_case``'s job, as one job of a batch."""
    limits = dataclasses.replace(TEST_LIMITS, wall_s=float(case.header.get("wall_s", TEST_LIMITS.wall_s)))
    if case.job == "check":
        return BatchJob(CHECK_JOB, case.source, {"trajectories": list(trajectories)}, limits, gate)
    return BatchJob(CALL_JOB, case.source, {"function": case.job.split()[1]}, limits, gate)


@pytest.mark.parametrize("gate", [True, False], ids=["gated", "ungated"])
def test_the_corpus_in_one_batch_gets_the_verdicts_each_program_gets_alone(ttt_trajectories: tuple, gate: bool) -> None:
    """Every hostile program in one batch (``Sandbox.run_batch``), each followed by the reference model: each
    program gets the verdict it gets in a child of its own, and none changes the reference model's verdict
    after it, the runtime layers alone holding the ones the gate would refuse (``ungated``)."""
    cases = CASES if gate else UNGATED
    good = BatchJob(CALL_JOB, REFERENCE_TTT, {"function": "get_initial_state"}, TEST_LIMITS)
    with Sandbox(limits=TEST_LIMITS, isolation="process") as sb:
        assert sb.mode == "process"  # starts the zygote
        sb.idle_processes = descendants()  # type: ignore[attr-defined]
        results = sb.run_batch([job for c in cases for job in (batch_job(c, gate=gate, trajectories=ttt_trajectories),
                                                                 good)])
        for case, result in zip(cases, results[::2]):
            assert_verdict(result, case.verdict("expect" if gate else "ungated", sb.mode))
        assert all(r.ok and r.value == {"board": ["."] * 9, "player": 0} for r in results[1::2])
        assert len(set(sb.batch_children)) < len(results)  # children were shared
        assert_clean(sb)


@pytest.mark.parametrize("case", [c for c in CASES if c.expect.startswith("static")],
                         ids=[c.name for c in CASES if c.expect.startswith("static")])
def test_in_process_gate_agrees(case: Case) -> None:
    with pytest.raises(ModelLoadError) as err:
        static_gate(case.source)
    assert case.expect.partition(": ")[2] in str(err.value)
