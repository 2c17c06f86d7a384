"""The host side of the sandbox: ``Sandbox`` runs trusted jobs on untrusted source in hardened children.

``Sandbox`` starts one zygote process (inside bubblewrap when it works here) that has numpy, pyspiel and the
check harness imported, and forks one hardened child per job; see ``cwm.sandbox.child`` for the child's
layers and docs/security.md for what this promises and what it does not.
"""

from __future__ import annotations

import contextlib
import dataclasses
import hashlib
import logging
import os
import pickle
import secrets
import subprocess
import threading
import time
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any, Literal

from cwm.sandbox.gate import ALLOWED_IMPORTS, FORBIDDEN_NAMES, static_gate
from cwm.sandbox.launch import SandboxError, Zygote, bwrap_available, scrubbed_env
from cwm.sandbox.layers import warn_once_without_seccomp
from cwm.sandbox.session import SESSION_LIMITS, Session
from cwm.sandbox.verdicts import (  # noqa: F401  (the job names and verdicts are the box's public API too)
    CALL_JOB,
    CHECK_JOB,
    DEFAULT_LIMITS,
    ENCODE_JOB,
    ENCODER_GAMES_JOB,
    ENCODER_JOB,
    ENV_JOB,
    HOST_JOB,
    INFERENCE_JOB,
    PLAN_JOB,
    RANDOM_PLAY_JOB,
    SAMPLE_JOB,
    VALUE_JOB,
    BatchJob,
    JobResult,
    Limits,
)
from cwm.sandbox.watch import wall_ceiling
from cwm.text import clean
from cwm.types import JSON, TEXT_LIMIT, CheckReport, ClosedTrajectory, Trajectory, UsageError, error_report

if TYPE_CHECKING:
    from cwm.sandbox.session import Session

log = logging.getLogger(__name__)

Isolation = Literal["auto", "bwrap", "process"]
_REPLY_MARGIN_S = 10.0


class Sandbox:
    """Runs trusted harness jobs on untrusted source in forked, hardened children of one zygote.

    One job at a time per ``Sandbox`` (concurrent calls wait their turn; make one per worker for parallelism).

    Args:
      limits: default limits for every job.
      isolation: ``"bwrap"`` (require bubblewrap), ``"process"`` (no namespaces) or ``"auto"`` (bubblewrap
        when it works, else a logged warning and ``"process"``). The environment variable
        ``CWM_SANDBOX_ISOLATION`` overrides ``"auto"``.
    """

    _warned = False

    def __init__(self, *, limits: Limits = DEFAULT_LIMITS, isolation: Isolation = "auto"):
        self.limits = limits
        if isolation == "auto":
            isolation = os.environ.get("CWM_SANDBOX_ISOLATION", "auto")  # type: ignore[assignment]
        if isolation not in ("auto", "bwrap", "process"):
            raise UsageError(f"isolation must be 'auto', 'bwrap' or 'process', got {isolation!r}")
        self.isolation = isolation
        self._zygote: Zygote | None = None
        self._memo: tuple[Any, str, bytes] | None = None
        self._traj_memo: tuple[tuple[Trajectory, ...], dict[str, Any]] | None = None
        self._lock = threading.Lock()
        self.restarts = 0
        self.batch_children: list[int] = []  # which child of the last batch ran each job (0, 1, ...)

    # -- lifecycle ----------------------------------------------------------------------------------
    @property
    def mode(self) -> str:
        """``"bwrap"`` or ``"process"``: how the zygote is (or will be) isolated."""
        return self._ensure().mode

    def _owned(self) -> Zygote | None:
        """The zygote, unless this process is a fork of the one that started it (then it is forgotten)."""
        if self._zygote is not None and self._zygote.owner != os.getpid():
            self._zygote = None
        return self._zygote

    def _ensure(self) -> Zygote:
        zygote = self._owned()
        if zygote is not None and zygote.proc.poll() is None:
            return zygote
        if zygote is not None:  # it died: count a restart
            zygote.kill()
            self.restarts += 1
        warn_once_without_seccomp()  # here, in the caller's logging setup (the zygote's stderr is easy to miss)
        self._zygote = Zygote(self._use_bwrap())
        return self._zygote

    def _use_bwrap(self) -> bool:
        if self.isolation == "process":
            return False
        if bwrap_available():
            return True
        if self.isolation == "bwrap":
            raise SandboxError("isolation='bwrap' but bubblewrap is not installed or cannot create namespaces")
        _warn_without_bwrap()
        return False

    def restart(self) -> None:
        """Kills the zygote; the next job starts a fresh one."""
        zygote = self._owned()
        if zygote is not None:
            zygote.kill()
            self._zygote = None
            self.restarts += 1

    def close(self) -> None:
        zygote = self._owned()
        if zygote is not None:
            zygote.kill()
            self._zygote = None

    def __enter__(self) -> Sandbox:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def __del__(self) -> None:
        with contextlib.suppress(Exception):  # interpreter shutdown: nothing sensible left to do
            self.close()

    # -- jobs ---------------------------------------------------------------------------------------
    def run(self, job: str, source: str, payload: JSON, *, limits: Limits | None = None,
            gate: bool = True, policy: str = "python") -> JobResult:
        """Runs ``job`` ("package.module:function", trusted) on the module built from ``source``.

        The child applies the static gate, loads ``source`` with restricted builtins under every layer,
        then returns ``function(module, payload)``. Bad candidate code never raises here: it yields a
        ``JobResult`` whose ``kind`` and ``error`` name the gate rule or the limit.

        Args:
          job: the trusted function, importable in the zygote (modules of the ``cwm`` package).
          source: the untrusted module source.
          payload: the job's input; pickled once and cached in the zygote by content.
          limits: this job's limits (default: the sandbox's).
          gate: run the static gate; turned off only by tests of the layers behind it.
          policy: what the source may import (``cwm.sandbox.names.POLICIES``): ``python`` (world models and
            their kin) or ``jax`` (a JAX twin: JAX is started in the child before the layers go up).

        Raises:
          SandboxError: the zygote cannot be started at all.
        """
        with self._lock:
            return self._run(job, source, payload, limits or self.limits, gate,
                             extra={"policy": policy} if policy != "python" else None)

    def run_batch(self, jobs: Sequence[BatchJob], *, one_child: bool = True) -> list[JobResult]:
        """Runs ``jobs`` in order, each as ``run`` would, in as few children as they allow: one child runs one
        job after another while each ends ``ok`` (or is refused by the gate) and leaves nothing behind that a
        later job could observe (``cwm.sandbox.child.batch_main``); a job that fails, overruns or crashes gets
        the verdict it gets in a child of its own, and the jobs after it run in a fresh child. Each job's
        candidate is loaded anew and its payload is a fresh copy. One shared child is only for jobs that trust
        each other: a hostile job can change library state no leftover check lists (a method called with a
        class as ``self``, an enum member, an ABC registration), and a later job's CPU limit is set in whole
        seconds on top of what the child used (docs/security.md, "Batches"); cwm's checks of different
        programs pass ``one_child=False``. ``batch_children`` says afterwards which child ran each job.

        Args:
          jobs: the jobs, each with its payload and limits.
          one_child: ``False``: a fresh child per job, as ``run`` (kept to compare the two).

        Raises:
          SandboxError: the zygote cannot be started at all.
        """
        with self._lock:
            if not one_child or len(jobs) < 2:
                self.batch_children = list(range(len(jobs)))
                return [self._run(j.job, j.source, j.payload, j.limits or self.limits, j.gate) for j in jobs]
            return self._run_batch(list(jobs))

    def _run_batch(self, jobs: list[BatchJob]) -> list[JobResult]:
        payloads: dict[str, bytes] = {}
        items = []
        for j in jobs:
            data, key = self._encode(j.payload)
            payloads[key] = data
            items.append({"job": j.job, "source": j.source, "payload_key": key, "gate": j.gate,
                          "limits": dataclasses.asdict(j.limits or self.limits)})
        reply = self._exchange_batch(items, payloads)
        if reply is not None and (reply.get("out_of_turn") or reply.get("missing_payload")):
            self._ensure().sent.difference_update(payloads)
            reply = self._exchange_batch(items, payloads)
        replies = reply.get("replies") if reply is not None else None
        if not isinstance(replies, list) or len(replies) != len(jobs):  # the zygote died or answered wrongly
            self.restart()
            self.batch_children = list(range(len(jobs)))
            return [self._run(j.job, j.source, j.payload, j.limits or self.limits, j.gate) for j in jobs]
        self.batch_children = [int(r.get("child", -1)) for r in replies]
        return [JobResult(str(r["kind"]) == "ok", r.get("value"),
                          clean(str(r.get("error", "")), limit=TEXT_LIMIT, multiline=True),
                          clean(str(r["kind"]), limit=100)) for r in replies]

    def _exchange_batch(self, items: list[dict[str, Any]], payloads: dict[str, bytes]) -> dict[str, Any] | None:
        """Sends a batch (with the payloads the zygote lacks) and waits for its answer: as long as its jobs'
        longest backstops together, and a margin each (``_reply_wait``)."""
        zygote = self._ensure()
        nonce = secrets.token_hex(8)
        message = {"batch": items, "nonce": nonce,
                   "payloads": {k: d for k, d in payloads.items() if k not in zygote.sent}}
        if not zygote.send(pickle.dumps(message, protocol=pickle.HIGHEST_PROTOCOL)):
            return None
        zygote.sent.update(payloads)
        reply = zygote.receive(time.monotonic() + sum(_reply_wait(item) for item in items))
        if reply is None or reply.pop("nonce", None) == nonce:
            return reply
        log.warning("the sandbox zygote answered out of turn (a forged or stale reply); restarting it")
        self.restart()
        return {"out_of_turn": True}

    def check_batch(self, jobs: Sequence[BatchJob], *, one_child: bool = True) -> list[CheckReport]:
        """``check`` of each job (one returning ``CheckReport.to_json()``), run as ``run_batch`` runs them."""
        return [_report_of(result) for result in self.run_batch(jobs, one_child=one_child)]

    def open_session(self, job: str, source: str, payload: JSON, *, move_cpu_s: float,
                     limits: Limits | None = None, gate: bool = True) -> Session:
        """Starts a planning worker: a hardened child that loads ``source`` like a job's, builds its server
        with ``job(module, payload)`` and then answers ``Session.ask(message)`` one message at a time, each
        under a CPU-time budget of ``move_cpu_s`` timed from outside (``cwm.sandbox.worker``).

        The sandbox serves only this session until it is closed (make one sandbox per concurrent worker).
        A worker that could not start (the gate, a load error, a limit) gives a closed session whose
        ``opened`` result says why; bad candidate code never raises here.

        Args:
          job: the trusted function that returns the server (``cwm.sandbox.jobs.check:plan_session``).
          source: the untrusted module source.
          payload: the job's input (JSON or picklable trusted data).
          move_cpu_s: CPU seconds each answer may use.
          limits: the session's limits (default ``SESSION_LIMITS``): ``wall_s`` to load, ``cpu_s`` in all
            (RLIMIT_CPU), ``memory_mb``, ``per_call_s`` for the module body.

        Raises:
          SandboxError: the zygote cannot be started at all.
          UsageError: ``move_cpu_s`` is not > 0.
        """
        if not (type(move_cpu_s) in (int, float) and move_cpu_s > 0):
            raise UsageError(f"move_cpu_s must be > 0 seconds, got {move_cpu_s!r}")
        self._lock.acquire()
        try:
            opened = self._run(job, source, payload, limits or SESSION_LIMITS, gate,
                               extra={"session": True, "move_cpu_s": float(move_cpu_s)})
        except BaseException:  # an interrupt may leave the zygote serving a session nobody holds
            self.restart()
            self._lock.release()
            raise
        return Session(self, opened, float(move_cpu_s))

    def _run(self, job: str, source: str, payload: JSON, limits: Limits, gate: bool,
             extra: dict[str, Any] | None = None) -> JobResult:
        data, key = self._encode(payload)
        request = {"job": job, "source": source, "payload_key": key, "gate": gate,
                   "nonce": secrets.token_hex(8), "limits": dataclasses.asdict(limits), **(extra or {})}
        reply = self._exchange(request, data, key, limits)
        if reply is not None and reply.get("out_of_turn"):  # once more, on the fresh zygote
            reply = self._exchange(request, data, key, limits)
        if reply is not None and reply.get("missing_payload"):
            self._ensure().sent.discard(key)
            reply = self._exchange(request, data, key, limits)
        if reply is None:
            died = self._zygote is not None and self._exited(self._zygote)
            self.restart()
            if died:
                return JobResult(False, None, "the sandbox process died during the job; it was restarted", "crash")
            return JobResult(False, None, f"the sandbox did not answer within {_reply_wait(request):g} s of wall "
                                          f"time (its longest backstop); it was restarted", "timeout")
        kind = clean(str(reply["kind"]), limit=100)
        # the error text is the candidate's (its exception message, its traceback): cleaned before anyone sees it
        return JobResult(kind == "ok", reply.get("value"), clean(str(reply.get("error", "")), limit=TEXT_LIMIT,
                                                                 multiline=True), kind)

    @staticmethod
    def _exited(zygote: Zygote) -> bool:
        try:  # its pipe closes a moment before it can be reaped
            zygote.proc.wait(timeout=0.5)
            return True
        except subprocess.TimeoutExpired:
            return False

    def _encode(self, payload: JSON) -> tuple[bytes, str]:
        if self._memo is not None and self._memo[0] is payload:
            return self._memo[2], self._memo[1]
        data = pickle.dumps(payload, protocol=pickle.HIGHEST_PROTOCOL)
        key = hashlib.blake2b(data, digest_size=16).hexdigest()
        self._memo = (payload, key, data)
        return data, key

    def _exchange(self, request: dict[str, Any], data: bytes, key: str, limits: Limits) -> dict[str, Any] | None:
        zygote = self._ensure()
        message = dict(request)
        if key not in zygote.sent:
            message["payload"] = data
        if not zygote.send(pickle.dumps(message, protocol=pickle.HIGHEST_PROTOCOL)):
            return None
        zygote.sent.add(key)
        reply = zygote.receive(time.monotonic() + _reply_wait(message))
        if reply is None or reply.pop("nonce", None) == request["nonce"]:
            return reply
        # Not the answer to this request: a frame some candidate smuggled into the zygote's stream, which
        # would shift every later verdict by one. Nothing more from this zygote can be trusted.
        log.warning("the sandbox zygote answered out of turn (a forged or stale reply); restarting it")
        self.restart()
        return {"kind": "error", "value": None, "out_of_turn": True,
                "error": "the sandbox's reply did not match the request (a forged or stale reply); the sandbox "
                         "was restarted"}

    def check_world_model(self, source: str, trajectories: Sequence[Trajectory], *,
                          limits: Limits | None = None) -> CheckReport:
        """``cwm.checks.run_checks`` on ``source`` in a child. A gate rejection, a load error or a limit gives
        a failing ``CheckReport`` whose ``error`` starts with the kind (``"timeout: ..."``); never raises
        for bad candidate code."""
        return self.check(CHECK_JOB, source, self.trajectory_payload(trajectories), limits=limits)

    def check(self, job: str, source: str, payload: JSON, *, limits: Limits | None = None) -> CheckReport:
        """Runs a check ``job`` (one returning ``CheckReport.to_json()``) on ``source`` in a child. A gate
        rejection, a load error or a limit gives a failing report whose ``error`` starts with the kind; never
        raises for bad candidate code."""
        return _report_of(self.run(job, source, payload, limits=limits))

    def check_inference(self, source: str, closed: Sequence[ClosedTrajectory], *, model_source: str | None = None,
                        terminal: bool = False, random_games: int = 0, max_steps: int = 10_000,
                        limits: Limits | None = None, kind: str | None = None) -> CheckReport:
        """``cwm.checks.inference.run_inference_checks`` on the inference function ``source`` in a child,
        replaying its histories in ``model_source`` (``None``: ``source`` defines the world model too, as a
        closed-deck candidate does, and ``random_games`` random games are played in it). ``kind="state"``
        checks ``resample_state`` (default: the function the module defines, ``cwm.contract.resampler``).
        Failures of the code itself give a failing report whose ``error`` starts with the kind, as
        ``check_world_model``."""
        payload = {"closed": list(closed), "model_source": model_source, "terminal": terminal,
                   "random_games": random_games, "max_steps": max_steps, "kind": kind}
        return self.check(INFERENCE_JOB, source, payload, limits=limits)

    def trajectory_payload(self, trajectories: Sequence[Trajectory]) -> dict[str, Any]:
        """The payload of a world-model check on ``trajectories`` (``CHECK_JOB``); the same object for the same
        trajectory objects (frozen dataclasses), however the caller holds them (a list rebuilt per call is
        fine), so the set is pickled and sent once."""
        items = tuple(trajectories)
        memo = self._traj_memo
        if memo is not None and len(memo[0]) == len(items) and all(a is b for a, b in zip(memo[0], items)):
            return memo[1]
        payload = {"trajectories": list(items)}
        self._traj_memo = (items, payload)
        return payload


__all__ = ["ALLOWED_IMPORTS", "FORBIDDEN_NAMES", "CALL_JOB", "CHECK_JOB", "INFERENCE_JOB", "RANDOM_PLAY_JOB", "BatchJob", "JobResult", "Limits", "Sandbox",
           "SandboxError", "bwrap_available", "scrubbed_env", "static_gate"]


def _report_of(result: JobResult) -> CheckReport:
    """A check job's report: a failing one whose ``error`` starts with the kind when the job did not end ok."""
    if not result.ok:
        return error_report(f"{result.kind}: {result.error}")
    try:
        return CheckReport.from_json(result.value)
    except (TypeError, KeyError, ValueError, AttributeError) as e:
        return error_report(f"error: the sandboxed check returned a malformed report ({type(e).__name__}: {e})")


def _reply_wait(request: dict[str, Any]) -> float:
    """How long the host waits for the zygote's answer to ``request``: the longest wall-clock backstop the
    zygote may give the child (``cwm.sandbox.watch``), and a margin. A session's start is sized on ``wall_s``
    (its ``cpu_s`` is the whole session's), a job's on its ``cpu_s``."""
    limits = request["limits"]
    cpu_s = limits["wall_s"] if request.get("session") else limits["cpu_s"]
    return wall_ceiling(float(cpu_s), floor=float(limits["wall_s"])) + _REPLY_MARGIN_S


NO_BWRAP_WARNED = "CWM_NO_BWRAP_WARNED"  # set once warned, so the processes started afterwards stay quiet


def warn_if_without_bwrap() -> None:
    """Warns now, once, when bubblewrap is unavailable: a caller about to start worker processes (a pool
    under a progress bar) calls it first, so the warning is printed once, before the bar, and not by every
    worker inside it (they inherit the environment variable that says it was given)."""
    if not bwrap_available():
        _warn_without_bwrap()


def _warn_without_bwrap() -> None:
    if Sandbox._warned or os.environ.get(NO_BWRAP_WARNED):
        return
    Sandbox._warned = True
    os.environ[NO_BWRAP_WARNED] = "1"
    log.warning("bubblewrap (bwrap) is unavailable: sandboxed code can read any file this user can; "
                "install Debian's 'bubblewrap' for filesystem and network namespaces")
