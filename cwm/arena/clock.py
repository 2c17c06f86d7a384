"""How long a move may take in a match: a CPU-time limit per move (``ITIMER_PROF``) that decides, a wall-clock
backstop that grows with the machine's load (``cwm.sandbox.watch.wall_backstop``, never before
``cwm.sandbox.worker.hard_wall``), and the typed timeout a move over either forfeits with.

The CPU time is the whole process's (``ITIMER_PROF`` and ``time.process_time`` count every thread): work
that other threads of the match's process do during a move (a native library's thread pool, a progress
bar, the call-budget watchdog) counts against the move. Under the process-pool executors a worker process
plays one match at a time, so little else runs there; where threads of one process play matches side by
side, a move may be charged for work it did not do."""

from __future__ import annotations

import contextlib
import signal
import threading
import time
from collections.abc import Iterator
from typing import Any

import numpy as np
import pyspiel

from cwm.agents.base import Agent, AgentError, IllegalMoveError
from cwm.sandbox.watch import wall_backstop, wall_ceiling
from cwm.sandbox.worker import hard_wall


class MoveTimeout(AgentError):
    """An agent took longer than the move time limit."""

    kind = "timeout"


class _MoveExpired(BaseException):
    """The move timer's interrupt: a BaseException, so no ``except Exception`` in an agent (a sampler's
    failed-draw handler, a model's own try) can swallow it."""


def agent_move(agent: Agent, state: pyspiel.State, limit: float | None) -> int:
    start = time.process_time()
    fired: list[str] = []
    try:
        with _time_limit(limit, fired):
            action = agent.step(state.clone())
    except _MoveExpired:
        raise MoveTimeout(_overrun(limit, fired)) from None
    except Exception as e:
        if fired:  # the timer's exception may arrive wrapped (a model call names it as a contract breach)
            raise MoveTimeout(_overrun(limit, fired)) from e
        raise
    used = time.process_time() - start  # where no timer could run (not the main thread): measured after
    if limit is not None and used > limit:
        raise MoveTimeout(f"the move used {used:.1f} s of CPU time, over the limit of {limit:g} s")
    if not isinstance(action, (int, np.integer)) or int(action) not in state.legal_actions():
        raise IllegalMoveError(f"action {action!r} is not one of the legal actions {state.legal_actions()[:30]}")
    return int(action)


def _overrun(limit: float | None, fired: list[str]) -> str:
    if fired and fired[0] == "wall":
        return (f"the move got almost no CPU time for longer than its wall-clock backstop "
                f"({hard_wall(limit or 0):g} s to {wall_ceiling(limit or 0, floor=hard_wall(limit or 0)):g} s)")
    return f"the move used more than its limit of {limit:g} s of CPU time"


@contextlib.contextmanager
def _time_limit(limit: float | None, fired: list[str]) -> Iterator[None]:
    """Interrupts a move that overruns, where signals allow it (the main thread of a process): after
    ``limit`` seconds of this process's CPU time (``ITIMER_PROF``), or past the wall-clock backstop: at
    ``hard_wall(limit)`` the wall timer looks at the CPU share the move got and, while that share says the
    machine is busy rather than the move stuck, sets itself again for the backstop at that share
    (``wall_backstop``): machine load slows a move, it does not forfeit it. Appends ``"cpu"`` or ``"wall"``
    to ``fired`` when a timer went off. (A CWM agent's worker runs in its own process, under its
    own CPU budget; this timer then bounds only the wait for its answer.)"""
    if limit is None or threading.current_thread() is not threading.main_thread():
        yield
        return

    wall0, cpu0 = time.monotonic(), time.process_time()

    def expire(signum: int, frame: Any) -> None:
        if signum == signal.SIGALRM:
            elapsed = time.monotonic() - wall0
            left = wall_backstop(limit, floor=hard_wall(limit), cpu_used=time.process_time() - cpu0,
                                 elapsed=elapsed) - elapsed
            if left > 0:  # a busy machine, not a stuck move: wait for the backstop at the share it got
                signal.setitimer(signal.ITIMER_REAL, left)
                return
        fired.append("wall" if signum == signal.SIGALRM else "cpu")
        raise _MoveExpired()

    previous = {sig: signal.signal(sig, expire) for sig in (signal.SIGALRM, signal.SIGPROF)}
    signal.setitimer(signal.ITIMER_PROF, limit)
    signal.setitimer(signal.ITIMER_REAL, hard_wall(limit))
    try:
        yield
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.setitimer(signal.ITIMER_PROF, 0)
        for sig, handler in previous.items():
            signal.signal(sig, handler)
