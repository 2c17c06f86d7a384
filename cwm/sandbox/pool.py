"""A process's sandboxes for planning workers: idle ones are kept and reused, so a tournament starts a
zygote per concurrent worker once, not per match (a session is a cheap fork of an idle zygote).

A forked process (a pool worker) does not use its parent's zygotes: ``Sandbox`` forgets a zygote another
process started and starts its own.
"""

from __future__ import annotations

import threading

from cwm.sandbox.box import Sandbox
from cwm.sandbox.session import Session
from cwm.types import JSON

MAX_IDLE = 4
_IDLE: list[Sandbox] = []
_LOCK = threading.Lock()


def acquire() -> Sandbox:
    """An idle sandbox of this process, or a new one (its zygote starts at its first job)."""
    with _LOCK:
        while _IDLE:
            box = _IDLE.pop()
            if box._owned() is not None:
                return box
    return Sandbox()


def release(box: Sandbox) -> None:
    """Gives a sandbox back for the next worker (closed when enough are idle)."""
    with _LOCK:
        if len(_IDLE) < MAX_IDLE and box._owned() is not None:
            _IDLE.append(box)
            return
    box.close()


def close_all() -> None:
    """Ends every idle sandbox of this process."""
    with _LOCK:
        boxes, _IDLE[:] = list(_IDLE), []
    for box in boxes:
        box.close()


class Lease:
    """One worker at a time on a sandbox: the caller's, or one borrowed from this process's pool at the first
    ``open`` and given back by ``close`` (the host game, the contained CWM agent, PPO's contained envs and
    encoder all hold their worker this way)."""

    def __init__(self, sandbox: Sandbox | None = None) -> None:
        self._given = sandbox
        self._box = sandbox
        self._session: Session | None = None

    @property
    def session(self) -> Session | None:
        """The running worker, or ``None``: none started yet, it could not start, it failed (a worker that
        answers with a failure is gone), it was abandoned or closed."""
        session = self._session
        return session if session is not None and session.alive else None

    def open(self, job: str, source: str, payload: JSON, *, move_cpu_s: float, gate: bool = True) -> Session:
        """Starts a worker (``Sandbox.open_session``), ending the one before, and returns it: one that did not
        start says why in ``opened``."""
        self.end()
        if self._box is None:
            self._box = acquire()
        self._session = self._box.open_session(job, source, payload, move_cpu_s=move_cpu_s, gate=gate)
        return self._session

    def end(self) -> None:
        """Ends the worker (if any), keeping the sandbox for the next ``open``."""
        session, self._session = self._session, None
        if session is not None:
            session.close()

    def close(self) -> None:
        """Ends the worker (if any) and gives a borrowed sandbox back to the pool."""
        self.end()
        if self._box is not None and self._given is None:
            release(self._box)
            self._box = None
