"""The sandbox's contract: correct models get the same report as in-process, verdicts name limits, the
zygote survives and restarts, secrets and files stay out of reach, and bwrap degrades with a warning."""

from __future__ import annotations

import json
import logging
import os
import signal
import subprocess
import sys
import threading
import time

import pytest

import cwm.sandbox.box as sandbox_module
from cwm import checks
from cwm.games import trajectories
from cwm.sandbox import (
    CALL_JOB,
    CHECK_JOB,
    RANDOM_PLAY_JOB,
    JobResult,
    Limits,
    Sandbox,
    SandboxError,
    load_source,
)
from cwm.types import CheckReport

from .conftest import DATA, REFERENCE_TTT, TEST_LIMITS, descendants, leftovers, make_sandbox, settle

LEGIT = '''
import dataclasses
import enum
import functools
import heapq
import re
from collections import namedtuple, deque
from numpy.random import default_rng
import numpy as np
import random

Point = namedtuple("Point", "row col")


class Mark(enum.Enum):
    X = "x"
    O = "o"


@dataclasses.dataclass(frozen=True)
class Cell:
    point: Point
    mark: Mark


class Helper:
    def __init__(self):
        self._cache = {}

    def square(self, n):
        self._cache[n] = n * n
        return self._cache[n]


@functools.lru_cache(maxsize=None)
def table(n):
    return tuple(range(n))


def get_initial_state():
    cell = Cell(Point(0, 1), Mark.X)
    heap = [3, 1, 2]
    heapq.heapify(heap)
    rng = random.Random(7)
    return {
        "cell": [cell.point.row, cell.point.col, cell.mark.value],
        "heap": heapq.heappop(heap),
        "digits": re.findall(r"\\d", "a1b2"),
        "rng": rng.randint(0, 10**6) == random.Random(7).randint(0, 10**6),
        "np": int(default_rng(3).integers(100)) == int(np.random.default_rng(3).integers(100)),
        "sum": float(np.arange(4).sum()),
        "square": Helper().square(4),
        "table": list(table(3)),
        "queue": list(deque([1, 2])),
        "text": f"{cell.mark.value}-{len(heap)}",
    }
'''


@pytest.mark.parametrize("game,fixture", [("tic_tac_toe", "tic_tac_toe_model.py"),
                                          ("leduc_poker", "leduc_poker_model.py")])
def test_correct_models_get_the_in_process_report(sandbox: Sandbox, game: str, fixture: str) -> None:
    source = (DATA / "reference" / fixture).read_text()
    trajs = tuple(trajectories.record(game, seed=s) for s in range(3))
    expected = checks.run_checks(load_source(source), trajs)
    report = sandbox.check_world_model(source, trajs)
    assert report == expected
    assert report.all_passed and report.executed > 100


def test_allowed_modules_work_inside(sandbox: Sandbox) -> None:
    result = sandbox.run(CALL_JOB, LEGIT, {"function": "get_initial_state"})
    assert result.kind == "ok", result.error
    assert result.value == {"cell": [0, 1, "x"], "heap": 1, "digits": ["1", "2"], "rng": True, "np": True,
                            "sum": 6.0, "square": 16, "table": [0, 1, 2], "queue": [1, 2], "text": "x-2"}


@pytest.mark.parametrize("source,prefix", [
    ("import os\n", "static: line 1: import of 'os'"),
    ("def get_initial_state(:\n", "static: syntax error at line 1"),
    ("x = 1 / 0\n", "load: cwm_model: running the module raised ZeroDivisionError"),
    ("def get_initial_state():\n    return {}\n", "load: cwm_model: missing contract function(s): get_current_player"),
], ids=["gate", "syntax", "import-time-error", "missing-functions"])
def test_check_world_model_reports_why_it_could_not_check(sandbox: Sandbox, source: str, prefix: str,
                                                          ttt_trajectories: tuple) -> None:
    report = sandbox.check_world_model(source, ttt_trajectories)
    assert report.error.startswith(prefix), report.error
    assert not report.all_passed and report.executed == 0


def test_a_hanging_candidate_fails_its_report_naming_the_limit(sandbox: Sandbox, ttt_trajectories: tuple) -> None:
    source = REFERENCE_TTT.replace("def get_rewards(state):", "def get_rewards(state):\n    while True:\n        pass")
    report = sandbox.check_world_model(source, ttt_trajectories)
    assert report.error == "timeout: get_rewards(...) ran longer than the per-call budget of 0.3 s"


def test_the_cpu_limit_kills_a_spinning_job_the_per_call_budget_allows_not_the_wall_clock(sandbox: Sandbox) -> None:
    # wall_s (0.5) is far shorter than the CPU the job may use (1 s): the wall clock is only a backstop, and
    # the job ends for its CPU time, however long that takes on this machine.
    source = "def f():\n    while True:\n        pass\n"
    limits = Limits(wall_s=0.5, cpu_s=1.0, memory_mb=256, per_call_s=30)
    result = sandbox.run(CALL_JOB, source, {"function": "f"}, limits=limits)
    assert result.kind == "timeout"
    assert result.error.startswith("the job used more than the CPU-time limit of 1.0 s"), result.error


def test_a_job_that_blocks_is_killed_when_asleep_for_its_allowance(sandbox: Sandbox) -> None:
    # Ungated (the gate refuses the way to ``os``): a child blocked reading a pipe nobody writes uses no CPU,
    # so neither the CPU limit nor the per-call budget (CPU time) would ever end it; the watch's asleep rule does.
    source = ("import random\n_os = random.Random.seed.__globals__['_os']\n\n"
              "def f():\n    r, w = _os.pipe()\n    _os.read(r, 1)\n")
    limits = Limits(wall_s=0.5, cpu_s=30, memory_mb=256, per_call_s=30)
    result = sandbox.run(CALL_JOB, source, {"function": "f"}, limits=limits, gate=False)
    # the allowance is 10 s whatever wall_s is (0.5 here): a small wall_s does not shorten it
    assert (result.kind, result.error) == ("timeout", "the job stopped working (asleep for 10 s) and was killed")


def test_secrets_never_reach_candidate_code(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("CWM_TEST_API_KEY", "sekrit-1")
    monkeypatch.setenv("GEMINI_API_KEY", "sekrit-2")
    monkeypatch.setenv("SOME_TOKEN", "sekrit-3")
    source = "import random\ndef f():\n    return dict(random.Random.seed.__globals__['_os'].environ)\n"
    for isolation in ("process", "bwrap"):
        with make_sandbox(isolation) as sb:
            env = sb.run(CALL_JOB, source, {"function": "f"}, gate=False)
        assert env.ok, env
        assert not [k for k in env.value if "KEY" in k or "TOKEN" in k or "SECRET" in k], env.value
        assert "sekrit" not in repr(env.value)


def test_bwrap_hides_the_filesystem() -> None:
    source = "import random\ndef f(path):\n    return random.Random.seed.__globals__['_os'].path.exists(path)\n"
    probes = ["/etc/passwd", str(DATA.parents[1] / "pyproject.toml"), str(DATA.parents[1] / "README.md"),
              str(DATA / "reference")]
    seen = {}
    for isolation in ("process", "bwrap"):
        with make_sandbox(isolation) as sb:
            seen[isolation] = [sb.run(CALL_JOB, source, {"function": "f", "args": [p]}, gate=False).value
                               for p in probes]
    assert seen["process"] == [True, True, True, True]
    assert seen["bwrap"] == [False, False, False, False]


def test_degrades_without_bwrap_with_one_warning(monkeypatch: pytest.MonkeyPatch,
                                                 caplog: pytest.LogCaptureFixture) -> None:
    monkeypatch.setattr(sandbox_module, "bwrap_available", lambda: False)
    monkeypatch.setattr(Sandbox, "_warned", False)
    monkeypatch.delenv("CWM_SANDBOX_ISOLATION", raising=False)
    with caplog.at_level(logging.WARNING, logger="cwm.sandbox"):
        for _ in range(2):
            with Sandbox(limits=TEST_LIMITS) as sb:
                assert sb.mode == "process"
                assert sb.run(CALL_JOB, REFERENCE_TTT, {"function": "get_initial_state"}).ok
    assert len([r for r in caplog.records if "bubblewrap" in r.getMessage()]) == 1
    with pytest.raises(SandboxError, match="bubblewrap"):
        Sandbox(isolation="bwrap").mode  # noqa: B018


def test_environment_variable_forces_the_degraded_path(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("CWM_SANDBOX_ISOLATION", "process")
    with Sandbox(limits=TEST_LIMITS) as sb:
        assert sb.mode == "process"


def test_a_dead_zygote_is_restarted(sandbox: Sandbox) -> None:
    assert sandbox.run(CALL_JOB, REFERENCE_TTT, {"function": "get_initial_state"}).ok
    zygote = sandbox._zygote
    assert zygote is not None
    os.killpg(zygote.proc.pid, signal.SIGKILL)
    zygote.proc.wait()
    before = sandbox.restarts
    result = sandbox.run(CALL_JOB, REFERENCE_TTT, {"function": "get_initial_state"})
    assert result.ok, result
    assert sandbox.restarts == before + 1
    sandbox.idle_processes = descendants()  # type: ignore[attr-defined]  # the new zygote


def test_frames_smuggled_into_the_zygotes_stream_do_not_become_verdicts(sandbox: Sandbox) -> None:
    """A candidate that got hold of the zygote's reply pipe (security review r3: poison.py) queued forged
    "passed" answers that the host took as the verdicts of the next jobs. Replies now echo the request's
    nonce; a mismatch restarts the zygote and the job runs again on the fresh one."""
    broken = "def get_initial_state():\n    return 1 // 0\n"
    assert sandbox.run(CALL_JOB, REFERENCE_TTT, {"function": "get_initial_state"}).ok
    zygote = sandbox._zygote
    assert zygote is not None and zygote.proc.stdout is not None
    forged = json.dumps({"kind": "ok", "value": {"forged": True}, "error": "", "nonce": "guess"}).encode()
    pipe = os.open(f"/proc/self/fd/{zygote.proc.stdout.fileno()}", os.O_WRONLY)  # the pipe's write end
    try:
        os.write(pipe, (len(forged).to_bytes(8, "big") + forged) * 3)
    finally:
        os.close(pipe)
    before = sandbox.restarts
    for _ in range(3):
        result = sandbox.run(CALL_JOB, broken, {"function": "get_initial_state"})
        assert (result.kind, result.ok) == ("error", False) and "ZeroDivisionError" in result.error, result
    assert sandbox.restarts == before + 1
    assert sandbox.run(CALL_JOB, REFERENCE_TTT, {"function": "get_initial_state"}).ok
    sandbox.idle_processes = descendants()  # type: ignore[attr-defined]  # the new zygote


def test_payload_is_sent_once_and_cached(sandbox: Sandbox, ttt_trajectories: tuple) -> None:
    first = sandbox.check_world_model(REFERENCE_TTT, ttt_trajectories)
    zygote = sandbox._zygote
    assert zygote is not None
    sent, memo = set(zygote.sent), sandbox._memo
    second = sandbox.check_world_model(REFERENCE_TTT, list(ttt_trajectories))  # a new list, same trajectories
    assert zygote.sent == sent and first == second
    assert sandbox._memo is memo  # not even pickled again
    third = sandbox.check_world_model(REFERENCE_TTT, ttt_trajectories[:1])
    assert len(zygote.sent) == len(sent) + 1 and third.transitions_total < first.transitions_total


def test_random_play_job_for_closed_deck(sandbox: Sandbox) -> None:
    ok = sandbox.run(RANDOM_PLAY_JOB, REFERENCE_TTT, {"num_games": 3, "seed": 1})
    assert ok.kind == "ok" and CheckReport.from_json(ok.value).all_passed
    endless = REFERENCE_TTT.replace("def get_current_player(state):", "def get_current_player(state):\n    return 0")
    stuck = sandbox.run(RANDOM_PLAY_JOB, endless, {"num_games": 1, "max_steps": 50})
    report = CheckReport.from_json(stuck.value)
    assert not report.all_passed and report.failures[0].test_type == "random_play"


def test_limits_must_be_positive() -> None:
    with pytest.raises(ValueError, match="Limits.wall_s must be > 0"):
        Limits(wall_s=0)


def test_an_evicted_payload_is_sent_again(sandbox: Sandbox) -> None:
    """The zygote keeps a few payloads; one it dropped is re-sent on demand, and no spare child leaks."""
    payloads = [{"function": "get_initial_state", "n": i} for i in range(6)]
    for p in payloads + payloads[:1]:
        result = sandbox.run(CALL_JOB, REFERENCE_TTT, p)
        assert result.ok, result
    assert leftovers(sandbox.idle_processes) == set()  # type: ignore[attr-defined]


def test_a_forked_copy_uses_its_own_zygote(sandbox: Sandbox) -> None:
    assert sandbox.run(CALL_JOB, REFERENCE_TTT, {"function": "get_initial_state"}).ok
    r, w = os.pipe()
    pid = os.fork()
    if pid == 0:  # a worker process forked from this one, with its copy of the sandbox
        try:
            ok = sandbox.run(CALL_JOB, REFERENCE_TTT, {"function": "get_initial_state"}).ok
            sandbox.close()
            os.write(w, b"1" if ok else b"0")
        finally:
            os._exit(0)
    os.close(w)
    assert os.read(r, 1) == b"1"
    os.close(r)
    os.waitpid(pid, 0)
    restarts = sandbox.restarts
    assert sandbox.run(CALL_JOB, REFERENCE_TTT, {"function": "get_initial_state"}).ok
    assert sandbox.restarts == restarts  # the original zygote is untouched


def test_unknown_job_is_an_error_not_a_hang(sandbox: Sandbox) -> None:
    result = sandbox.run("cwm.sandbox.jobs.check:no_such_job", REFERENCE_TTT, {})
    assert result.kind == "error" and "no_such_job" in result.error


@pytest.mark.parametrize("isolation", ["process", "bwrap"])
def test_close_leaves_no_process(isolation: str) -> None:
    before = descendants()
    sb = make_sandbox(isolation)
    assert sb.run(CALL_JOB, REFERENCE_TTT, {"function": "get_initial_state"}).ok
    assert sb._zygote is not None
    proc = sb._zygote.proc
    sb.close()
    assert proc.poll() is not None
    assert settle(before) == before


@pytest.mark.parametrize("isolation", ["process", "bwrap"])
def test_zygote_killed_mid_job_gives_a_crash_and_takes_the_child_with_it(isolation: str) -> None:
    before = descendants()
    limits = Limits(wall_s=20, cpu_s=20, memory_mb=256, per_call_s=20)
    with make_sandbox(isolation) as sb:
        assert sb.mode == isolation
        out: dict[str, JobResult] = {}
        worker = threading.Thread(target=lambda: out.update(r=sb.run(
            CALL_JOB, "def f():\n    while True:\n        pass\n", {"function": "f"}, limits=limits)))
        worker.start()
        time.sleep(0.5)
        assert sb._zygote is not None
        os.killpg(sb._zygote.proc.pid, signal.SIGKILL)
        worker.join(10)
        assert out["r"].kind == "crash" and "died during the job" in out["r"].error
        assert sb.run(CALL_JOB, REFERENCE_TTT, {"function": "get_initial_state"}).ok
        assert sb.restarts == 1
    assert settle(before) == before


def test_jobs_also_run_in_process() -> None:
    """The trusted jobs are plain functions: outside a sandbox child their guard is a direct call."""
    from cwm.sandbox.jobs import check as jobs

    module = load_source(REFERENCE_TTT)
    trajs = [trajectories.record("tic_tac_toe", seed=0)]
    assert jobs.check_world_model(module, {"trajectories": trajs})["error"] == ""
    assert CHECK_JOB.endswith(":check_world_model")


def test_bwrap_mode_tests_name_the_package_when_bwrap_is_unusable(monkeypatch: pytest.MonkeyPatch) -> None:
    """On a machine without bubblewrap the bwrap-mode cases fail (CI stays strict) and say how to fix it."""
    from . import conftest

    monkeypatch.setattr(conftest, "bwrap_available", lambda: False)
    with pytest.raises(pytest.fail.Exception, match="apt-get install bubblewrap"):
        make_sandbox("bwrap")


@pytest.mark.parametrize("isolation", ["process", "bwrap"])
def test_a_process_that_exits_without_closing_its_sandbox_leaves_no_folder(isolation, tmp_path):
    """Each zygote started in an empty folder of its own under the temporary directory; a driver that ended
    without ``close()`` (killed, or simply exiting) left one folder per sandbox behind, thousands a day."""
    make_sandbox(isolation).close()  # fails clearly where bwrap is unusable
    script = ("import os\nfrom cwm.sandbox import CALL_JOB, Sandbox\n"
              f"sb = Sandbox(isolation={isolation!r})\n"
              "assert sb.run(CALL_JOB, 'def f():\\n    return 1\\n', {'function': 'f'}).ok\n"
              "os._exit(0)\n")
    env = {**os.environ, "TMPDIR": str(tmp_path)}
    subprocess.run([sys.executable, "-c", script], env=env, check=True, timeout=120)
    assert not list(tmp_path.glob("cwm-sandbox-*"))
