"""The sandbox's zygote: a process with numpy, pyspiel and the check harness imported and warmed once, which
forks one hardened child (``cwm.sandbox.child``) per job, or per batch of jobs while they pass (``run_batch``).

Run as ``python -m cwm.sandbox.zygote`` by ``cwm.sandbox.Sandbox`` (inside bubblewrap when available). It
reads jobs from stdin, watches each child's CPU time from outside (``cwm.sandbox.watch``: CPU time decides,
wall time is only a backstop that grows with machine load), kills the child's process group, turns how the
child ended into a verdict, and answers on stdout.
"""

from __future__ import annotations

import contextlib
import gc
import hashlib
import json
import os
import pickle
import random
import secrets
import select
import signal
import time
import traceback
from collections import OrderedDict
from typing import Any

import numpy as np
import pyspiel  # noqa: F401  (imported once here so that every child starts with it)

from cwm.games import trajectories
from cwm.games.oracle import OracleFunctions
from cwm.model import WORLD_MODEL_API
from cwm.sandbox import jobs as jobs  # every job server, imported before any child is forked
from cwm.sandbox import layers as layers
from cwm.sandbox import worker
from cwm.sandbox.child import (
    KEPT_RUNNING_EXIT,
    KINDS,
    MEMORY_EXIT,
    RESULT_CAP_BYTES,
    batch_main,
    child_main,
    forked,
    read_frame,
    write_frame,
)
from cwm.sandbox.gate import static_gate
from cwm.sandbox.watch import POLL_S, SLEEP_ALLOWANCE_S, Watch, cpu_and_state
from cwm.types import JSON

_PAYLOAD_CACHE_SIZE = 4

class Spare:
    """A child forked ahead of the next request (off the critical path), waiting on a pipe for its job.

    It holds the payloads cached when it was forked, so it can serve a request whose payload is among them.
    """

    def __init__(self, cache: dict[str, Any]):
        self.keys = frozenset(cache)
        req_r, self.req_w = os.pipe()
        self.res_r, res_w = os.pipe()
        self.pid = os.fork()
        if self.pid == 0:  # the child never returns from here
            forked(lambda: self._serve(req_r, res_w, cache))
        os.close(req_r)
        os.close(res_w)

    def _serve(self, req_r: int, res_w: int, cache: Any) -> None:
        """The spare child's body: wait for the job, then run it."""
        os.close(self.req_w)
        os.close(self.res_r)
        layers.detach(keep=(req_r, res_w))
        request = pickle.loads(_read_all(req_r))
        os.close(req_r)
        child_main(res_w, request, cache[request["payload_key"]])

    def hand(self, request: dict[str, Any]) -> bool:
        """Gives the spare its job; ``False`` if it cannot take it (then it is ended)."""
        try:
            if request["payload_key"] in self.keys:
                _write_all(self.req_w, pickle.dumps(request, protocol=pickle.HIGHEST_PROTOCOL))
                return True
        except OSError:
            pass
        finally:
            os.close(self.req_w)
        return False


def _read_all(fd: int) -> bytes:
    chunks = []
    while chunk := os.read(fd, 1 << 20):
        chunks.append(chunk)
    return b"".join(chunks)


def _write_all(fd: int, data: bytes) -> None:
    view = memoryview(data)
    while view:
        view = view[os.write(fd, view):]


def start(request: dict[str, Any], payload: Any, spare: Spare | None) -> tuple[int, int, list[int]]:
    """Starts the job in the spare when it can take it, else in a fresh fork.

    Returns:
      The child's pid, the fd its verdict arrives on, and pids of discarded spares to reap.
    """
    discarded: list[int] = []
    if spare is not None:
        if spare.hand(request):
            return spare.pid, spare.res_r, discarded
        _kill(spare.pid)
        os.close(spare.res_r)
        discarded.append(spare.pid)
    r, w = os.pipe()
    pid = os.fork()
    if pid == 0:  # the child never returns from here
        forked(lambda: _run_child(r, w, request, payload))
    os.close(w)
    return pid, r, discarded


def _run_child(r: int, w: int, request: dict[str, Any], payload: Any) -> None:
    os.close(r)
    child_main(w, request, payload)


def finish(pid: int, fd: int, request: dict[str, Any], *, close: bool = True) -> tuple[dict[str, JSON], int | None]:
    """Waits for the child's verdict while it keeps within its limits (``job_watch``).

    Args:
      close: close ``fd`` once the verdict is in (``False``: a batch child's, which says more).

    Returns:
      The verdict as a JSON-able dict, and the pid still to reap (``None`` when already reaped): a child
      that delivered a whole result is reaped after the parent has its answer.
    """
    data, why = _collect(fd, job_watch(pid, request["limits"]), request["secret"].encode())
    if close:
        os.close(fd)
    if why == "done":
        try:
            reply = json.loads(data)
        except (ValueError, RecursionError):  # not JSON, or nested past the decoder's depth (a forged frame)
            reply = None
        if isinstance(reply, dict) and reply.get("kind") in KINDS and isinstance(reply.get("error"), str):
            return reply, pid
        why = "malformed"
    return _verdict(why, reap(pid), request), None


def run_one(request: dict[str, Any], payload: Any) -> tuple[dict[str, JSON], int | None]:
    """Forks a child for one job and waits for its verdict (``finish``)."""
    pid, fd, _ = start(request, payload, None)
    return finish(pid, fd, request)


def job_watch(pid: int, limits: dict[str, Any]) -> Watch:
    """How a job's child is watched: killed past its CPU-time limit, after sleeping ``SLEEP_ALLOWANCE_S`` in
    all (whatever ``wall_s`` says: a small ``wall_s`` must not make a verdict depend on the load), or past
    the wall backstop (at least ``wall_s``, growing while the machine is busy)."""
    return Watch(pid, cpu_limit=float(limits["cpu_s"]), kill_on_cpu=True, floor=float(limits["wall_s"]),
                 sleep_allowance=SLEEP_ALLOWANCE_S)


def _collect(fd: int, watch: Watch, secret: bytes) -> tuple[bytes, str]:
    """Reads the child's message: ``(body, "done")``, or what stopped it (``cpu``, ``asleep``, ``wall``: the
    watch's verdicts; ``size``, ``eof``, ``malformed``: bytes that do not start with the job's secret,
    written by the candidate)."""
    buf = bytearray()
    head, size = len(secret) + 8, 0
    while True:
        if not secret.startswith(bytes(buf[:len(secret)])):
            _kill(watch.pid)
            return b"", "malformed"
        if len(buf) >= head:
            size = int.from_bytes(buf[len(secret):head], "big")
            if size > RESULT_CAP_BYTES:
                _kill(watch.pid)
                return b"", "size"
            if len(buf) >= head + size:
                return bytes(buf[head:head + size]), "done"
        over = watch.due(fd)
        if over is not None:
            _kill(watch.pid)
            return b"", over
        if not select.select([fd], [], [], POLL_S)[0]:
            continue
        wanted = head - len(buf) if len(buf) < head else head + size - len(buf)
        chunk = os.read(fd, min(wanted, 1 << 20))  # never past this message: a batch child's next one follows
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
    if why == "cpu":
        return _msg("timeout", f"the job used more than the CPU-time limit of {limits['cpu_s']} s and was killed")
    if why == "asleep":
        return _msg("timeout", f"the job stopped working (asleep for {SLEEP_ALLOWANCE_S:g} s) and was killed")
    if why == "wall":
        return _msg("timeout", "the job got almost no CPU time (under 2% of a core) for longer than its "
                               "wall-clock backstop and was killed")
    if why == "size":
        return _msg("error", f"the job's result was larger than {RESULT_CAP_BYTES >> 20} MB")
    if why == "malformed":
        return _msg("crash", "the child wrote a malformed result (not the job's own verdict)")
    if os.WIFSIGNALED(status):
        sig = os.WTERMSIG(status)
        if sig == signal.SIGXCPU:
            return _msg("timeout", f"the job used more than the CPU-time limit of {limits['cpu_s']} s")
        if sig == signal.SIGKILL:
            return _msg("crash", f"the child was killed (SIGKILL: CPU-time limit of {limits['cpu_s']} s or "
                                 f"memory limit of {limits['memory_mb']} MB)")
        return _msg("crash", f"the child died of signal {signal.Signals(sig).name}")
    if os.waitstatus_to_exitcode(status) == MEMORY_EXIT:
        return _msg("memory", f"the job exceeded the memory limit of {limits['memory_mb']} MB")
    if os.waitstatus_to_exitcode(status) == KEPT_RUNNING_EXIT:
        return _msg("timeout", f"a model call ran longer than the per-call budget of {limits['per_call_s']} s "
                               f"and kept running after it was interrupted")
    return _msg("crash", f"the child exited with status {os.waitstatus_to_exitcode(status)} without a result")


def _msg(kind: str, error: str) -> dict[str, JSON]:
    return {"kind": kind, "value": None, "error": error}


class BatchChild:
    """A child forked for a batch of jobs (``cwm.sandbox.child.batch_main``): it is handed one job at a time
    and says after each whether it can take another."""

    def __init__(self, payloads: dict[str, tuple[Any, bytes]]):
        req_r, self.req_w = os.pipe()
        self.res_r, res_w = os.pipe()
        self.pid = os.fork()
        if self.pid == 0:  # the child never returns from here
            forked(lambda: self._serve(req_r, res_w, payloads))
        os.close(req_r)
        os.close(res_w)

    def _serve(self, req_r: int, res_w: int, payloads: dict[str, tuple[Any, bytes]]) -> None:
        os.close(self.req_w)
        os.close(self.res_r)
        batch_main(req_r, res_w, payloads)

    def hand(self, request: dict[str, Any]) -> bool:
        """Sets the child's limits for ``request`` and gives it the job; ``False`` if it cannot take it."""
        try:
            layers.job_rlimits(self.pid, request["limits"], cpu_and_state(self.pid)[0])
            write_frame(self.req_w, pickle.dumps(request, protocol=pickle.HIGHEST_PROTOCOL))
            return True
        except OSError:
            return False

    def ready(self, request: dict[str, Any]) -> bool:
        """Whether the child, its garbage collected and nothing left behind, asks for the next job (an empty
        frame under the last job's secret), within that job's per-call budget of CPU time."""
        watch = Watch(self.pid, cpu_limit=float(request["limits"]["per_call_s"]), kill_on_cpu=True,
                      floor=float(request["limits"]["wall_s"]), sleep_allowance=SLEEP_ALLOWANCE_S)
        data, why = _collect(self.res_r, watch, request["secret"].encode())
        return why == "done" and data == b""

    def end(self, reaped: bool = False) -> list[int]:
        """Ends the child (it has said all it may say): its pid to reap, unless ``reaped`` already."""
        for fd in (self.req_w, self.res_r):
            with contextlib.suppress(OSError):
                os.close(fd)
        if reaped:
            return []
        _kill(self.pid)
        return [self.pid]


def run_batch(requests: list[dict[str, Any]], cache: dict[str, Any], raw: dict[str, bytes],
              exiting: list[int]) -> list[dict[str, JSON]]:
    """The verdicts of ``requests``, run one after another in as few children as they allow: a child runs the
    next job only after an ``ok`` or ``static`` verdict and its ``ready``. A job whose child dies, overruns
    or is killed gets that verdict (``finish``), as in a child of its own; the jobs after it run in a fresh
    child. A job a fresh child cannot take (its limits could not be set) runs in a child of its own. Each
    verdict says which child of the batch ran it (``child``: 0, 1, ...)."""
    replies: list[dict[str, JSON]] = []
    payloads = {k: (cache[k], raw[k]) for k in {r["payload_key"] for r in requests}}
    child: BatchChild | None = None
    forks = 0
    for request in requests:
        for _ in range(2):  # a child that cannot take the job (it ended after its ready frame): a fresh one
            if child is None:
                child, forks = BatchChild(payloads), forks + 1
            if child.hand(request):
                break
            exiting += child.end()
            child = None
        if child is None:  # not even a fresh child could take it (its limits could not be set): a child of its own
            reply, pid = run_one(request, cache[request["payload_key"]])
            forks += 1
            replies.append(dict(reply, child=forks - 1))
            exiting += [pid] if pid is not None else []
            continue
        reply, pid = finish(child.pid, child.res_r, request, close=False)
        replies.append(dict(reply, child=forks - 1))
        if pid is None or reply["kind"] not in ("ok", "static") or not child.ready(request):
            exiting += child.end(reaped=pid is None)
            child = None
    if child is not None:
        exiting += child.end()
    return replies


def serve(fd_in: int, fd_out: int) -> None:
    """Answers jobs until the parent closes the stream. Payloads are cached by key (a trajectory set is sent
    once), and sources that passed the static gate by hash (the gate does not run again for them).

    After each answer a spare child is forked for the next job, and the finished child is killed and reaped
    while the zygote waits for the next request: both overlap with the parent's work instead of delaying
    the answer.
    """
    cache: OrderedDict[str, Any] = OrderedDict()
    raw: dict[str, bytes] = {}  # the pickled form of each cached payload: a batch's later jobs get fresh copies
    gate_passed: set[bytes] = set()
    exiting: list[int] = []
    spare: Spare | None = None
    while True:
        _reap_while_idle(fd_in, exiting)
        frame = read_frame(fd_in)
        if frame is None:
            if spare is not None:
                _kill(spare.pid)
                exiting.append(spare.pid)
            for pid in exiting:
                reap(pid)
            return
        request = pickle.loads(frame)
        nonce = request.pop("nonce")  # echoed in the answer; the child never sees it
        for key, data in request.pop("payloads", {}).items():
            _cache_payload(cache, raw, key, data)
        if "batch" in request:
            _frame_out(fd_out, _serve_batch(request["batch"], cache, raw, gate_passed, exiting), nonce)
            continue
        request["secret"] = secrets.token_hex(16)  # the child's verdict must start with it
        key = request["payload_key"]
        if "payload" in request:
            _cache_payload(cache, raw, key, request.pop("payload"))
        # the gate's verdict holds for one source under one import policy
        digest = hashlib.blake2b(request["source"].encode(), digest_size=16,
                                 person=str(request.get("policy", "python")).encode()[:16]).digest()
        request["gate_cached"] = digest in gate_passed
        if request.get("session") and key in cache:  # a planning worker: serve it until the host closes it
            cache.move_to_end(key)
            worker.relay(request, cache[key], fd_in, fd_out, nonce, reap, _frame_out)
            continue
        if key not in cache:
            reply: dict[str, JSON] = _msg("error", "internal: payload missing from the zygote's cache")
            reply["missing_payload"] = True
        else:
            cache.move_to_end(key)
            pid, fd, discarded = start(request, cache[key], spare)
            spare = None  # used or discarded
            exiting += discarded
            reply, child = finish(pid, fd, request)
            if child is not None:
                _kill(child)  # it has said all it may say
                exiting.append(child)
        if reply.pop("gate_passed", False) and request["gate"]:
            gate_passed.add(digest)
        reply["nonce"] = nonce
        write_frame(fd_out, json.dumps(reply).encode())
        if spare is None:
            spare = Spare(cache)


def _cache_payload(cache: OrderedDict[str, Any], raw: dict[str, bytes], key: str, data: bytes) -> None:
    """Caches a payload sent by the host, unpickled and as sent, the oldest dropped past the cache's size."""
    cache[key] = pickle.loads(data)
    raw[key] = data
    cache.move_to_end(key)
    while len(cache) > _PAYLOAD_CACHE_SIZE:
        raw.pop(cache.popitem(last=False)[0], None)


def _serve_batch(batch: list[dict[str, Any]], cache: OrderedDict[str, Any], raw: dict[str, bytes],
                 gate_passed: set[bytes], exiting: list[int]) -> dict[str, JSON]:
    """The answer to a batch of jobs (``run_batch``): ``{"replies": [verdict, ...]}`` in order, or a
    ``missing_payload`` error when a payload is not in the cache (the host sends them and asks again)."""
    if any(r["payload_key"] not in cache for r in batch):
        reply: dict[str, JSON] = _msg("error", "internal: payload missing from the zygote's cache")
        reply["missing_payload"] = True
        return reply
    digests = []
    for request in batch:
        request["secret"] = secrets.token_hex(16)
        digests.append(hashlib.blake2b(request["source"].encode(), digest_size=16).digest())
        request["gate_cached"] = digests[-1] in gate_passed
    replies = run_batch(batch, cache, raw, exiting)
    for request, digest, reply in zip(batch, digests, replies):
        if reply.pop("gate_passed", False) and request["gate"]:
            gate_passed.add(digest)
    return {"kind": "ok", "error": "", "replies": replies}  # type: ignore[dict-item]


def _frame_out(fd_out: int, reply: dict[str, JSON], nonce: str) -> None:
    write_frame(fd_out, json.dumps(dict(reply, nonce=nonce)).encode())


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

    try:
        static_gate("import math\n\ndef f(state):\n    return [math.sqrt(x) for x in state['board']]\n")
        oracle = OracleFunctions("tic_tac_toe")
        module = types.ModuleType("warm_up")
        for f in WORLD_MODEL_API:
            setattr(module, f.name, getattr(oracle, f.name))
        trajectory = trajectories.record("tic_tac_toe", seed=0)
        jobs.check.check_world_model(module, {"trajectories": [trajectory]})
    except Exception:  # a cold start is slower, not wrong
        traceback.print_exc()


def main() -> None:
    layers.die_with_parent()
    layers.not_dumpable()  # children (same user) cannot open /proc/ZYGOTE/fd or take its reply pipe
    random.seed(0)
    np.random.seed(0)
    fd_out = os.dup(1)
    os.dup2(2, 1)  # stray prints in the zygote must not corrupt the protocol stream
    warm_up()
    layers.prepare_zygote()
    # Everything alive now is shared with every child: frozen, the collector in a child never walks (and so
    # never writes to, and copies) these objects' pages, which made a planning worker's first search slow.
    gc.collect()
    gc.freeze()
    try:
        write_frame(fd_out, json.dumps({"ready": True, "pid": os.getpid()}).encode())
        serve(0, fd_out)
    except BrokenPipeError:  # the host is gone (it ended, or was killed mid-answer): nobody to answer or tell
        os._exit(0)


if __name__ == "__main__":
    main()
