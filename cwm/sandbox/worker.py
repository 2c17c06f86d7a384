"""Sandbox sessions: a hardened child that stays alive and answers one message after another (a CWM agent's
planning worker), and the zygote's relay that times each answer from outside.

A session child is forked by the zygote like a job's child and applies every layer of ``cwm.sandbox.child``
before it loads the candidate; then the trusted job function builds a *server* (``server(message) ->
JSON``) and the child answers the zygote's messages one at a time, each under a CPU-time budget
(``ITIMER_PROF``). The zygote relays each message, watches the child's CPU time and state in ``/proc``
while it waits (``cwm.sandbox.watch``), and kills it when the answer is over budget (CPU time, with a
margin), when it has slept for ``SLEEP_ALLOWANCE_S`` (a CPU-bound search never sleeps; a child that blocks
is stuck), or past the wall-clock backstop, which grows with the machine's load. Machine load slows the
answer but never ends it: only CPU time the child itself used counts, and neither a runnable child
waiting for a core, nor one waiting for the disk or for the zygote to read its answer, is asleep.

Messages zygote -> child: frames of JSON. Answers child -> zygote: the session's secret, an 8-byte
length, then JSON (``{"kind", "value", "error"}``), as a job's verdict.
"""

from __future__ import annotations

import contextlib
import json
import os
import select
import signal
from typing import Any

from cwm.sandbox import layers
from cwm.sandbox.child import (
    _CURRENT,
    KEPT_RUNNING_EXIT,
    MEMORY_EXIT,
    RESULT_CAP_BYTES,
    Abort,
    Refused,
    _Child,
    _describe,
    _emitter,
    _resolve_job,
    forked,
    open_candidate,
    read_frame,
    write_frame,
)
from cwm.sandbox.watch import POLL_S, SLEEP_ALLOWANCE_S, Watch, wall_ceiling
from cwm.types import JSON, ModelLoadError


def hard_wall(budget: float) -> float:
    """The wall-clock floor of a move's backstop: three budgets and half a minute. A move is never ended by
    the wall clock before this; past it, only when it got almost no CPU time (``cwm.sandbox.watch``)."""
    return 3 * budget + 30.0


def move_wall_ceiling(budget: float) -> float:
    """The longest a move's answer can take before the zygote ends it whatever it did (the host waits this)."""
    return wall_ceiling(budget, floor=hard_wall(budget))


# ---------------------------------------------------------------------------------------------------
# The session child


def session_main(fd_out: int, fd_in: int, request: dict[str, Any], payload: Any) -> None:
    """Runs one session in this (forked) process; never returns.

    The child loads the candidate under every layer, calls the trusted job ``job(module, payload)`` for
    its server, says ``ready`` (or why not), then answers each message with ``server(message)`` under the
    move's CPU budget (``request["move_cpu_s"]``). A message that fails ends the session.
    """
    emit = _emitter(fd_out, request.pop("secret").encode())
    limits = request["limits"]
    child = _Child(limits)
    _CURRENT[:] = [child]
    if isinstance(payload, dict) and payload.get("jax_twin"):  # a JAX twin's rollouts: JAX before the layers
        layers.prepare_jax()
    layers.detach(keep=(fd_out, fd_in))
    layers.set_rlimits(limits)
    layers.drop_capabilities()
    signal.signal(signal.SIGVTALRM, child.on_alarm)
    budget = float(request["move_cpu_s"])
    move = _MoveBudget(child, budget)
    signal.signal(signal.SIGPROF, move.on_prof)
    kind, server, error = _guarded(child, limits, lambda: _open(child, request, payload))
    emit(kind, {"ready": True} if kind == "ok" else None, error, bool(request["gate"]) and kind != "static")
    if kind != "ok":
        os._exit(0)
    while True:
        frame = read_frame(fd_in)
        if frame is None:  # the zygote closed the session
            os._exit(0)
        message = json.loads(frame)
        move.start()
        kind, value, error = _guarded(child, limits, lambda m=message: server(m))
        move.stop()
        emit(kind, value, error, False)
        if kind != "ok":
            os._exit(0)


class _MoveBudget:
    """The CPU-time budget of one answer (``ITIMER_PROF``: CPU this process uses, user and system)."""

    def __init__(self, child: _Child, budget: float):
        self.child, self.budget, self.fired = child, budget, 0

    def start(self) -> None:
        self.fired = 0
        signal.setitimer(signal.ITIMER_PROF, self.budget)

    def stop(self) -> None:
        signal.setitimer(signal.ITIMER_PROF, 0)

    def on_prof(self, signum: int, frame: Any) -> None:
        self.fired += 1
        if self.fired == 1:
            signal.setitimer(signal.ITIMER_PROF, 0.05)  # re-armed: code that swallows the interrupt is ended
            raise self.child.abort("timeout", f"the move used more than its budget of {self.budget:g} s of CPU time")
        os._exit(KEPT_RUNNING_EXIT)


def _open(child: _Child, request: dict[str, Any], payload: Any) -> Any:
    job = _resolve_job(request["job"])
    try:
        module, _ = open_candidate(child, request)
    except Refused as r:
        raise _Failed(r.kind, r.message) from None
    return job(module, payload)


class _Failed(Exception):
    def __init__(self, kind: str, message: str):
        super().__init__(message)
        self.kind, self.message = kind, message


def _guarded(child: _Child, limits: dict[str, Any], body: Any) -> tuple[str, JSON, str]:
    """``("ok", body(), "")``, or the verdict of what stopped it (the sandbox boundary: everything)."""
    try:
        return "ok", body(), ""
    except Abort as a:
        if a.kind in ("timeout", "memory") and any(a is issued for issued in child.issued):
            return a.kind, None, a.message
        return "error", None, "the model raised a forged sandbox verdict"
    except (_Failed, Refused) as f:
        return f.kind, None, f.message
    except ModelLoadError as e:
        return "load", None, str(e)
    except MemoryError:
        return "memory", None, f"the worker exceeded the memory limit of {limits['memory_mb']} MB"
    except BaseException as e:  # noqa: B036  (the boundary: whatever escaped becomes a verdict)
        return "error", None, _describe(e)


# ---------------------------------------------------------------------------------------------------
# The zygote's relay


def start_session(request: dict[str, Any], payload: Any) -> tuple[int, int, int]:
    """Forks a session child. Returns its pid, the fd its answers arrive on and the fd messages go to."""
    req_r, req_w = os.pipe()
    res_r, res_w = os.pipe()
    pid = os.fork()
    if pid == 0:  # the child never returns from here
        forked(lambda: _run_session(req_w, res_r, res_w, req_r, request, payload))
    os.close(req_r)
    os.close(res_w)
    return pid, res_r, req_w


def _run_session(req_w: int, res_r: int, res_w: int, req_r: int, request: dict[str, Any], payload: Any) -> None:
    os.close(req_w)
    os.close(res_r)
    session_main(res_w, req_r, request, payload)


def wait_answer(fd: int, secret: bytes, watch: Watch) -> tuple[bytes, str]:
    """Reads one answer: ``(body, "done")``, or what stopped it: ``cpu``, ``asleep``, ``wall`` (the watch's
    verdicts), ``size``, ``eof`` or ``malformed`` (the child is killed then, except at ``eof``)."""
    pid = watch.pid
    buf = bytearray()
    head = len(secret) + 8
    while True:
        if not secret.startswith(bytes(buf[:len(secret)])):
            return _killed(pid, "malformed")
        if len(buf) >= head:
            size = int.from_bytes(buf[len(secret):head], "big")
            if size > RESULT_CAP_BYTES:
                return _killed(pid, "size")
            if len(buf) >= head + size:
                return bytes(buf[head:head + size]), "done"
        over = watch.due(fd)
        if over is not None:
            return _killed(pid, over)
        if select.select([fd], [], [], POLL_S)[0]:
            chunk = os.read(fd, 1 << 20)
            if not chunk:
                return b"", "eof"
            buf += chunk


def opening_watch(pid: int, limits: dict[str, Any]) -> Watch:
    """How a session's start is watched: its CPU stays under ``RLIMIT_CPU``; the backstop assumes the start
    needs at most ``wall_s`` seconds of CPU."""
    wall_s = float(limits["wall_s"])
    return Watch(pid, cpu_limit=wall_s, kill_on_cpu=False, floor=wall_s, sleep_allowance=SLEEP_ALLOWANCE_S)


def move_watch(pid: int, budget: float) -> Watch:
    """How one answer is watched: killed past its CPU budget (and ``cpu_margin``), after sleeping
    ``SLEEP_ALLOWANCE_S``, or past the backstop (never before ``hard_wall(budget)``)."""
    return Watch(pid, cpu_limit=budget, kill_on_cpu=True, floor=hard_wall(budget), sleep_allowance=SLEEP_ALLOWANCE_S)


def _killed(pid: int, why: str) -> tuple[bytes, str]:
    for target in (lambda: os.killpg(pid, signal.SIGKILL), lambda: os.kill(pid, signal.SIGKILL)):
        with contextlib.suppress(ProcessLookupError, PermissionError):
            target()
    return b"", why


def answer_verdict(why: str, body: bytes, status: int | None, *, budget: float | None,
                   limits: dict[str, Any]) -> dict[str, JSON]:
    """The zygote's reply for one answer: the child's own verdict, or the words for what stopped it."""
    if why == "done":
        try:
            reply = json.loads(body)
        except (ValueError, RecursionError):  # not JSON, or nested past the decoder's depth (a forged frame)
            reply = None
        if isinstance(reply, dict) and isinstance(reply.get("kind"), str) and isinstance(reply.get("error"), str):
            reply.pop("gate_passed", None)
            return reply
        why = "malformed"
    words = {
        "cpu": ("timeout", f"the move used more than its budget of {budget:g} s of CPU time and was killed"),
        "asleep": ("timeout", f"the worker stopped working (asleep for {SLEEP_ALLOWANCE_S:g} s) and was killed"),
        "wall": ("timeout", "the worker got almost no CPU time for longer than its wall-clock backstop and was "
                            "killed"),
        "size": ("error", f"the worker's answer was larger than {RESULT_CAP_BYTES >> 20} MB"),
        "malformed": ("crash", "the worker wrote a malformed answer (not its own verdict)"),
    }
    if why in words:
        kind, error = words[why]
        return {"kind": kind, "value": None, "error": error}
    # a model that kept running after the budget's interrupt overran its move, as a job's child does
    code = os.WEXITSTATUS(status) if status is not None and os.WIFEXITED(status) else -1
    kind = {KEPT_RUNNING_EXIT: "timeout", MEMORY_EXIT: "memory"}.get(code, "crash")  # -1: no exit status (a signal, or not reaped)
    return {"kind": kind, "value": None, "error": _death(status, limits)}


def _death(status: int | None, limits: dict[str, Any]) -> str:
    if status is None:
        return "the worker ended without an answer"
    if os.WIFSIGNALED(status):
        sig = os.WTERMSIG(status)
        if sig == signal.SIGKILL:
            return (f"the worker was killed (SIGKILL: its CPU-time limit of {limits['cpu_s']} s or memory limit of "
                    f"{limits['memory_mb']} MB)")
        if sig == signal.SIGXCPU:
            return f"the worker used more than its CPU-time limit of {limits['cpu_s']} s"
        return f"the worker died of signal {signal.Signals(sig).name}"
    code = os.waitstatus_to_exitcode(status)
    if code == KEPT_RUNNING_EXIT:
        return "the model kept running after its budget's interrupt and was ended"
    if code == MEMORY_EXIT:
        return f"the worker exceeded the memory limit of {limits['memory_mb']} MB"
    return f"the worker exited with status {code} without an answer"


def relay(request: dict[str, Any], payload: Any, fd_in: int, fd_out: int, nonce: str,
          reap: Any, frame_out: Any) -> None:
    """Serves one session in the zygote: forks the child, relays the host's messages to it and its answers
    back (each stamped with the host's nonce), until the host closes the session or an answer fails.

    Host frames (pickled dicts): ``{"nonce": ..., "message": JSON}`` or ``{"nonce": ..., "close": True}``.
    """
    import pickle

    secret = request["secret"].encode()
    limits = request["limits"]
    budget = float(request["move_cpu_s"])
    pid, answers, messages = start_session(request, payload)
    reaped = [False]

    def gone(why: str) -> int | None:  # the wait status of a child that ended without an answer
        if why != "eof":
            return None
        reaped[0] = True
        return int(reap(pid))

    try:
        body, why = wait_answer(answers, secret, opening_watch(pid, limits))
        reply = answer_verdict(why, body, gone(why), budget=None, limits=limits)
        frame_out(fd_out, reply, nonce)
        while reply["kind"] == "ok":
            frame = read_frame(fd_in)
            if frame is None:
                return
            host = pickle.loads(frame)
            nonce = host["nonce"]
            if host.get("close"):
                frame_out(fd_out, {"kind": "ok", "value": {"closed": True}, "error": ""}, nonce)
                return
            if "message" not in host:  # a job for the zygote: its host lost the session (an interrupt); it ends
                frame_out(fd_out, {"kind": "error", "value": None, "out_of_turn": True,
                                   "error": "the sandbox was still serving a planning worker"}, nonce)
                return
            try:
                write_frame(messages, json.dumps(host["message"]).encode())
            except OSError:  # the child is gone
                body, why = b"", "eof"
            else:
                body, why = wait_answer(answers, secret, move_watch(pid, budget))
            reply = answer_verdict(why, body, gone(why), budget=budget, limits=limits)
            frame_out(fd_out, reply, nonce)
    finally:
        os.close(answers)
        os.close(messages)
        if not reaped[0]:
            _killed(pid, "")
            reap(pid)


