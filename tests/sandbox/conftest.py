"""Fixtures for the sandbox tests: one sandbox per isolation mode, small limits, process and file accounting."""

from __future__ import annotations

import glob
import os
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from cwm.games import trajectories
from cwm.sandbox import Limits, Sandbox, bwrap_available

DATA = Path(__file__).resolve().parents[1] / "data"
HOSTILE = DATA / "hostile"
REFERENCE_TTT = (DATA / "reference" / "tic_tac_toe_model.py").read_text()
# Small limits keep the hostile suite fast: a runaway call costs 0.3 s, a CPU-bound C loop 1 s.
TEST_LIMITS = Limits(wall_s=5.0, cpu_s=1.0, memory_mb=256, per_call_s=0.3)
MARKERS = "/tmp/cwm-hostile-*"


def make_sandbox(isolation: str) -> Sandbox:
    if isolation == "bwrap" and not bwrap_available():
        pytest.fail("bubblewrap (bwrap) is not usable here, and these tests check the sandbox inside it: "
                    "install it with `apt-get install bubblewrap` (or run .ci/system-packages.sh); if it is "
                    "installed, this machine does not allow unprivileged user namespaces")
    return Sandbox(limits=TEST_LIMITS, isolation=isolation)  # type: ignore[arg-type]


@pytest.fixture(scope="module", params=["process", "bwrap"])
def sandbox(request: pytest.FixtureRequest) -> Iterator[Sandbox]:
    sb = make_sandbox(request.param)
    assert sb.mode == request.param  # starts the zygote
    sb.idle_processes = descendants()  # type: ignore[attr-defined]  # the zygote (and bwrap) with no job
    yield sb
    sb.close()


@pytest.fixture(scope="session")
def ttt_trajectories() -> tuple:
    return tuple(trajectories.record("tic_tac_toe", seed=s) for s in range(2))


def proc_stat(pid: int) -> list[str]:
    """Fields of /proc/PID/stat after the command name: state, ppid, ... (empty if the process is gone)."""
    try:
        return Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    except OSError:
        return []


def descendants(pid: int | None = None) -> set[int]:
    """Every live (non-zombie) descendant of ``pid`` (default: this process), from /proc."""
    children: dict[int, list[int]] = {}
    for stat in glob.glob("/proc/[0-9]*/stat"):
        fields = proc_stat(int(stat.split("/")[2]))
        if fields and fields[0] != "Z":
            children.setdefault(int(fields[1]), []).append(int(stat.split("/")[2]))
    out, todo = set(), [pid or os.getpid()]
    while todo:
        for c in children.get(todo.pop(), []):
            out.add(c)
            todo.append(c)
    return out


def settle(expected: set[int], timeout: float = 3.0) -> set[int]:
    """Waits until the descendants are ``expected`` again (a child is reaped just after its verdict)."""
    deadline = time.monotonic() + timeout
    while True:
        now = descendants()
        if now == expected or time.monotonic() > deadline:
            return now
        time.sleep(0.01)


def leftovers(idle: set[int], timeout: float = 3.0) -> set[int]:
    """Processes beyond the idle zygote once the last job's child is gone, apart from the one spare child
    the zygote forks ahead of the next job (a child of the zygote, asleep waiting for its request)."""
    deadline = time.monotonic() + timeout
    while True:
        extra = descendants() - idle
        spares = {p for p in extra if (f := proc_stat(p)) and f[0] == "S" and int(f[1]) in idle}
        rest = extra - set(sorted(spares)[:1])
        if not rest or time.monotonic() > deadline:
            return rest
        time.sleep(0.01)


def markers() -> list[str]:
    return glob.glob(MARKERS)
