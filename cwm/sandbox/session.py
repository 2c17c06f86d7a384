"""The host side of a sandbox session (a planning worker): ``Session.ask`` one message at a time, ``close``.

A session is one hardened child of a sandbox's zygote (``cwm.sandbox.worker``); while it is open the
sandbox serves nothing else. Answers cross back as plain JSON, stamped with this request's nonce; a worker
that overruns, dies or stops answering yields a failed ``JobResult`` (``timeout``, ``memory``, ``crash``,
``error``) and the session is over (the zygote is back to serving, or restarted).
"""

from __future__ import annotations

import pickle
import secrets
import time
from typing import TYPE_CHECKING, Any

from cwm.sandbox.verdicts import JobResult, Limits
from cwm.sandbox.worker import move_wall_ceiling
from cwm.types import JSON

if TYPE_CHECKING:
    from cwm.sandbox.box import Sandbox

_REPLY_MARGIN_S = 10.0  # beyond the worker's own hard limit, before the host gives up on the zygote
_CLOSE_WAIT_S = 5.0


SESSION_LIMITS = Limits(wall_s=60.0, cpu_s=6 * 3600.0, memory_mb=2048, per_call_s=10.0)


class Session:
    """An open (or failed) planning worker.

    Attributes:
      opened: how the worker started: ``ok`` with ``{"ready": True}``, or the verdict that stopped it.
      answers: messages answered so far.
    """

    def __init__(self, box: Sandbox, opened: JobResult, move_cpu_s: float):
        self._box = box
        self.opened = opened
        self.move_cpu_s = move_cpu_s
        self.answers = 0
        self._open = opened.ok
        if not self._open:
            box._lock.release()

    @property
    def alive(self) -> bool:
        return self._open

    def ask(self, message: JSON) -> JobResult:
        """Sends one message and waits for its answer: as long as the zygote lets the worker run (its CPU budget
        decides; the wall-clock backstop grows with the machine's load: ``cwm.sandbox.watch``), and a margin.

        Raises:
          RuntimeError: the session is closed.
        """
        if not self._open:
            raise RuntimeError("the session is closed")
        reply = self._exchange({"message": message}, move_wall_ceiling(self.move_cpu_s) + _REPLY_MARGIN_S)
        if reply is None:
            self._end(restart=True)
            return JobResult(False, None, "the sandbox stopped answering during the move; it was restarted", "timeout")
        kind = str(reply.get("kind"))
        result = JobResult(kind == "ok", reply.get("value"), str(reply.get("error", "")), kind)
        self.answers += 1
        if not result.ok:  # the worker is gone; the zygote serves again
            self._end(restart=False)
        return result

    def close(self) -> None:
        """Ends the worker (idempotent); the sandbox is free for other jobs."""
        if self._open:
            reply = self._exchange({"close": True}, _CLOSE_WAIT_S)
            self._end(restart=reply is None)

    def abandon(self) -> None:
        """Ends the worker without a word (after an interrupt left an exchange half done)."""
        if self._open:
            self._end(restart=True)

    def _exchange(self, body: dict[str, Any], wait_s: float) -> dict[str, Any] | None:
        zygote = self._box._owned()
        if zygote is None:
            return None
        nonce = secrets.token_hex(8)
        try:
            if not zygote.send(pickle.dumps(dict(body, nonce=nonce), protocol=pickle.HIGHEST_PROTOCOL)):
                return None
            reply = zygote.receive(time.monotonic() + wait_s)
        except BaseException:  # an interrupt mid-exchange: the zygote's next frame would answer this one
            self._end(restart=True)
            raise
        if reply is None or reply.pop("nonce", None) != nonce:
            return None
        return reply

    def _end(self, *, restart: bool) -> None:
        self._open = False
        if restart:
            self._box.restart()
        self._box._lock.release()

    def __enter__(self) -> Session:
        return self

    def __exit__(self, *exc: object) -> None:
        if exc[0] is not None and not isinstance(exc[1], Exception):
            self.abandon()
        else:
            self.close()
