"""The sandbox's zygote process and the hardened child it forks for every job.

Run as ``python -m cwm._sandbox_child`` by ``cwm.sandbox.Sandbox`` (inside bubblewrap when available). The
zygote imports numpy, pyspiel and the check harness once, then serves jobs read from stdin: each job runs in
a forked child that drops privileges layer by layer (``cwm._sandbox_layers``), loads the candidate with
restricted builtins, runs the trusted job function, and writes one JSON message to a pipe. The zygote
enforces the wall-clock deadline, kills the child's process group, and answers the parent on stdout.

Frames, both ways: 8-byte big-endian length, then the body (pickle parent->zygote, JSON zygote->parent).
"""

from __future__ import annotations

import contextlib
import hashlib
import importlib
import json
import os
import pickle
import random
import select
import signal
import time
import traceback
from collections import OrderedDict
from typing import Any

import numpy as np
import pyspiel  # noqa: F401  (imported once here so that every child starts with it)

import cwm._sandbox_jobs  # noqa: F401
import cwm.checks  # noqa: F401
from cwm import _sandbox_layers as layers
from cwm._sandbox_gate import static_gate
from cwm.types import JSON, ModelLoadError

RESULT_CAP_BYTES = 64 << 20
KINDS = frozenset({"ok", "static", "load", "timeout", "memory", "crash", "error"})
# Bound at import, in the zygote: a candidate that monkeypatches json in its child cannot garble the verdict.
_ENCODE = json.JSONEncoder(allow_nan=False).encode
_ENCODE_LOOSE = json.JSONEncoder().encode
_PAYLOAD_CACHE_SIZE = 4


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
    """Per-job state of a child: where to write the verdict, and the per-call timer."""

    def __init__(self, fd: int, nonce: str, limits: dict[str, float]):
        self.fd, self.nonce, self.limits = fd, nonce, limits
        self.call = "the module body"
        self.fired = 0
        self.gate_passed = False

    def emit(self, kind: str, value: JSON = None, error: str = "") -> None:
        message = {"kind": kind, "value": value, "error": error, "gate_passed": self.gate_passed}
        try:
            body = _ENCODE(message).encode()
        except (TypeError, ValueError) as e:
            message.update(kind="error", value=None, error=f"the job's result is not JSON-serialisable: {e}")
            body = _ENCODE_LOOSE(message).encode()
        _write_all(self.fd, self.nonce.encode() + len(body).to_bytes(8, "big") + body)

    def on_alarm(self, signum: int, frame: Any) -> None:
        self.fired += 1
        budget = self.limits["per_call_s"]
        if self.fired == 1:
            signal.setitimer(signal.ITIMER_REAL, 0.05)  # re-armed: a model that swallows the interrupt is ended
            raise Abort("timeout", f"{self.call} ran longer than the per-call budget of {budget} s")
        self.emit("timeout", None, f"{self.call} ran longer than the per-call budget of {budget} s and "
                                   f"kept running after it was interrupted")
        os._exit(0)

    def guard(self, fn: Any, *args: Any, label: str = "") -> Any:
        """Runs one model call under the per-call budget; ``MemoryError`` becomes a memory verdict."""
        self.call = label or f"{getattr(fn, '__name__', 'call')}(...)"
        self.fired = 0
        signal.setitimer(signal.ITIMER_REAL, self.limits["per_call_s"])
        try:
            result = fn(*args)
        except MemoryError:
            raise Abort("memory", f"{self.call} exceeded the memory limit of "
                                  f"{int(self.limits['memory_mb'])} MB") from None
        finally:
            signal.setitimer(signal.ITIMER_REAL, 0)
        if self.fired:  # the model caught the interrupt and returned anyway
            raise Abort("timeout", f"{self.call} ran longer than the per-call budget of "
                                   f"{self.limits['per_call_s']} s")
        return result


_CURRENT: list[_Child] = []  # the job's child state; a list so the module's attributes never change


def call_guard(fn: Any, *args: Any) -> Any:
    """The guard trusted jobs wrap every model call in (direct when not inside a sandbox child)."""
    return _CURRENT[0].guard(fn, *args) if _CURRENT else fn(*args)


def _child_main(fd: int, request: dict[str, Any], payload: Any) -> None:
    child = _Child(fd, request["nonce"], request["limits"])
    _CURRENT[:] = [child]
    layers.detach(keep_fd=fd)
    layers.set_rlimits(request["limits"])
    signal.signal(signal.SIGALRM, child.on_alarm)
    try:
        kind, value, error = _run_job(child, request, payload)
    except Abort as a:
        kind, value, error = a.kind, None, a.message
    except ModelLoadError as e:
        kind, value, error = "load", None, str(e)
    except MemoryError:
        kind, value, error = "memory", None, f"the job exceeded the memory limit of {request['limits']['memory_mb']} MB"
    except BaseException as e:  # the sandbox boundary: whatever escaped becomes a verdict
        kind, value, error = "error", None, _describe(e)
    signal.setitimer(signal.ITIMER_REAL, 0)
    child.emit(kind, value, error)
    os._exit(0)


def _run_job(child: _Child, request: dict[str, Any], payload: Any) -> tuple[str, JSON, str]:
    source = request["source"]
    if request["gate"] and not request.get("gate_cached"):
        try:
            static_gate(source)
        except ModelLoadError as e:
            return "static", None, str(e)
    child.gate_passed = request["gate"]
    job = _resolve_job(request["job"])
    name = "cwm_model"
    try:
        code = compile(source, f"<{name}>", "exec")
    except (SyntaxError, ValueError, RecursionError, MemoryError) as e:
        return "load", None, f"{name}: source does not compile: {type(e).__name__}: {e}"
    layers.remember_source(f"<{name}>", source)
    before = layers.baseline()
    layers.install_seccomp()  # before the audit hook, which refuses ctypes
    layers.install_audit_hook()
    try:
        module = child.guard(layers.exec_module, code, name, source, label="the module body")
    except Abort:
        raise
    except Exception as e:
        return "load", None, f"{name}: running the module raised {type(e).__name__}: {e}"
    value = job(module, payload)
    tampered = layers.tampering(before)
    if tampered:
        return "error", None, tampered
    return "ok", value, ""


def _resolve_job(spec: str) -> Any:
    module_name, _, fn_name = spec.partition(":")
    fn = getattr(importlib.import_module(module_name), fn_name, None)
    if not callable(fn):
        raise ValueError(f"job {spec!r} is not a function")
    return fn


def _describe(e: BaseException) -> str:
    frames = traceback.format_exception(type(e), e, e.__traceback__, limit=-4)
    return f"the job raised {type(e).__name__}: {str(e)[:500]}\n" + "".join(frames)[-2000:]


# ---------------------------------------------------------------------------------------------------
# The zygote


def run_one(request: dict[str, Any], payload: Any) -> tuple[dict[str, JSON], int | None]:
    """Forks a child for one job and waits at most ``wall_s`` for its verdict.

    Returns:
      The verdict as a JSON-able dict, and the pid still to reap (``None`` when already reaped): a child
      that delivered a whole result is reaped after the parent has its answer.
    """
    r, w = os.pipe()
    pid = os.fork()
    if pid == 0:  # the child never returns from here
        try:
            os.close(r)
            _child_main(w, request, payload)
        finally:
            os._exit(70)
    os.close(w)
    data, why = _collect(r, pid, request["limits"]["wall_s"], request["nonce"].encode())
    os.close(r)
    if why == "done":
        try:
            reply = json.loads(data)
        except ValueError:
            reply = None
        if isinstance(reply, dict) and reply.get("kind") in KINDS and isinstance(reply.get("error"), str):
            return reply, pid
        why = "malformed"
    return _verdict(why, reap(pid), request), None


def _collect(fd: int, pid: int, wall_s: float, nonce: bytes) -> tuple[bytes, str]:
    """Reads the child's message: ``(body, "done")``, or what stopped it (``wall``, ``size``, ``eof``)."""
    deadline = time.monotonic() + wall_s
    buf = bytearray()
    head = len(nonce) + 8
    while True:
        if len(buf) >= head and buf.startswith(nonce):
            size = int.from_bytes(buf[len(nonce):head], "big")
            if size > RESULT_CAP_BYTES:
                _kill(pid)
                return b"", "size"
            if len(buf) >= head + size:
                return bytes(buf[head:head + size]), "done"
        left = deadline - time.monotonic()
        if left <= 0 or not select.select([fd], [], [], left)[0]:
            _kill(pid)
            return b"", "wall"
        chunk = os.read(fd, 1 << 20)
        if not chunk:
            return b"", "eof"
        buf += chunk


def _kill(pid: int) -> None:
    for target in (lambda: os.killpg(pid, signal.SIGKILL), lambda: os.kill(pid, signal.SIGKILL)):
        with contextlib.suppress(ProcessLookupError, PermissionError):
            target()


def reap(pid: int) -> int:
    """Waits for ``pid`` (killing it if it lingers) and returns its wait status."""
    for _ in range(200):
        done, status = os.waitpid(pid, os.WNOHANG)
        if done:
            return status
        time.sleep(0.002)
    _kill(pid)
    return os.waitpid(pid, 0)[1]


def _verdict(why: str, status: int, request: dict[str, Any]) -> dict[str, JSON]:
    limits = request["limits"]
    if why == "wall":
        return _msg("timeout", f"the job ran past the wall-clock limit of {limits['wall_s']} s and was killed")
    if why == "size":
        return _msg("error", f"the job's result was larger than {RESULT_CAP_BYTES >> 20} MB")
    if why == "malformed":
        return _msg("crash", "the child wrote a malformed result")
    if os.WIFSIGNALED(status):
        sig = os.WTERMSIG(status)
        if sig == signal.SIGXCPU:
            return _msg("timeout", f"the job used more than the CPU-time limit of {limits['cpu_s']} s")
        if sig == signal.SIGKILL:
            return _msg("crash", f"the child was killed (SIGKILL: CPU-time limit of {limits['cpu_s']} s or "
                                 f"memory limit of {limits['memory_mb']} MB)")
        return _msg("crash", f"the child died of signal {signal.Signals(sig).name}")
    return _msg("crash", f"the child exited with status {os.waitstatus_to_exitcode(status)} without a result")


def _msg(kind: str, error: str) -> dict[str, JSON]:
    return {"kind": kind, "value": None, "error": error}


def serve(fd_in: int, fd_out: int) -> None:
    """Answers jobs until the parent closes the stream. Payloads are cached by key (a trajectory set is sent
    once), and sources that passed the static gate by hash (the gate does not run again for them).

    A child that delivered its verdict is killed and reaped while the zygote waits for the next request, so
    its teardown overlaps with the parent's work instead of delaying the answer.
    """
    cache: OrderedDict[str, Any] = OrderedDict()
    gate_passed: set[bytes] = set()
    exiting: list[int] = []
    while True:
        _reap_while_idle(fd_in, exiting)
        frame = read_frame(fd_in)
        if frame is None:
            for pid in exiting:
                reap(pid)
            return
        request = pickle.loads(frame)
        key = request["payload_key"]
        if "payload" in request:
            cache[key] = pickle.loads(request.pop("payload"))
            while len(cache) > _PAYLOAD_CACHE_SIZE:
                cache.popitem(last=False)
        digest = hashlib.blake2b(request["source"].encode(), digest_size=16).digest()
        request["gate_cached"] = digest in gate_passed
        if key not in cache:
            reply: dict[str, JSON] = _msg("error", "internal: payload missing from the zygote's cache")
            reply["missing_payload"] = True
        else:
            cache.move_to_end(key)
            reply, child = run_one(request, cache[key])
            if child is not None:
                _kill(child)  # it has said all it may say
                exiting.append(child)
        if reply.pop("gate_passed", False):
            gate_passed.add(digest)
        write_frame(fd_out, json.dumps(reply).encode())


def _reap_while_idle(fd_in: int, exiting: list[int]) -> None:
    """Reaps finished children until none is left or a request arrives."""
    while exiting:
        for pid in list(exiting):
            if os.waitpid(pid, os.WNOHANG)[0]:
                exiting.remove(pid)
        if exiting and select.select([fd_in], [], [], 0.002)[0]:
            return


def warm_up() -> None:
    """Runs the gate and the check harness once in the zygote, so that children inherit warm caches instead
    of each building them again (on copy-on-write pages). Only an optimisation: a failure is ignored."""
    import types

    from cwm import _sandbox_jobs, trajectories
    from cwm.model import WORLD_MODEL_API
    from cwm.oracle import OracleFunctions

    try:
        static_gate("import math\n\ndef f(state):\n    return [math.sqrt(x) for x in state['board']]\n")
        oracle = OracleFunctions("tic_tac_toe")
        module = types.ModuleType("warm_up")
        for f in WORLD_MODEL_API:
            setattr(module, f.name, getattr(oracle, f.name))
        trajectory = trajectories.record("tic_tac_toe", seed=0)
        _sandbox_jobs.check_world_model(module, {"trajectories": [trajectory]})
    except Exception:  # a cold start is slower, not wrong
        traceback.print_exc()


def main() -> None:
    layers.die_with_parent()
    random.seed(0)
    np.random.seed(0)
    fd_out = os.dup(1)
    os.dup2(2, 1)  # stray prints in the zygote must not corrupt the protocol stream
    warm_up()
    layers.prepare_zygote()
    write_frame(fd_out, json.dumps({"ready": True, "pid": os.getpid()}).encode())
    serve(0, fd_out)


if __name__ == "__main__":  # run the imported module, not this __main__ copy, so jobs share its globals
    from cwm._sandbox_child import main as _main

    _main()
