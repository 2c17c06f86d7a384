"""Where independent jobs run: in this process, on a local process pool (the default), or on a Ray cluster.

Every executor has one method, ``imap_unordered(fn, items)``, yielding results as jobs finish, so the
caller can save each one at once; nothing else differs between them. ``fn`` must be a picklable
top-level function and the items picklable (specs, not live objects).
"""

from __future__ import annotations

import concurrent.futures as cf
import contextlib
import itertools
import os
import signal
import socket
import sys
import threading
import urllib.parse
from collections.abc import Callable, Generator, Iterable, Iterator
from concurrent.futures.process import BrokenProcessPool
from pathlib import Path
from typing import Any, Protocol

from cwm.games.views import CHOSEN_VIEWS_ENV
from cwm.sandbox.box import warn_if_without_bwrap
from cwm.sandbox.layers import die_with_parent
from cwm.types import CwmError


class ExecutorError(CwmError, ValueError):
    """An executor spec that does not parse, or a backend (Ray) that is not installed or not reachable."""


class Executor(Protocol):
    """Runs ``fn`` over items and yields each result as soon as its job ends (any order)."""

    name: str

    def imap_unordered(self, fn: Callable[[Any], Any], items: Iterable[Any]) -> Iterator[Any]: ...

    def close(self) -> None: ...


class InlineExecutor:
    """Runs jobs one after another in this process (debugging, tests, a single core)."""

    name = "inline"

    def imap_unordered(self, fn: Callable[[Any], Any], items: Iterable[Any]) -> Iterator[Any]:
        for item in items:
            yield fn(item)

    def close(self) -> None:
        pass


class JobCrashed(CwmError):
    """A job whose worker process died under it, alone (so it, not a neighbour, killed the process)."""

    def __init__(self, item: Any, message: str):
        super().__init__(message)
        self.item = item


class ProcessExecutor:
    """A local process pool that survives a job killing its worker process.

    When the pool breaks (a worker died: a segfault, the kernel's OOM killer), the jobs that were in flight
    run again one by one in a fresh one-worker pool, so the one that kills its process alone is found; it is
    yielded as a ``JobCrashed`` (not raised) and every other job's result still comes back.

    Args:
      workers: pool size (default: the machine's CPU count).
    """

    name = "local"

    def __init__(self, workers: int | None = None):
        self.workers = workers or os.cpu_count() or 1
        self._pool: cf.ProcessPoolExecutor | None = None
        self._futures: dict[cf.Future[Any], Any] = {}

    def imap_unordered(self, fn: Callable[[Any], Any], items: Iterable[Any]) -> Iterator[Any]:
        source = iter(items)
        while True:
            broken = yield from self._run(fn, source, self.workers)
            if not broken:  # the source is used up
                return
            for item in broken:  # alone, in a fresh pool: a job that breaks it again is the one that kills
                again = yield from self._run(fn, iter([item]), 1)
                if again:
                    yield JobCrashed(item, "the job's worker process died (a signal or the memory limit) twice, "
                                           "the second time running alone")

    def _run(self, fn: Callable[[Any], Any], source: Iterator[Any], workers: int) -> Generator[Any, None, list[Any]]:
        """Yields results as they come, with at most ``IN_FLIGHT`` jobs per worker submitted at a time (so a
        long lazy ``source`` is never held whole); stops at the end of ``source`` or when the pool breaks, and
        returns the items whose future failed because the pool broke."""
        if self._pool is None or workers != self.workers:
            self._close_pool()

            warn_if_without_bwrap()  # once here, not once per worker inside the caller's progress bar
            # workers die with this process: a SIGKILLed run leaves no worker (and no sandbox zygote) behind
            self._pool = cf.ProcessPoolExecutor(max_workers=workers, initializer=_worker_start)
        futures: dict[cf.Future[Any], Any] = {}
        self._futures = futures
        broken: list[Any] = []
        try:
            broken += self._fill(fn, source, futures, workers * IN_FLIGHT)
            while futures:
                done, _ = cf.wait(futures, return_when=cf.FIRST_COMPLETED)
                for future in done:
                    item = futures.pop(future)
                    try:
                        result = future.result()
                    except BrokenProcessPool:
                        broken.append(item)
                        continue
                    yield result
                if not broken:
                    broken += self._fill(fn, source, futures, workers * IN_FLIGHT)
        finally:
            for future in futures:
                future.cancel()
        if broken or workers != self.workers:
            self._close_pool()
        return broken

    def _fill(self, fn: Callable[[Any], Any], source: Iterator[Any], futures: dict[cf.Future[Any], Any],
              size: int) -> list[Any]:
        """Submits items of ``source`` until ``size`` are in flight; returns ``[item]`` if the pool broke."""
        assert self._pool is not None
        while len(futures) < size:
            item = next(source, _END)
            if item is _END:
                break
            try:
                futures[self._pool.submit(fn, item)] = item
            except BrokenProcessPool:
                return [item]
        return []

    def _close_pool(self) -> None:
        pool, self._pool = self._pool, None
        if pool is not None:
            manager = getattr(pool, "_executor_manager_thread", None)
            pool.shutdown(wait=False, cancel_futures=True)
            _join_manager(manager)

    def close(self) -> None:
        """Ends the pool. Jobs still running (an interrupt or an error left the caller) are ended at once, not
        waited for: their results could no longer be saved, and a search in C++ would not see a Ctrl-C."""
        pool, self._pool = self._pool, None
        if pool is None:
            return
        busy = any(not f.done() for f in self._futures)
        workers = list((getattr(pool, "_processes", None) or {}).values()) if busy else []
        manager = getattr(pool, "_executor_manager_thread", None)
        pool.shutdown(wait=not busy, cancel_futures=True)
        for process in workers:
            with contextlib.suppress(OSError, ValueError):
                process.kill()
        for process in workers:
            process.join()
        _join_manager(manager)


IN_FLIGHT = 4  # jobs submitted per worker at a time (one running, the rest queued so that no worker waits)
_END = object()
_MANAGER_BACKSTOP_S = 60.0  # a guard against a hang only: the thread ends once its workers have


def _join_manager(manager: threading.Thread | None) -> None:
    """Waits for a closed pool's manager thread (it ends once the pool's workers have). Left running, it closes
    its wake-up pipe while the interpreter's exit handler for process pools writes to it: on Python 3.11 that
    race prints an ``OSError: [Errno 9] Bad file descriptor`` traceback after a Ctrl-C's one line."""
    if manager is not None and manager is not threading.current_thread():
        manager.join(_MANAGER_BACKSTOP_S)


def _worker_start() -> None:
    """A pool worker: dies with this process, and leaves Ctrl-C to it (the parent ends its workers, so an
    interrupt reaches no job half done, and no worker prints a traceback of its own)."""
    die_with_parent()
    signal.signal(signal.SIGINT, signal.SIG_IGN)


class RayExecutor:
    """Jobs as Ray tasks, on a running cluster (``address``) or a local one started here.

    Ray is an optional extra (``pip install '.[ray]'`` in the cwm checkout). Each job's workers get this
    checkout and the folder of the job function's top-level package on their ``PYTHONPATH`` (so the
    experiment scripts' jobs import there too); a cluster on other machines needs cwm installed (or the
    checkout at the same path) on its nodes.

    Jobs are spread over the cluster's nodes (Ray's ``SPREAD`` strategy) rather than packed onto the
    driver's node first: each is a CPU-bound match or synthesis, so a node per job is what helps.

    An explicit ``host:port`` or ``ray://host:port`` is probed over TCP before ``ray.init``, because Ray
    keeps retrying an address where nothing listens for minutes instead of failing.

    Args:
      address: a cluster address (``host:6379``, ``ray://host:10001``, ``auto``); ``None`` starts a local
        cluster unless Ray is already initialised in this process.
      num_cpus: CPUs of a local cluster started here (default: all).
      connect_timeout_s: seconds to wait for the cluster at an explicit ``address`` to accept a connection
        (default 5).

    Raises:
      ExecutorError: Ray not installed, a malformed ``address`` or ``connect_timeout_s`` (checked before any
        network attempt), nothing listening at ``address`` within ``connect_timeout_s``, or ``ray.init``
        failing.
    """

    name = "ray"

    def __init__(self, address: str | None = None, *, num_cpus: int | None = None,
                 connect_timeout_s: float = 5.0):
        if not connect_timeout_s > 0:
            raise ExecutorError(f"connect_timeout_s must be > 0 seconds (got {connect_timeout_s})")
        endpoint = _ray_endpoint(address) if address is not None else None
        try:
            import ray
        except ImportError as e:
            raise ExecutorError("--executor ray needs Ray: pip install '.[ray]' in the cwm checkout (or pip install ray)") from e
        self._ray = ray
        if not ray.is_initialized():
            if address is not None and endpoint is not None:
                _probe(endpoint, address, connect_timeout_s)
            try:
                ray.init(address=address, num_cpus=num_cpus if address is None else None,
                         runtime_env={"env_vars": _worker_env(_import_path())}, log_to_driver=False)
            except (ConnectionError, RuntimeError, ValueError) as e:
                where = f"the Ray cluster at {address}" if address else "a local Ray cluster"
                raise ExecutorError(f"could not start or reach {where}: {e}") from e

    def imap_unordered(self, fn: Callable[[Any], Any], items: Iterable[Any]) -> Iterator[Any]:
        ray = self._ray
        remote = ray.remote(fn).options(scheduling_strategy="SPREAD",
                                        runtime_env={"env_vars": _worker_env(_import_path(fn))})
        # tasks submitted at a time: enough to keep every core of the cluster busy, never a lazy source whole
        window = IN_FLIGHT * max(1, int(ray.cluster_resources().get("CPU", 1)))
        source = iter(items)
        pending = [remote.remote(item) for item in itertools.islice(source, window)]
        try:
            while pending:
                done, pending = ray.wait(pending, num_returns=1)
                pending += [remote.remote(item) for item in itertools.islice(source, 1)]
                yield ray.get(done[0])
        finally:
            for ref in pending:
                ray.cancel(ref)

    def close(self) -> None:
        pass  # the cluster outlives the run; callers that started it may call ray.shutdown()


def _worker_env(import_path: str) -> dict[str, str]:
    """The environment a Ray worker is given: the import path, and the observation views chosen for module
    games here (``cwm.games.views.CHOSEN_VIEWS_ENV``), which a local worker inherits."""
    chosen = os.environ.get(CHOSEN_VIEWS_ENV)
    return {"PYTHONPATH": import_path} | ({CHOSEN_VIEWS_ENV: chosen} if chosen else {})


def _import_path(fn: Callable[[Any], Any] | None = None) -> str:
    """The ``PYTHONPATH`` of Ray's workers: this checkout, the folder above ``fn``'s top-level package (an
    experiment script's ``experiments``, which is not installed), then this process's own ``PYTHONPATH``."""
    roots = [str(Path(__file__).resolve().parents[2])]  # the folder holding the cwm package
    top = sys.modules.get(fn.__module__.partition(".")[0]) if fn is not None else None
    where = getattr(top, "__file__", None)
    if where:  # the folder above the outermost package holding it (a script run as __main__ too)
        folder = Path(where).resolve().parent
        while (folder / "__init__.py").is_file():
            folder = folder.parent
        roots.append(str(folder))
    return os.pathsep.join(dict.fromkeys(p for p in (*roots, os.environ.get("PYTHONPATH", "")) if p))


def _ray_endpoint(address: str) -> tuple[str, int] | None:
    """The ``(host, port)`` to probe for an explicit Ray address; ``None`` for Ray's own ``auto`` and ``local``.

    Raises:
      ExecutorError: an address that is not ``host:port``, ``ray://host:port``, ``auto`` or ``local``.
    """
    if address in ("auto", "local"):  # Ray's own: auto fails at once without a local cluster, local starts one
        return None
    netloc = address.removeprefix("ray://")
    parts = urllib.parse.urlsplit("//" + netloc)
    try:
        port = parts.port
    except ValueError:  # not a number, or out of range
        port = None
    malformed = parts.netloc != netloc or parts.username is not None or any(c.isspace() for c in netloc)
    if malformed or not parts.hostname or not port:
        raise ExecutorError(f"Ray cluster address {address!r} is not host:port, ray://host:port, auto or local")
    return parts.hostname, port


def _probe(endpoint: tuple[str, int], address: str, timeout_s: float) -> None:
    """Raises ExecutorError unless something at ``endpoint`` accepts a TCP connection within ``timeout_s``."""
    host, port = endpoint
    try:
        socket.create_connection((host, port), timeout=timeout_s).close()
    except OSError as e:  # refused, timed out, unknown host, no route
        raise ExecutorError(f"could not reach the Ray cluster at {address}: connecting to {host}:{port} "
                            f"failed ({str(e) or type(e).__name__}; waited up to {timeout_s:g} s)") from e


def worker_place() -> dict[str, str | int]:
    """Where the calling job runs: ``host`` name, process ``pid`` and, inside a Ray task, the Ray ``node`` id.

    A match records it in its transcript, so a run on a cluster shows which node played what.
    """
    place: dict[str, str | int] = {"host": socket.gethostname(), "pid": os.getpid()}
    ray = sys.modules.get("ray")  # imported only where Ray runs this job: never import it here
    if ray is not None and ray.is_initialized():
        place["node"] = str(ray.get_runtime_context().get_node_id())
    return place


def make_executor(spec: str) -> Executor:
    """An executor from ``inline``, ``local``, ``local:N`` (N workers), ``ray`` or ``ray:ADDRESS``.

    Raises:
      ExecutorError: an unknown spec, a bad worker count, Ray missing, or a Ray address that is malformed or
        where nothing listens.
    """
    kind, _, arg = spec.partition(":")
    if kind == "inline" and not arg:
        return InlineExecutor()
    if kind == "local":
        if arg and not arg.isdigit():
            raise ExecutorError(f"executor {spec!r}: local:N needs a number of workers, got {arg!r}")
        return ProcessExecutor(int(arg) if arg else None)
    if kind == "ray":
        return RayExecutor(arg or None)
    raise ExecutorError(f"unknown executor {spec!r}; expected inline, local, local:N, ray or ray:ADDRESS")
