"""The sandbox's watch: CPU time decides, the wall-clock backstop grows as a child's CPU share falls, and a
child that blocks is ended by its sleep allowance. Real processes (a spinning and a sleeping child) are
watched, and the backstop is checked over a table of shares."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time

import pytest

from cwm.sandbox import watch as watch_module
from cwm.sandbox.watch import (
    MIN_SHARE,
    POLL_S,
    SLEEP_ALLOWANCE_S,
    Watch,
    backlog,
    cpu_and_state,
    tree_cpu,
    wall_backstop,
    wall_ceiling,
)
from cwm.sandbox.zygote import job_watch


@pytest.mark.parametrize(("cpu_used", "elapsed", "expected"), [
    (10.0, 10.0, 30.0),  # a full core: three times the budget's own wall time
    (1.0, 10.0, 300.0),  # a tenth of a core (load ~20 on two cores): the backstop grows tenfold
    (0.0, 10.0, 3 * 10.0 / MIN_SHARE),  # no CPU at all: the ceiling
    (20.0, 10.0, 30.0),  # two cores' worth (threads) counts as one core
], ids=["full-core", "tenth", "none", "threads"])
def test_the_backstop_is_three_budgets_at_the_observed_share(cpu_used: float, elapsed: float, expected: float) -> None:
    assert wall_backstop(10.0, floor=1.0, cpu_used=cpu_used, elapsed=elapsed) == pytest.approx(expected)


def test_the_backstop_is_never_shorter_than_its_floor_or_the_cpu_limit() -> None:
    assert wall_backstop(10.0, floor=500.0, cpu_used=10.0, elapsed=10.0) == 500.0
    assert wall_backstop(10.0, floor=0.5, cpu_used=10.0, elapsed=10.0) >= 10.0
    assert wall_ceiling(10.0, floor=0.5) == wall_backstop(10.0, floor=0.5, cpu_used=0.0, elapsed=1.0)


def _spawn(code: str) -> subprocess.Popen[bytes]:
    return subprocess.Popen([sys.executable, "-c", code])


def _watch_until_over(watch: Watch, limit_s: float) -> str | None:
    deadline = time.monotonic() + limit_s
    while time.monotonic() < deadline:
        over = watch.over()
        if over is not None:
            return over
        time.sleep(POLL_S)
    return None


def test_a_spinning_child_is_ended_for_its_cpu_time_not_its_wall_time() -> None:
    child = _spawn("while True:\n    pass\n")
    try:
        watch = Watch(child.pid, cpu_limit=0.3, kill_on_cpu=True, floor=0.05, sleep_allowance=0.5)
        assert _watch_until_over(watch, 120.0) == "cpu"
        assert cpu_and_state(child.pid)[0] - watch.cpu0 > 0.3  # it did use its budget before it was ended
    finally:
        child.send_signal(signal.SIGKILL)
        child.wait()


def test_a_sleeping_child_is_ended_by_its_sleep_allowance() -> None:
    child = _spawn("import time\ntime.sleep(600)\n")
    try:
        time.sleep(0.3)  # past the interpreter's start (which runs)
        watch = Watch(child.pid, cpu_limit=60.0, kill_on_cpu=True, floor=60.0, sleep_allowance=0.5)
        assert _watch_until_over(watch, 120.0) == "asleep"
        assert watch.asleep > 0.5
    finally:
        child.send_signal(signal.SIGKILL)
        child.wait()


def test_a_child_waiting_on_its_own_working_thread_is_not_asleep() -> None:
    """JAX's shape: the main thread blocks (state S) while another thread computes; the child's CPU time moves,
    so it is ended for its CPU time, not as asleep."""
    child = _spawn("import threading\nt = threading.Thread(target=lambda: [0 for _ in iter(int, 1)])\n"
                   "t.start()\nt.join()\n")
    try:
        time.sleep(0.3)
        watch = Watch(child.pid, cpu_limit=2.0, kill_on_cpu=True, floor=0.05, sleep_allowance=0.5)
        assert _watch_until_over(watch, 120.0) == "cpu"
        assert watch.asleep <= 0.5
    finally:
        child.send_signal(signal.SIGKILL)
        child.wait()


def _looks_until_over(watch: Watch, looks: int, fd: int | None = None) -> str | None:
    """Looks ``looks`` times in a row, as a reader does every POLL_S (each look that finds the child asleep
    counts POLL_S): what the verdict is does not depend on how long the looks take."""
    for _ in range(looks):
        over = watch.over(fd)
        if over is not None:
            return over
    return None


def test_a_child_waiting_for_the_disk_is_not_asleep(monkeypatch: pytest.MonkeyPatch) -> None:
    # state D: page-ins on a machine short of memory, not a child that stopped working
    monkeypatch.setattr(watch_module, "cpu_and_state", lambda pid: (0.0, "D"))
    watch = Watch(os.getpid(), cpu_limit=60.0, kill_on_cpu=True, floor=60.0, sleep_allowance=0.5)
    assert _looks_until_over(watch, 100) is None and watch.asleep == 0.0
    monkeypatch.setattr(watch_module, "cpu_and_state", lambda pid: (0.0, "S"))
    assert _looks_until_over(watch, 100) == "asleep"


def test_a_jobs_sleep_allowance_does_not_shrink_with_its_wall_s(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(watch_module, "cpu_and_state", lambda pid: (0.0, "S"))
    watch = job_watch(os.getpid(), {"wall_s": 0.5, "cpu_s": 30.0})
    looks = round(SLEEP_ALLOWANCE_S / POLL_S)
    assert _looks_until_over(watch, looks - 1) is None  # 0.5 s asleep and far more: not yet
    assert _looks_until_over(watch, 2) == "asleep"


def test_a_child_blocked_on_its_unread_answer_is_not_asleep() -> None:
    # the child writes 4 MB into its pipe and blocks once the pipe is full: it waits for the reader, which is
    # slow (on a busy machine, the zygote), not for anything of its own
    child = subprocess.Popen([sys.executable, "-c", "import os\nos.write(1, b'x' * (4 << 20))\n"],
                             stdout=subprocess.PIPE)
    fd = child.stdout.fileno()
    try:
        deadline = time.monotonic() + 120  # only a backstop for the child's start
        while not (backlog(fd) and cpu_and_state(child.pid)[1] == "S") and time.monotonic() < deadline:
            time.sleep(POLL_S)
        assert backlog(fd) and cpu_and_state(child.pid)[1] == "S"
        watch = Watch(child.pid, cpu_limit=60.0, kill_on_cpu=True, floor=60.0, sleep_allowance=0.5)
        assert _looks_until_over(watch, 100, fd) is None and watch.asleep == 0.0
        assert _looks_until_over(watch, 100) == "asleep"  # the same state, with no pipe to look at
    finally:
        child.kill()
        child.wait()
        child.stdout.close()


def test_a_gone_child_reads_as_no_cpu_and_no_state() -> None:
    child = _spawn("pass")
    child.wait()
    assert cpu_and_state(child.pid) == (0.0, "")
    assert cpu_and_state(os.getpid())[1] == "R"  # this process, reading its own stat, is running


def test_tree_cpu_counts_live_and_reaped_descendants() -> None:

    spin = "import time\nend = time.process_time() + 0.4\nwhile time.process_time() < end:\n    pass\n"
    start = tree_cpu()
    # a grandchild that spins 0.4 s of CPU and then waits: alive, not yet reaped, when it is read
    child = _spawn(f"import subprocess, sys\np = subprocess.Popen([sys.executable, '-c', {spin + 'time.sleep(60)'!r}])\n"
                   "p.wait()\n")
    try:
        deadline = time.monotonic() + 120
        while tree_cpu() - start < 0.4 and time.monotonic() < deadline:
            time.sleep(POLL_S)
        assert tree_cpu() - start >= 0.4
    finally:
        for pid in _descendants(child.pid):
            os.kill(pid, signal.SIGKILL)
        child.kill()
        child.wait()
    before = tree_cpu()
    _spawn(spin).wait()  # a child that ended and was reaped: in this process's children's times
    assert tree_cpu() - before >= 0.4


def _descendants(pid: int) -> list[int]:
    found = []
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            try:
                with open(f"/proc/{entry}/stat", "rb") as f:
                    if int(f.read().rsplit(b")", 1)[1].split()[1]) == pid:
                        found.append(int(entry))
            except OSError:
                continue
    return found


def test_the_tree_sampler_counts_a_grandchild_that_no_one_here_reaps() -> None:
    from cwm.sandbox.watch import TreeSampler

    # the grandchild spins 0.4 s of CPU; its parent waits for it, then ends it unreaped (as a sandbox's
    # namespace does): no reading of this process's reaped children could see that CPU
    grandchild = ("import time\nend = time.process_time() + 0.4\nwhile time.process_time() < end:\n    pass\n"
                  "print('spun', flush=True)\ntime.sleep(600)\n")
    parent = ("import os, signal, subprocess, sys, time\n"
              f"q = subprocess.Popen([sys.executable, '-c', {grandchild!r}], stdout=subprocess.PIPE)\n"
              "q.stdout.readline()\ntime.sleep(0.3)\nos.kill(q.pid, signal.SIGKILL)\nos._exit(0)\n")
    with TreeSampler(interval=0.05) as sampler:
        proc = _spawn(parent)
        _, _, usage = os.wait4(proc.pid, 0)  # the parent's own rusage: it and the children it reaped
        proc.returncode = 0
    assert sampler.cpu_s() >= 0.4
    # what reaped children's times hold: the grandchild is not there (read from the parent's rusage, not this
    # process's, into which any other child of this test process reaped meanwhile would add its time)
    assert usage.ru_utime + usage.ru_stime < 0.4
