"""The hardened child the zygote forks per job (or per batch of jobs), and the frames the processes exchange.

The child drops privileges layer by layer (``cwm.sandbox.layers``), loads the candidate with restricted
builtins, runs the trusted job function with every model call under the per-call budget (``call_guard``),
and writes one message to its pipe: the job's secret, an 8-byte length, then JSON.

The secret (fresh per job, from the zygote) and the pipe live only in ``_one_job``'s locals and the
``emit`` closure made there: no module attribute leads to them, so candidate code that reaches this module
through ``sys.modules`` finds nothing that writes a verdict.

Frames between parent and zygote: 8-byte big-endian length, then the body (pickle parent->zygote, JSON
zygote->parent).
"""

from __future__ import annotations

import functools
import gc
import importlib
import json
import os
import pickle
import signal
import sys
import traceback
from collections.abc import Callable
from typing import Any, NoReturn

from cwm.contract import CANDIDATE_MODULE
from cwm.model import direct_guard, no_beat
from cwm.sandbox import layers as layers
from cwm.sandbox.gate import static_gate
from cwm.sandbox.names import POLICIES, PYTHON_POLICY, ImportPolicy
from cwm.types import JSON, ModelLoadError

RESULT_CAP_BYTES = 64 << 20
# A stretch of model calls ticks this many times per per-call budget (``_Child.stretch``).
STRETCH_TICKS = 20
KINDS = frozenset({"ok", "static", "load", "timeout", "memory", "crash", "error"})
# The exit status of a child whose model kept running after the per-call interrupt (the zygote's verdict).
KEPT_RUNNING_EXIT = 75
# The exit status of a child that reached its memory limit where it could write no verdict (while reading a
# message or writing an answer, outside the guarded call): the parent words it as the memory verdict.
MEMORY_EXIT = 74
CRASH_EXIT = 70  # whatever else ended a child's body without a verdict
_ABORT_KINDS = frozenset({"timeout", "memory"})


def _bound_encoder(**options: Any) -> Any:
    """``json.JSONEncoder(**options).encode`` with the encoder's own method bound here: ``encode`` would look
    ``iterencode`` up on the class at call time, where a patched class forges the verdict."""
    encoder, iterencode, join = json.JSONEncoder(**options), json.JSONEncoder.iterencode, "".join
    return lambda value: join(iterencode(encoder, value, True))


# Bound at import, in the zygote: a candidate that monkeypatches json in its child cannot garble the verdict.
_ENCODE = _bound_encoder(allow_nan=False)
_ENCODE_LOOSE = _bound_encoder()


# ---------------------------------------------------------------------------------------------------
# Framing


def read_frame(fd: int) -> bytes | None:
    """One frame from ``fd``, or ``None`` at end of file."""
    head = _read_exact(fd, 8)
    if head is None:
        return None
    body = _read_exact(fd, int.from_bytes(head, "big"))
    if body is None:
        raise EOFError("stream ended inside a frame")
    return body


def _read_exact(fd: int, n: int) -> bytes | None:
    chunks, got = [], 0
    while got < n:
        chunk = os.read(fd, min(n - got, 1 << 20))
        if not chunk:
            return None
        chunks.append(chunk)
        got += len(chunk)
    return b"".join(chunks)


def write_frame(fd: int, body: bytes) -> None:
    _write_all(fd, len(body).to_bytes(8, "big") + body)


def _write_all(fd: int, data: bytes) -> None:
    view = memoryview(data)
    while view:
        view = view[os.write(fd, view):]


# ---------------------------------------------------------------------------------------------------
# The child


class Abort(BaseException):
    """Stops a job with a verdict; a ``BaseException`` so that the harness's ``except Exception`` lets it pass."""

    def __init__(self, kind: str, message: str):
        super().__init__(message)
        self.kind = kind
        self.message = message


class _Child:
    """Per-job state of a child: the per-call timer (it holds nothing that can write a verdict).

    The per-call budget counts the CPU time the child spends running Python and C code (``ITIMER_VIRTUAL``,
    user time), not wall time: a busy machine slows a call, it does not fail it. (A session's move budget
    owns ``ITIMER_PROF``; system time and a call that blocks are bounded by the zygote's watch instead.)

    One call (``guard``) arms and disarms the timer around it. A stretch of calls (``stretch``: a trajectory
    replayed by the checks, a rollout) arms it once, ticking every ``per_call_s / STRETCH_TICKS`` of CPU
    time, and each call only announces itself (``beat``: it reads the process's user CPU time, one system
    call instead of the two that arm and disarm a timer); a tick ends the announced call once the user CPU
    used since its beat reaches its budget. The time is read from the clock, not counted in ticks, because a
    tick is handled only between bytecodes: a call made of a few long built-in calls (``sum(range(n))``)
    would otherwise be seen once per built-in call however long each ran. A call is thus ended at least at
    its budget and at most one tick (``1 / STRETCH_TICKS`` of it), plus the rest of a built-in call running
    when the budget ran out, later: the same slack as a lone guarded call's, with one tick more."""

    def __init__(self, limits: dict[str, float]):
        self.limits = limits
        self.call = "the module body"
        self.fired = 0
        self.issued: list[Abort] = []  # a model that catches an Abort can build more; only these count
        self.inside = False  # inside a guarded call
        self.stretching = False
        self.what = ""  # the contract function of the last beat that announced a call
        self.resting = False  # the last beat said the library's own work follows (``REST``)
        self.started = 0.0  # user CPU seconds of the process when the current call was announced
        self.fresh_views = False  # candidates import through views of their own (a batch's later job)

    def abort(self, kind: str, message: str) -> Abort:
        self.issued.append(Abort(kind, message))
        return self.issued[-1]

    def on_alarm(self, signum: int, frame: Any) -> None:
        if self.stretching and not self.fired:
            # the CPU the announced call has used, read from the clock: a tick can arrive only between
            # bytecodes, so counting ticks would miss the time of a long built-in call
            if self.resting or os.times().user - self.started < self.limits["per_call_s"]:
                return
            self.call = f"{self.what}(...)"
        self.fired += 1
        if self.fired == 1:
            signal.setitimer(signal.ITIMER_VIRTUAL, 0.05)  # re-armed: a model that swallows the interrupt is ended
            raise self.overran()
        os._exit(KEPT_RUNNING_EXIT)  # the zygote words the verdict; only _one_job can write one

    def overran(self) -> Abort:
        return self.abort("timeout", f"{self.call} ran longer than the per-call budget of {self.limits['per_call_s']} s")

    def guard(self, fn: Any, *args: Any, label: str = "") -> Any:
        """Runs one model call under the per-call budget; ``MemoryError`` becomes a memory verdict. Inside a
        stretch the call is one beat of it."""
        if self.stretching:
            self.beat(getattr(fn, "__name__", "call"))
            return fn(*args)
        if self.inside:  # a call made from inside a guarded call: the outer call's budget covers it
            return fn(*args)
        self.call = label or f"{getattr(fn, '__name__', 'call')}(...)"
        self.fired = 0
        self.inside = True
        signal.setitimer(signal.ITIMER_VIRTUAL, self.limits["per_call_s"])
        try:
            result = fn(*args)
        except MemoryError:
            raise self.out_of_memory() from None
        finally:
            signal.setitimer(signal.ITIMER_VIRTUAL, 0)
            self.inside = False
        if self.fired:  # the model caught the interrupt and returned anyway
            raise self.overran()
        return result

    def out_of_memory(self) -> Abort:
        return self.abort("memory", f"{self.call} exceeded the memory limit of {int(self.limits['memory_mb'])} MB")

    def beat(self, what: str) -> None:
        """Announces the next model call of a stretch (``what``: its contract function), or with ``cwm.model.REST`` that
        the library's own work follows (counted against no call, as outside a lone guarded call)."""
        if self.fired:  # the model caught the interrupt and returned anyway
            raise self.overran()
        if what:
            self.started = os.times().user
            self.what, self.resting = what, False
        else:
            self.resting = True

    def stretch(self, body: Callable[[Any], Any]) -> Any:
        """Runs ``body(beat)``, a stretch of model calls each preceded by ``beat(name)``, under one timer: every
        call keeps its per-call budget (see the class). A ``MemoryError`` that leaves ``body`` becomes the
        memory verdict of the last beat's call. Inside another stretch, ``body``'s calls are beats of that one;
        inside a guarded call, its beats do nothing (that call's budget covers it)."""
        if self.stretching:  # its calls are beats of the stretch already running
            return body(self.beat)
        if self.inside:
            return body(no_beat)  # that call's budget covers it
        tick = self.limits["per_call_s"] / STRETCH_TICKS
        self.fired, self.what, self.resting, self.stretching = 0, "a model call", False, True
        self.started = os.times().user
        signal.setitimer(signal.ITIMER_VIRTUAL, tick, tick)
        try:
            result = body(self.beat)
        except MemoryError:
            self.call = f"{self.what}(...)"
            raise self.out_of_memory() from None
        finally:
            signal.setitimer(signal.ITIMER_VIRTUAL, 0)
            self.stretching = False
        if self.fired:
            raise self.overran()
        return result


_CURRENT: list[_Child] = []  # the job's child state; a list so the module's attributes never change


def call_guard(fn: Any, *args: Any) -> Any:
    """The guard trusted jobs wrap every model call in (direct when not inside a sandbox child)."""
    return _CURRENT[0].guard(fn, *args) if _CURRENT else fn(*args)


def child_guard() -> Any:
    """The guard of a job's model (``cwm.model.Guard``): inside a sandbox child, its per-call budget, with
    ``stretch`` (``_Child.stretch``: one timer for a run of calls, as ``WorldModel.stretch`` and the checks'
    replays use it), ``ends_job`` (an overrun ends the job with its verdict, so the checks may replay a whole
    trajectory as one stretch) and ``passes`` (``(MemoryError,)``: what the checks let through a model call,
    for the stretch to word as the memory verdict, as a lone guarded call does). Outside one, a plain call."""
    if not _CURRENT:
        return direct_guard
    child = _CURRENT[0]
    guard = functools.partial(child.guard)
    guard.stretch = child.stretch  # type: ignore[attr-defined]
    guard.ends_job = True  # type: ignore[attr-defined]
    guard.passes = (MemoryError,)  # type: ignore[attr-defined]
    return guard


def _emitter(fd: int, secret: bytes) -> Any:
    """The one function that writes this job's verdict: ``secret``, an 8-byte length, then JSON.

    Only the function that made it (``_one_job``) may call it: code that found it by walking frames and
    calls it gets an ``error`` verdict written in its place, and the process ends.
    """
    encode, encode_loose, write_all, getframe, leave = _ENCODE, _ENCODE_LOOSE, _write_all, sys._getframe, os._exit
    maker = getframe(1).f_code

    def emit(kind: str, value: JSON, error: str, gate_passed: bool) -> None:
        message = {"kind": kind, "value": value, "error": error, "gate_passed": gate_passed}
        forged = getframe(1).f_code is not maker
        if forged:
            message = {"kind": "error", "value": None, "gate_passed": False,
                       "error": "the model called the sandbox's verdict writer itself (a forged verdict)"}
        try:
            body = encode(message).encode()
        except (TypeError, ValueError) as e:
            message.update(kind="error", value=None, error=f"the job's result is not JSON-serialisable: {e}")
            body = encode_loose(message).encode()
        write_all(fd, secret + len(body).to_bytes(8, "big") + body)
        if forged:
            leave(0)

    return emit


def child_main(fd: int, request: dict[str, Any], payload: Any) -> None:
    """Runs one job in this (forked) process and writes its verdict to ``fd``; never returns. A JAX twin's job
    (``policy`` ``jax``) starts JAX first (``layers.prepare_jax``), before any layer."""
    if request.get("policy") == "jax":
        layers.prepare_jax()
    _harden(request["limits"], keep=(fd,))
    _one_job(fd, request, payload, layered=False)
    os._exit(0)


def batch_main(req_fd: int, res_fd: int, payloads: dict[str, tuple[Any, bytes]]) -> None:
    """Runs a batch of jobs one after another in this (forked) process; never returns.

    Each job's request (pickled, its own secret and limits) is read from ``req_fd`` once the zygote has set
    this process's resource limits for it, and its verdict is written to ``res_fd`` as ``child_main`` writes
    one. The candidate of each job is a fresh module (gated, compiled and run anew), its payload a fresh copy
    (unpickled from ``payloads``' bytes; the first job using a payload takes the object inherited from the
    zygote, which nothing has touched), the random generators are reseeded (``layers.baseline``), and the
    layers are switched on once, before the first candidate. After a verdict the process collects its
    garbage (a finalizer the candidate left runs now, not during the next job) and checks that nothing a
    later check could observe has changed (``layers.leftovers``); only then does it say it is ready for the
    next job (an empty frame under the job's secret). Anything else (a verdict but ``ok`` or ``static``,
    state left behind) ends the process, and the zygote runs the rest of the batch in a fresh one.
    """
    leftovers, collect = layers.leftovers, gc.collect  # taken before any candidate runs
    _harden(None, keep=(req_fd, res_fd))
    layered, used = False, set()
    while (frame := read_frame(req_fd)) is not None:
        request = pickle.loads(frame)
        key = request["payload_key"]
        payload = payloads[key][0] if key not in used else pickle.loads(payloads[key][1])
        used.add(key)
        secret = request["secret"].encode()
        kind, before = _one_job(res_fd, request, payload, layered=layered)
        del payload
        layered = layered or before is not None
        if kind not in ("ok", "static"):
            break
        collect()
        if before is not None and leftovers(before, attributes=not request["gate"]):
            break
        _write_all(res_fd, secret + bytes(8))
    os._exit(0)


def _harden(limits: dict[str, float] | None, *, keep: tuple[int, ...]) -> None:
    """The layers every child takes before any candidate runs: its own process group and only ``keep``
    open, resource limits (``limits``; ``None``: a batch's, which the zygote sets per job), no capabilities."""
    layers.detach(keep=keep)
    if limits is not None:
        layers.set_rlimits(limits)
    else:
        layers.set_batch_rlimits()
    layers.drop_capabilities()


def _one_job(fd: int, request: dict[str, Any], payload: Any, *, layered: bool) -> tuple[str, Any]:
    """Runs one job and writes its verdict to ``fd``. ``layered``: seccomp and the audit hook are on already
    (a later job of a batch).

    Returns:
      The verdict's kind, and the snapshot the job was compared against (``None`` when the candidate never
      ran: the gate or the compiler refused it).
    """
    emit = _emitter(fd, request.pop("secret").encode())
    del fd  # only in the closure that writes the verdict
    gated = bool(request["gate"])
    child = _Child(request["limits"])
    child.fresh_views = layered
    _CURRENT[:] = [child]
    signal.signal(signal.SIGVTALRM, child.on_alarm)
    ran: list[Any] = []
    try:
        kind, value, error = _run_job(child, request, payload, layered, ran)
    except Abort as a:
        if a.kind in _ABORT_KINDS and any(a is issued for issued in child.issued):
            kind, value, error = a.kind, None, a.message
        else:
            kind, value, error = "error", None, "the model raised a forged sandbox verdict"
    except ModelLoadError as e:
        kind, value, error = "load", None, str(e)
    except MemoryError:
        kind, value, error = "memory", None, f"the job exceeded the memory limit of {request['limits']['memory_mb']} MB"
    except BaseException as e:  # the sandbox boundary: whatever escaped becomes a verdict
        kind, value, error = "error", None, _describe(e)
    signal.setitimer(signal.ITIMER_VIRTUAL, 0)
    emit(kind, value, error, gated and kind != "static")
    return kind, ran[0] if ran else None


def forked(body: Callable[[], None]) -> NoReturn:
    """Runs a forked child's body and ends the process, never returning: a ``MemoryError`` that escaped the
    body's own verdicts exits ``MEMORY_EXIT``, anything else ``CRASH_EXIT`` (the body ends the process itself
    once it has written its verdict)."""
    try:
        body()
    except MemoryError:
        os._exit(MEMORY_EXIT)
    finally:
        os._exit(CRASH_EXIT)


class Refused(Exception):
    """The candidate could not be loaded: ``kind`` is ``static`` (the gate) or ``load``."""

    def __init__(self, kind: str, message: str):
        super().__init__(message)
        self.kind = kind
        self.message = message


def _run_job(child: _Child, request: dict[str, Any], payload: Any, layered: bool,
             ran: list[Any]) -> tuple[str, JSON, str]:
    """The job's verdict; ``ran`` receives the snapshot taken before the candidate ran, once it is loaded."""
    job = _resolve_job(request["job"])
    tampering = layers.tampering  # taken before the candidate runs, like the job function
    try:
        module, before = open_candidate(child, request, layered=layered)
    except Refused as r:
        return r.kind, None, r.message
    ran.append(before)
    value = job(module, payload)
    tampered = tampering(before)
    if tampered:
        return "error", None, tampered
    return "ok", value, ""


def open_candidate(child: _Child, request: dict[str, Any], *, layered: bool = False) -> tuple[Any, dict[str, Any]]:
    """Gates and compiles the request's source, switches on the last layers (seccomp, the audit hook; unless
    ``layered``: a batch's later job, where they are on already) and runs the module body under the per-call
    budget.

    Returns:
      The module and the harness's snapshot taken before the candidate ran (``layers.tampering``).

    Raises:
      Refused: the gate refused the source, or it does not compile or its body raised.
    """
    source = request["source"]
    policy = POLICIES[request.get("policy", "python")]
    if request["gate"] and not request.get("gate_cached"):
        _gate(source, policy)
    code = _compile(source, CANDIDATE_MODULE)
    before = layers.baseline()
    if not layered:
        layers.install_seccomp()  # before the audit hook, which refuses ctypes
        layers.install_audit_hook()
    return _exec(child, code, CANDIDATE_MODULE, source, policy), before


def load_extra(source: str, name: str) -> Any:
    """Loads one more candidate module in a job that already runs under every layer (a bundle's
    inference or value file beside its model): the gate, then its body under the per-call budget.

    Raises:
      Refused: as ``open_candidate``.
    """
    _gate(source)
    return _exec(_CURRENT[0], _compile(source, name), name, source)


def _gate(source: str, policy: ImportPolicy = PYTHON_POLICY) -> None:
    try:
        static_gate(source, policy=policy)
    except ModelLoadError as e:
        raise Refused("static", str(e)) from None


def _compile(source: str, name: str) -> Any:
    try:
        code = compile(source, f"<{name}>", "exec", dont_inherit=True)  # not this module's __future__ flags
    except (SyntaxError, ValueError, RecursionError, MemoryError) as e:
        raise Refused("load", f"{name}: source does not compile: {type(e).__name__}: {e}") from None
    layers.remember_source(f"<{name}>", source)
    return code


def _exec(child: _Child, code: Any, name: str, source: str, policy: ImportPolicy = PYTHON_POLICY) -> Any:
    try:
        label = "the module body" if name == CANDIDATE_MODULE else f"the module body of {name}"
        return child.guard(layers.exec_module, code, name, source, child.fresh_views, policy, label=label)
    except Abort:
        raise
    except Exception as e:
        raise Refused("load", f"{name}: running the module raised {type(e).__name__}: {e}") from None


def _resolve_job(spec: str) -> Any:
    module_name, _, fn_name = spec.partition(":")
    fn = getattr(importlib.import_module(module_name), fn_name, None)
    if not callable(fn):
        raise ValueError(f"job {spec!r} is not a function")
    return fn


def _describe(e: BaseException) -> str:
    frames = traceback.format_exception(type(e), e, e.__traceback__, limit=-4)
    return f"the job raised {type(e).__name__}: {str(e)[:500]}\n" + "".join(frames)[-2000:]
