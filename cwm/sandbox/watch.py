"""When a sandboxed child has run too long: the CPU time it used decides, wall time is only a backstop.

A child (a check job, a planning worker's answer) is watched from outside, in ``/proc/<pid>/stat``, by the
zygote that forked it. It is killed when

- ``cpu``: it used more CPU time than its budget (and a margin): the verdict that counts;
- ``asleep``: it spent ``sleep_allowance`` seconds in all in an interruptible sleep (state ``S``: a CPU-bound
  job never sleeps; a child that blocks is stuck) without its CPU time moving between two looks (a
  multi-threaded child, JAX's, waits in its main thread while its other threads compute). Neither a child waiting for the disk (``D``: page-ins
  on a machine short of memory) nor one blocked writing its answer into a pipe that holds a backlog its
  reader has not read yet (the reader is the slow one) is asleep;
- ``wall``: its wall time passed the backstop ``wall_backstop``: at least the configured floor and the CPU
  budget, and ``BACKSTOP_FACTOR`` times what the CPU budget needs at the CPU share the child was observed to
  get so far. On a busy machine the child gets less of a core and the backstop grows with it, so load slows
  a verdict but does not change it; only a child that gets less than ``MIN_SHARE`` of a core for a long time
  (``wall_ceiling``) is ended by the wall clock.
"""

from __future__ import annotations

import fcntl
import os
import struct
import termios
import threading
import time
from collections.abc import Callable

POLL_S = 0.05  # how often the zygote looks at a working child
SLEEP_ALLOWANCE_S = 10.0  # seconds a child may spend asleep while its answer is awaited
BACKSTOP_FACTOR = 3.0  # wall backstop = this many times the wall time the CPU budget needs at the observed share
MIN_SHARE = 0.02  # the smallest CPU share the backstop adapts to (a fiftieth of a core)
_TICK = os.sysconf("SC_CLK_TCK")


def cpu_margin(budget: float) -> float:
    """CPU seconds past a budget before the zygote kills a child that did not stop itself."""
    return max(0.5, 0.05 * budget)


def wall_backstop(cpu_limit: float, *, floor: float, cpu_used: float, elapsed: float) -> float:
    """The wall-clock seconds after which a child that has used ``cpu_used`` CPU seconds in ``elapsed`` wall
    seconds is ended: never before ``floor`` or ``cpu_limit``, and ``BACKSTOP_FACTOR`` times
    ``cpu_limit / share`` where ``share`` is its observed CPU share (at least ``MIN_SHARE``)."""
    share = min(1.0, cpu_used / elapsed) if elapsed > 0 else 1.0
    return max(floor, cpu_limit, BACKSTOP_FACTOR * cpu_limit / max(share, MIN_SHARE))


def wall_ceiling(cpu_limit: float, *, floor: float) -> float:
    """The largest ``wall_backstop`` can be: how long a host waits for a child's answer at most."""
    return max(floor, cpu_limit, BACKSTOP_FACTOR * cpu_limit / MIN_SHARE)


def cpu_and_state(pid: int) -> tuple[float, str]:
    """CPU seconds used so far (user + system) and the scheduler state letter of ``pid`` (``""``: gone)."""
    try:
        with open(f"/proc/{pid}/stat", "rb") as f:
            fields = f.read().rsplit(b")", 1)[1].split()
    except OSError:
        return 0.0, ""
    return (int(fields[11]) + int(fields[12])) / _TICK, fields[0].decode()


def backlog(fd: int) -> bool:
    """Whether the pipe read through ``fd`` holds at least half its capacity unread: a writer blocked on it
    waits for its reader, not for anything of its own (``False`` when ``fd`` is no pipe)."""
    try:
        unread = struct.unpack("i", fcntl.ioctl(fd, termios.FIONREAD, b"\0\0\0\0"))[0]
        return 2 * unread >= fcntl.fcntl(fd, fcntl.F_GETPIPE_SZ)
    except OSError:
        return False


class Watch:
    """Watches one child from outside while its answer is awaited; ``over()`` says what ended it, if anything.

    Args:
      pid: the child.
      cpu_limit: the CPU seconds the child may use from now (what the backstop is derived from).
      kill_on_cpu: kill at ``cpu_limit`` plus ``cpu_margin`` (``False``: the kernel's ``RLIMIT_CPU`` or the
        child's own timer enforce it, and the limit only sizes the backstop).
      floor: the backstop is never shorter than this many wall seconds.
      sleep_allowance: seconds the child may spend asleep in all.
    """

    def __init__(self, pid: int, *, cpu_limit: float, kill_on_cpu: bool, floor: float, sleep_allowance: float):
        self.pid, self.cpu_limit, self.kill_on_cpu = pid, cpu_limit, kill_on_cpu
        self.floor, self.sleep_allowance = floor, sleep_allowance
        self.start = time.monotonic()
        self.cpu0 = self._last_cpu = cpu_and_state(pid)[0]
        self.asleep = 0.0
        self._next = self.start + POLL_S

    def due(self, fd: int | None = None) -> str | None:
        """``over(fd)`` when ``POLL_S`` has passed since the last look, else ``None``: a reader calls it after
        every wait or chunk, so a child that keeps writing is watched as closely as one that is silent."""
        now = time.monotonic()
        if now < self._next:
            return None
        self._next = now + POLL_S
        return self.over(fd)

    def over(self, fd: int | None = None) -> str | None:
        """``"cpu"``, ``"asleep"`` or ``"wall"`` when the child must be killed now, else ``None``; called about
        every ``POLL_S`` seconds (each call that finds the child asleep counts ``POLL_S`` asleep). ``fd``: the
        pipe the child answers through; a child blocked while it holds a ``backlog`` is not asleep."""
        cpu, state = cpu_and_state(self.pid)
        used = max(0.0, cpu - self.cpu0)
        if self.kill_on_cpu and used > self.cpu_limit + cpu_margin(self.cpu_limit):
            return "cpu"
        working, self._last_cpu = cpu > self._last_cpu, cpu
        if state == "S" and not working and (fd is None or not backlog(fd)):
            self.asleep += POLL_S
            if self.asleep > self.sleep_allowance:
                return "asleep"
        elapsed = time.monotonic() - self.start
        if elapsed > wall_backstop(self.cpu_limit, floor=self.floor, cpu_used=used, elapsed=elapsed):
            return "wall"
        return None


def tree_cpu(root: int | None = None, *, reaped: bool = True) -> float:
    """CPU seconds (user + system) used by process ``root`` (default: this one) and all its descendants: the
    live ones (read in ``/proc``: sandbox zygotes, their job children and planning workers, pool workers) and
    the ended ones their parents have reaped. The difference of two readings is what a stretch of work cost,
    wherever it ran (a process that ended unreaped in between, or was adopted elsewhere, is missed).

    Args:
      root: the process (default: this one).
      reaped: count the children of this process that it has reaped (``False``: only live descendants and
        what they reaped, so that a child of some earlier work reaped in between does not count).
    """
    root = os.getpid() if root is None else root
    total, todo = 0.0, _children(root)
    while todo:
        pid = todo.pop()
        total += _own_and_reaped(pid)
        todo.extend(_children(pid))
    if root == os.getpid():  # this process to the nanosecond, not in clock ticks
        t = os.times()
        return total + time.process_time() + (t.children_user + t.children_system if reaped else 0.0)
    return total + _own_and_reaped(root)


def _own_and_reaped(pid: int) -> float:
    try:
        with open(f"/proc/{pid}/stat", "rb") as f:
            fields = f.read().rsplit(b")", 1)[1].split()
    except OSError:  # ended meanwhile
        return 0.0
    return sum(int(x) for x in fields[11:15]) / _TICK  # utime, stime, cutime, cstime


def _children(pid: int) -> list[int]:
    """The live children of ``pid`` (of every thread of it)."""
    found: list[int] = []
    try:
        for tid in os.listdir(f"/proc/{pid}/task"):
            with open(f"/proc/{pid}/task/{tid}/children", "rb") as f:
                found.extend(int(c) for c in f.read().split())
    except OSError:  # ended meanwhile
        pass
    return found


class TreeSampler:
    """The CPU time a stretch of work used in this process and every process under it, sandbox children in
    namespaces included, whether or not anyone reaps them: a daemon thread reads each descendant's own CPU
    time (user + system, keyed by pid and start time) every ``interval`` seconds, and ``cpu_s()`` adds up what
    each process used while watched. A descendant's last ``interval`` of CPU before it ends is missed.

    Use as a context manager around the work; ``cpu_s()`` after it (or during it, for the part so far).
    """

    def __init__(self, interval: float = 0.1) -> None:
        self.interval = interval
        self._first: dict[tuple[int, bytes], float] = {}
        self._last: dict[tuple[int, bytes], float] = {}
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, name="cwm-cpu-sampler", daemon=True)
        self._self_cpu0 = 0.0

    def __enter__(self) -> TreeSampler:
        self._self_cpu0 = time.process_time()
        self._sample(before=True)
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._stop.set()
        self._thread.join()
        self._sample()

    def cpu_s(self) -> float:
        """CPU seconds used so far: this process, and each descendant from when it was first seen."""
        children = sum(last - self._first.get(key, 0.0) for key, last in list(self._last.items()))
        return time.process_time() - self._self_cpu0 + children

    def _run(self) -> None:
        while not self._stop.wait(self.interval):
            self._sample()

    def _sample(self, *, before: bool = False) -> None:
        todo = _children(os.getpid())
        while todo:
            pid = todo.pop()
            try:
                with open(f"/proc/{pid}/stat", "rb") as f:
                    fields = f.read().rsplit(b")", 1)[1].split()
            except OSError:  # ended meanwhile
                continue
            key = (pid, fields[19])  # the start time tells a reused pid apart
            own = (int(fields[11]) + int(fields[12])) / _TICK
            if before:
                self._first[key] = own  # what it had used before the work began
            self._last[key] = max(own, self._last.get(key, 0.0))
            todo.extend(_children(pid))


def cpu_per_call(fn: Callable[[], object], at_least_s: float = 0.2) -> float:
    """CPU seconds (``tree_cpu``: this process and its descendants) per call of ``fn``, called until the calls
    used ``at_least_s``: a sandboxed worker's CPU is read in clock ticks (10 ms), too coarse for one small
    search. For benchmarks."""
    calls, start = 0, tree_cpu()
    while calls == 0 or tree_cpu() - start < at_least_s:
        fn()
        calls += 1
    return (tree_cpu() - start) / calls
