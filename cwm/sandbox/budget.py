"""Per-call time budgets for accepted models running in-process (the planning hot path).

A budget is CPU time: the CPU clock of the thread that makes the call (``pthread_getcpuclockid``), so a
busy machine slows a call without failing it. One watchdog thread polls every ``POLL_S`` seconds, reads the
CPU clock of each thread inside a guarded call, and raises an exception into a thread whose call has used its
budget (``PyThreadState_SetAsyncExc``), again at every poll if the model swallows it. A call that stops
using CPU (blocked) is ended at a wall-clock backstop: never before ``BACKSTOP_FLOOR_S`` or the budget, and
past that at ``cwm.sandbox.watch.wall_backstop`` for the CPU share the call's thread was observed to get,
so a thread slowed by a busy machine or waiting for the GIL is not cut short. The caller sees a
``ModelContractError`` naming the call and the budget instead of a hung search. The guard costs about half a microsecond per call, a tenth of that inside a stretch (``stretch``:
one clock read per call), uses no signals (so it composes with SIGALRM users such as pytest-timeout) and
works in any thread. Like any in-process interrupt it cannot stop a call
stuck inside one long C operation (``10 ** 10 ** 8``): only the process sandbox can.
"""

from __future__ import annotations

import ctypes
import os
import threading
import time
from collections.abc import Callable
from typing import Any

from cwm.model import Beat, Guard, no_beat
from cwm.sandbox.watch import wall_backstop
from cwm.types import ModelContractError

POLL_S = 0.02
BACKSTOP_FLOOR_S = 30.0  # a guarded call is never ended by the wall clock before this (a move's floor too)
_IDLE_AFTER_S = 1.0  # the watchdog parks after this long without a guarded call


class _BudgetExceeded(BaseException):
    """Raised inside the runaway call; a BaseException so the model's ``except Exception`` does not eat it."""


class _Slot:
    """One thread's current guarded call. Written by that thread, read and fired by the watchdog."""

    __slots__ = ("lock", "tid", "clock", "active", "started", "budget", "token", "fired", "what", "seen", "cpu0")

    def __init__(self) -> None:
        self.lock = threading.Lock()
        self.tid = threading.get_ident()
        # taken here, in the slot's own thread: the id of a thread's CPU clock (a thread that has ended reads
        # as an error, never as another thread's clock)
        self.clock = time.pthread_getcpuclockid(self.tid)
        self.active = False
        self.started = 0.0  # when the call began (wall clock); a new value also marks a new call (a stretch's beat)
        self.budget = 0.0  # CPU seconds
        self.token = 0
        self.fired = -1
        self.what: str | None = None  # inside a stretch: the model call its last beat announced
        self.seen: tuple[int, float] = (-1, 0.0)  # the call (token, started) the watchdog last saw
        self.cpu0 = 0.0  # the thread's CPU clock when the watchdog first saw that call

    def used(self) -> float:
        """CPU seconds the current call has used since the watchdog first saw it (0 when it is new)."""
        try:
            cpu = time.clock_gettime(self.clock)
        except OSError:  # the thread has ended
            return 0.0
        call = (self.token, self.started)
        if call != self.seen:
            self.seen, self.cpu0 = call, cpu
        return cpu - self.cpu0

    def overran(self, now: float) -> bool:
        """Whether the current call has used its CPU budget, or passed its wall-clock backstop at the CPU
        share it got (``wall_backstop``, never before ``BACKSTOP_FLOOR_S``)."""
        used, elapsed = self.used(), now - self.started
        if used >= self.budget:
            return True
        return elapsed > wall_backstop(self.budget, floor=BACKSTOP_FLOOR_S, cpu_used=used, elapsed=elapsed)


class _Watchdog:
    def __init__(self) -> None:
        self.reset()

    def reset(self) -> None:
        """Fresh state: no slots, no thread, new locks (also what a forked child starts from)."""
        self.slots: list[_Slot] = []
        self.local = threading.local()
        self.wake = threading.Event()
        self.parked = True
        self.last_use = 0.0
        self.thread: threading.Thread | None = None
        self.start_lock = threading.Lock()

    def slot(self) -> _Slot:
        slot = getattr(self.local, "slot", None)
        if slot is None:
            slot = _Slot()
            with self.start_lock:
                alive = {t.ident for t in threading.enumerate()} - {slot.tid}
                self.slots = [s for s in self.slots if s.tid in alive] + [slot]
            self.local.slot = slot  # only once the watchdog can see it: an interrupt before here retries
        return slot

    def unpark(self) -> None:
        """Wakes the watchdog, starting it first when it is not running: never started yet, or its start was
        cut short by an interrupt (a signal handler's exception, such as the arena's move timer), which
        leaves ``parked`` set so that the next guarded call tries again."""
        with self.start_lock:
            if self.thread is None or not self.thread.is_alive():
                thread = threading.Thread(target=self.loop, name="cwm-call-budget", daemon=True)
                thread.start()
                self.thread = thread
        self.parked = False
        self.wake.set()

    def loop(self) -> None:
        while True:
            if self.idle():
                self.parked = True
                self.wake.clear()
                if self.idle():  # no call slipped in meanwhile
                    self.wake.wait()
            time.sleep(POLL_S)
            now = time.monotonic()
            for slot in self.slots:
                if slot.active and slot.overran(now):
                    self.fire(slot, slot.seen)

    def idle(self) -> bool:
        # a call that has run longer than _IDLE_AFTER_S is still running: parking then would never stop it
        return time.monotonic() - self.last_use > _IDLE_AFTER_S and not any(s.active for s in self.slots)

    @staticmethod
    def fire(slot: _Slot, call: tuple[int, float]) -> None:
        with slot.lock:  # still the call that overran (not one that started since)
            if slot.active and (slot.token, slot.started) == call:
                slot.fired = slot.token
                ctypes.pythonapi.PyThreadState_SetAsyncExc(ctypes.c_ulong(slot.tid),
                                                           ctypes.py_object(_BudgetExceeded))


_WATCHDOG = _Watchdog()
# A forked child (the arena's process pool) inherits this object but not its thread, and perhaps a lock
# held at the moment of the fork: start it afresh there, or no budget would ever fire in the child.
os.register_at_fork(after_in_child=_WATCHDOG.reset)


def _exceeded(fn: Callable[..., Any], seconds: float, slot: _Slot) -> ModelContractError:
    name = slot.what or getattr(fn, "__name__", repr(fn))
    return ModelContractError(f"{name}(...) ran longer than its time budget of {seconds} s")


def call_budget(seconds: float) -> Guard:
    """A ``cwm.model.Guard`` that limits every model call to ``seconds`` of CPU time (of its thread).

    The watchdog reads the thread's CPU clock every ``POLL_S`` (20 ms) from the first time it sees the call,
    so a call is stopped after ``seconds`` to ``seconds`` + about ``POLL_S`` of CPU time, however busy the
    machine; a call that blocks is stopped by the wall-clock backstop (never before ``BACKSTOP_FLOOR_S``,
    longer while its thread gets little CPU). A guarded call made inside another one runs under the outer
    budget.

    Args:
      seconds: the budget per call in CPU seconds (> 0).

    Returns:
      ``guard(fn, *args)``: ``fn(*args)``, or ``ModelContractError`` when the call ran over budget.

    Raises:
      ValueError: ``seconds`` is not positive.
    """
    if not seconds > 0:
        raise ValueError(f"call_budget: seconds must be > 0, got {seconds!r}")
    dog, monotonic = _WATCHDOG, time.monotonic

    # One frame per call, attribute reads only: the planners call this tens of times per simulation.
    def guard(fn: Callable[..., Any], *args: Any) -> Any:
        try:
            slot = dog.local.slot
        except AttributeError:
            slot = dog.slot()
        if slot.active:  # nested guard: the outer budget already covers this call
            return fn(*args)
        now = monotonic()
        dog.last_use = now
        if dog.parked:
            dog.unpark()
        slot.token = token = slot.token + 1
        slot.started = now
        slot.budget = seconds
        slot.active = True
        try:
            try:
                result = fn(*args)
            finally:
                with slot.lock:
                    slot.active = False
                    fired = slot.fired == token
                if fired:  # an exception may still be pending in this thread: cancel it
                    ctypes.pythonapi.PyThreadState_SetAsyncExc(ctypes.c_ulong(slot.tid), None)
        except _BudgetExceeded:
            slot.active = False  # also when the interrupt landed in the finally block above
            raise _exceeded(fn, seconds, slot) from None
        except BaseException:  # e.g. a signal handler's exception (the arena's move timer) landing there
            slot.active = False
            raise
        if fired:
            raise _exceeded(fn, seconds, slot)
        return result

    guard.stretch = _stretch(guard)  # type: ignore[attr-defined]
    return guard


def _stretch(guard: Guard) -> Callable[[Callable[[Beat], Any]], Any]:
    """``guard.stretch(body)``: runs ``body(beat)`` as one guarded stretch in which ``body`` calls
    ``beat(name)`` right before each model call: every call then gets the guard's budget from its beat,
    exactly as if guarded one by one, for the price of a clock read instead of a guard per call (rollouts
    make dozens of calls). A budget overrun raises ``ModelContractError`` naming the call of the last beat."""
    dog, monotonic = _WATCHDOG, time.monotonic

    def stretch(body: Callable[[Beat], Any]) -> Any:
        slot = dog.slot()
        if slot.active:  # inside a guarded call: the outer budget covers the stretch
            return body(no_beat)

        def beat(what: str) -> None:
            slot.what = what
            slot.started = monotonic()

        slot.what = "a model call"
        try:
            return guard(body, beat)
        finally:
            slot.what = None

    return stretch

