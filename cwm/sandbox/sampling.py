"""An untrusted inference function's draws, made in a hardened session worker: ``ContainedSampler`` (its
server is ``cwm.sandbox.jobs.sample``).

The posterior check (``cwm.checks.posterior``) calls ``resample_history`` hundreds of times per information state and
judges every history it gets against the ground truth. The ground truth and the judging stay in the trusted
process; only the call runs in a sandbox session child (``Sandbox.open_session``), each answer under a CPU
budget timed from outside, and only JSON crosses back. So a synthesized inference function can be measured
as the arena runs it, without trusting it.

Server payload: ``{}``. Messages: ``{"events": [...], "player": int, "seed": int}``, answered by
``{"history": [str]}`` or ``{"raised": why}`` (the function raised).
"""

from __future__ import annotations

from cwm import value_rules
from cwm.sandbox.box import SAMPLE_JOB, Sandbox
from cwm.sandbox.session import Session
from cwm.types import JSON, CwmError

DEFAULT_DRAW_CPU_S = 2.0
_REASON_CHARS = 500


class SamplerFailure(CwmError, RuntimeError):
    """One draw of a contained inference function failed: it raised, broke a limit or returned no history."""


class ContainedSampler:
    """``resample_history`` of an untrusted inference module, each call answered by a hardened worker.

    Call it as the function itself: ``sampler(events, player_id, seed) -> list[str]``; a draw that fails
    raises ``SamplerFailure`` with the reason. A worker that died is started again at the next draw, at most
    ``max_restarts`` times; after that, or once it could not start, every draw fails at once with the same
    reason (so a function that always overruns its budget costs a few budgets, not one per draw).
    Use it as a context manager, or ``close()`` it.
    """

    def __init__(self, source: str, *, cpu_s: float = DEFAULT_DRAW_CPU_S, sandbox: Sandbox | None = None,
                 max_restarts: int = 3):
        self.source, self.cpu_s, self.max_restarts = source, cpu_s, max_restarts
        self._own_box = sandbox is None
        self._box = sandbox
        self._session: Session | None = None
        self._given_up = ""
        self.restarts = 0

    def __call__(self, events: list[JSON], player_id: int, seed: int) -> list[str]:
        session = self._open()
        result = session.ask({"events": events, "player": int(player_id), "seed": int(seed)})
        if not result.ok:
            self._session = None
            why = f"the inference worker failed ({result.kind}): {result.error[:_REASON_CHARS]}"
            if self.restarts >= self.max_restarts:
                self._given_up = f"{why}; given up after {self.restarts} restarts"
            self.restarts += 1
            raise SamplerFailure(why)
        answer = result.value
        if isinstance(answer, dict) and isinstance(answer.get("history"), list):
            return [str(a) for a in answer["history"]]
        reason = answer.get("raised") if isinstance(answer, dict) else None
        raise SamplerFailure(f"resample_history raised {reason}" if reason else
                             f"the inference worker answered {value_rules.describe(answer)}")

    def _open(self) -> Session:
        if self._given_up:
            raise SamplerFailure(self._given_up)
        if self._session is not None and self._session.alive:
            return self._session
        if self._box is None:
            self._box = Sandbox()
        session = self._box.open_session(SAMPLE_JOB, self.source, {}, move_cpu_s=self.cpu_s)
        if not session.alive:
            self._given_up = (f"the inference worker could not start ({session.opened.kind}): "
                              f"{session.opened.error[:_REASON_CHARS]}")
            raise SamplerFailure(self._given_up)
        self._session = session
        return session

    def close(self) -> None:
        """Ends the worker and, if this sampler started it, its sandbox."""
        session, self._session = self._session, None
        if session is not None:
            session.close()
        if self._box is not None and self._own_box:
            self._box.close()
            self._box = None

    def __enter__(self) -> ContainedSampler:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


__all__ = ["SAMPLE_JOB", "ContainedSampler", "SamplerFailure"]
