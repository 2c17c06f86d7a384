"""The local process pool under a lazy source and an interrupt: a few jobs per worker are taken from the source
at a time (a billion-job generator holds no memory), a job that kills its worker is still found alone, and
closing the pool while jobs run ends their workers instead of waiting (a C++ search never sees a Ctrl-C) and
leaves no thread of the pool running; its workers leave SIGINT to the parent."""

from __future__ import annotations

import concurrent.futures.process as cfp
import itertools
import os
import signal
import threading
import time
from pathlib import Path

from cwm.executors import JobCrashed, ProcessExecutor
from cwm.executors.pools import IN_FLIGHT

BACKSTOP_S = 120.0  # a guard against a hang only (the machine may be busy)


def _job(item: object) -> object:
    if item == "pid":
        return os.getpid()
    if item == "sigint":
        return signal.getsignal(signal.SIGINT) == signal.SIG_IGN
    if item == "sleep":
        time.sleep(3600)
    if item == "die":
        os._exit(9)
    return item


def test_a_lazy_source_is_taken_a_few_jobs_per_worker_at_a_time():
    taken = itertools.count()
    source = (next(taken) for _ in itertools.repeat(None, 10**9))  # a billion jobs, made on demand
    ex = ProcessExecutor(2)
    try:
        results = ex.imap_unordered(_job, source)
        first = [next(results) for _ in range(5)]
        assert len(first) == 5
        assert next(taken) <= 5 + 2 * IN_FLIGHT + 1  # what was handed out, plus one window of in-flight jobs
        results.close()
    finally:
        ex.close()


def test_a_job_that_kills_its_worker_is_found_alone_and_the_rest_of_the_source_still_runs():
    ex = ProcessExecutor(2)
    try:
        out = list(ex.imap_unordered(_job, iter([1, 2, "die", 3, 4, 5, 6, 7])))
    finally:
        ex.close()
    crashed = [o for o in out if isinstance(o, JobCrashed)]
    assert [c.item for c in crashed] == ["die"]
    assert sorted(o for o in out if not isinstance(o, JobCrashed)) == [1, 2, 3, 4, 5, 6, 7]


def test_workers_ignore_sigint_and_closing_during_a_job_ends_its_worker():
    ex = ProcessExecutor(1)
    results = ex.imap_unordered(_job, iter(["sigint", "pid", "sleep"]))
    # Both finish before the third starts, but may be yielded in either order (unordered: on a busy machine the
    # parent may find both done at once).
    first = [next(results), next(results)]
    assert [r is True for r in first].count(True) == 1, first  # Ctrl-C is the parent's: it ends the workers
    (pid,) = [r for r in first if r is not True]
    closing = threading.Thread(target=ex.close)
    closing.start()  # the third job sleeps for an hour: the close must not wait for it
    closing.join(BACKSTOP_S)
    assert not closing.is_alive()
    assert not Path(f"/proc/{pid}").exists()  # killed and reaped
    # and the pool's manager thread has ended too: left running, it races the interpreter's exit handler for its
    # wake-up pipe, and a Ctrl-C's one line is followed by a "Bad file descriptor" traceback
    assert not [t for t in threading.enumerate() if isinstance(t, cfp._ExecutorManagerThread)]
