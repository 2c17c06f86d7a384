"""Helpers of the synthesis tests: scripted replies from files, rules text, scripted clients."""

from __future__ import annotations

import threading
from pathlib import Path

from cwm.llm import Ledger, LLMError, Request, Response, ScriptedClient, Usage

DATA = Path(__file__).resolve().parents[1] / "data" / "synthesis"
REPLIES = DATA / "tic_tac_toe"
RULES = (DATA / "tic_tac_toe_rules.md").read_text(encoding="utf-8")


def reply(name: str) -> str:
    """One scripted LLM reply (a file under tests/data/synthesis/tic_tac_toe/)."""
    return (REPLIES / f"{name}.md").read_text(encoding="utf-8")


def program(name: str) -> str:
    """One hand-written tic-tac-toe model (tests/data/synthesis/ttt_*.py)."""
    return (DATA / f"ttt_{name}.py").read_text(encoding="utf-8")


BUGGY_THEN_FIXED = ["01_initial_buggy", "02_refine_partial", "03_refine_correct"]




class Killed(RuntimeError):
    """Raised by ``KillAfter`` to interrupt a run as a crash or Ctrl-C would."""


class KillAfter:
    """Passes the first ``k`` calls to ``inner``, then raises ``Killed`` (the process 'dies')."""

    def __init__(self, inner: ScriptedClient, k: int):
        self.inner, self.k, self.model, self.ledger = inner, k, inner.model, inner.ledger
        self.seen = 0
        self._lock = threading.Lock()

    def complete(self, request: Request) -> Response:
        with self._lock:
            self.seen += 1
            if self.seen > self.k:
                raise Killed(f"killed at call {self.seen}")
        return self.inner.complete(request)


class IndexedClient:
    """Answers call ``i`` (``Request.sample_index``) with ``replies[i]`` whatever the arrival order, so
    runs with several calls in flight are scripted exactly; counts how often each call was asked."""

    def __init__(self, replies: list[str], *, model: str = "indexed"):
        self.replies, self.model = replies, model
        self.asked: dict[int, int] = {}
        self._lock = threading.Lock()
        self.ledger = Ledger()

    def complete(self, request: Request) -> Response:
        return self.ledger.count(self.model, request, self._answer)

    def _answer(self, request: Request) -> Response:
        i = request.sample_index
        with self._lock:
            self.asked[i] = self.asked.get(i, 0) + 1
        if i >= len(self.replies):
            raise LLMError(f"IndexedClient has no reply for call {i}")
        return Response((self.replies[i],), ("STOP",), Usage(10, 20, 0), 0.0, self.model)


def synthesize(run_dir: Path, llm: object, **kw: object) -> object:
    """A tic-tac-toe synthesis with the test rules, no generated test set and a small budget by default.

    Candidates are checked in-process (``isolate=False``) here to keep the loop's tests fast and
    independent; ``test_synth_sandbox.py`` runs the loop with the sandbox.
    """
    from cwm.synthesis import SynthesisSettings, synthesize_world_model

    options: dict = {"rules": RULES, "num_test": 0, "budget": 10, "isolate": False, **kw}
    names = set(vars(SynthesisSettings()))
    settings = SynthesisSettings.of("world_model", **{k: v for k, v in options.items() if k in names and v is not None})
    rest = {k: v for k, v in options.items() if k not in names}
    return synthesize_world_model("tic_tac_toe", llm, settings, run_dir=run_dir, **rest)


class SlowIndexedClient(IndexedClient):
    """An ``IndexedClient`` whose calls take a seeded-random time, counting the most calls in flight."""

    def __init__(self, replies: list[str], *, seed: int = 0, model: str = "indexed"):
        super().__init__(replies, model=model)
        import random

        self._delays = random.Random(seed)
        self.in_flight = 0
        self.max_in_flight = 0

    def complete(self, request: Request) -> Response:
        import time

        with self._lock:
            self.in_flight += 1
            self.max_in_flight = max(self.max_in_flight, self.in_flight)
            delay = self._delays.uniform(0.0, 0.05)
        time.sleep(delay)
        try:
            return super().complete(request)
        finally:
            with self._lock:
                self.in_flight -= 1
