"""Per-call time budgets for accepted models running in-process (the planning hot path).

In the main thread a ``SIGALRM`` interval timer interrupts a runaway call; in other threads a single
watchdog thread injects an exception into the calling thread. Either way the caller gets a
``ModelContractError`` naming the call and the budget instead of a hung search. Like any in-process
interrupt, it cannot stop a call stuck inside one long C operation (``10 ** 10 ** 8``); only the process
sandbox can.
"""

from __future__ import annotations

import ctypes
import heapq
import itertools
import signal
import threading
import time
from collections.abc import Callable
from typing import Any

from cwm.model import Guard
from cwm.types import ModelContractError


class _BudgetExceeded(BaseException):
    """Raised inside the runaway call; a BaseException so the model's ``except Exception`` does not eat it."""


def call_budget(seconds: float) -> Guard:
    """A ``cwm.model.Guard`` that limits every model call to ``seconds`` of wall-clock time.

    Args:
      seconds: the budget per call (> 0).

    Returns:
      ``guard(fn, *args)``: ``fn(*args)``, or ``ModelContractError`` when the call ran over budget.

    Raises:
      ValueError: ``seconds`` is not positive.
    """
    if not seconds > 0:
        raise ValueError(f"call_budget: seconds must be > 0, got {seconds!r}")

    def guard(fn: Callable[..., Any], *args: Any) -> Any:
        if threading.current_thread() is threading.main_thread():
            return _with_alarm(seconds, fn, args)
        return _WATCHDOG.run(seconds, fn, args)

    return guard


def _exceeded(fn: Callable[..., Any], seconds: float) -> ModelContractError:
    name = getattr(fn, "__name__", repr(fn))
    return ModelContractError(f"{name}(...) ran longer than its time budget of {seconds} s")


def _on_alarm(signum: int, frame: Any) -> None:
    raise _BudgetExceeded()


def _with_alarm(seconds: float, fn: Callable[..., Any], args: tuple[Any, ...]) -> Any:
    outer_left, _ = signal.getitimer(signal.ITIMER_REAL)
    if outer_left and outer_left <= seconds:  # an enclosing budget ends first: let it fire
        return fn(*args)
    previous = signal.signal(signal.SIGALRM, _on_alarm)
    start = time.monotonic()
    # The interval re-fires the alarm every 0.1 s, so a model that swallows one interrupt gets another.
    signal.setitimer(signal.ITIMER_REAL, seconds, 0.1)
    try:
        try:
            return fn(*args)
        finally:
            signal.setitimer(signal.ITIMER_REAL, 0)
            signal.signal(signal.SIGALRM, previous)
            if outer_left:  # re-arm the enclosing budget with what is left of it
                signal.setitimer(signal.ITIMER_REAL, max(outer_left - (time.monotonic() - start), 1e-3))
    except _BudgetExceeded:
        raise _exceeded(fn, seconds) from None


class _Watchdog:
    """One daemon thread that raises ``_BudgetExceeded`` in threads whose call passed its deadline."""

    def __init__(self) -> None:
        self._lock = threading.Condition()
        self._heap: list[tuple[float, int]] = []
        self._active: dict[int, tuple[int, bool]] = {}  # token -> (thread id, fired)
        self._tokens = itertools.count()
        self._thread: threading.Thread | None = None

    def run(self, seconds: float, fn: Callable[..., Any], args: tuple[Any, ...]) -> Any:
        token = self._register(seconds)
        try:
            try:
                result = fn(*args)
            finally:
                fired = self._unregister(token)
        except _BudgetExceeded:
            raise _exceeded(fn, seconds) from None
        if fired:
            raise _exceeded(fn, seconds)
        return result

    def _register(self, seconds: float) -> int:
        with self._lock:
            if self._thread is None:
                self._thread = threading.Thread(target=self._loop, name="cwm-call-budget", daemon=True)
                self._thread.start()
            token = next(self._tokens)
            self._active[token] = (threading.get_ident(), False)
            heapq.heappush(self._heap, (time.monotonic() + seconds, token))
            self._lock.notify()
            return token

    def _unregister(self, token: int) -> bool:
        with self._lock:
            tid, fired = self._active.pop(token)
            if fired:  # clear the exception if it is still pending in this thread
                ctypes.pythonapi.PyThreadState_SetAsyncExc(ctypes.c_ulong(tid), None)
            return fired

    def _loop(self) -> None:
        with self._lock:
            while True:
                now = time.monotonic()
                while self._heap and (self._heap[0][1] not in self._active or self._heap[0][0] <= now):
                    _, token = heapq.heappop(self._heap)
                    if token in self._active:
                        tid, _ = self._active[token]
                        self._active[token] = (tid, True)
                        ctypes.pythonapi.PyThreadState_SetAsyncExc(ctypes.c_ulong(tid),
                                                                   ctypes.py_object(_BudgetExceeded))
                self._lock.wait(self._heap[0][0] - now if self._heap else None)


_WATCHDOG = _Watchdog()
