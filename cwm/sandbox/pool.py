"""A process's sandboxes for planning workers: idle ones are kept and reused, so a tournament starts a
zygote per concurrent worker once, not per match (a session is a cheap fork of an idle zygote).

A forked process (a pool worker) does not use its parent's zygotes: ``Sandbox`` forgets a zygote another
process started and starts its own.
"""

from __future__ import annotations

import threading

from cwm.sandbox.box import Sandbox

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
