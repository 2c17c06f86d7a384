"""The core both strategies share: journaled LLM calls in flight in parallel, candidates scored into nodes.

Determinism: calls get consecutive indices when submitted, and replies are processed strictly in
submission order (waiting for the oldest call even if a later one finished first). A strategy decides
what to submit only from processed results, so a fixed seed gives the same run whatever the timing.

Resume: each call's request and response are journaled under the run directory when the call returns
(in the worker thread, so a paid reply is kept even if the run is interrupted before using it). A call
whose index is in the journal is answered from it without contacting the LLM.

Spend: before a request goes out, the call is marked as being sent (durably); the marker goes once the
reply is journaled, after the ledger holding it was saved. A marker a stopped session (a kill -9, a
crash) left behind is a request that may have been billed without any ledger counting it: the next
session counts it as possibly paid (``Ledger.record_possibly_paid``), says so in one line, and sends the
call again when the run reaches it. So the ledger never counts fewer requests than were billed.
"""

from __future__ import annotations

import collections
import concurrent.futures as cf
import dataclasses
import logging
import threading
from collections.abc import Callable
from typing import Any

from cwm.llm import BlockedError, Client, LLMError, Message, Request, Response, Usage
from cwm.llm.base import usage_at_most
from cwm.llm.prices import cost_usd
from cwm.sandbox.checkers import BatchChecker
from cwm.synthesis.extract import CodeExtractionError, extract_code
from cwm.synthesis.store import RunStore
from cwm.synthesis.target import Target
from cwm.synthesis.types import CurvePoint, Node
from cwm.types import CheckReport, error_report

log = logging.getLogger("cwm.synthesis")

Progress = Callable[["Engine"], None]
ExpandRule = Callable[[float, "Node | None"], bool]


class Engine:
    """Submits LLM calls, journals them, and turns replies into scored nodes.

    Args:
      target: what is synthesised.
      llm: the client.
      store: the run directory.
      budget: the most LLM calls this run may make (journaled calls included).
      seed: mixed with the call index into each request's provider seed.
      concurrency: LLM calls in flight at once (a thread pool of this size).
      request_options: further ``Request`` fields (temperature, max_output_tokens, n, thinking_budget).
      progress: called after each processed call.

    Attributes:
      possibly_paid: calls an earlier session left in flight when it stopped, counted as possibly paid in
        this session's ledger.
    """

    def __init__(self, target: Target, llm: Client, store: RunStore, *, budget: int, seed: int,
                 concurrency: int = 1, request_options: dict[str, Any] | None = None,
                 progress: Progress | None = None):
        if budget < 1:
            raise ValueError(f"the LLM-call budget must be at least 1, got {budget}")
        if concurrency < 1:
            raise ValueError(f"concurrency must be at least 1, got {concurrency}")
        self.target, self.llm, self.store = target, llm, store
        self.budget, self.seed, self.concurrency = budget, seed, concurrency
        self.request_options = dict(request_options or {})
        self.progress = progress
        self.system = target.render("system")
        self.nodes: list[Node] = []
        self.reports: dict[int, CheckReport] = {}
        self._texts: dict[int, str] = {}  # node id -> the reply text it came from
        self.curve: list[CurvePoint] = []
        self.usage = Usage()
        self.submitted = 0
        self.processed = 0
        self.replayed = 0
        self._pending: collections.deque[tuple[int, cf.Future[Response], Any]] = collections.deque()
        self._pool = cf.ThreadPoolExecutor(max_workers=concurrency, thread_name_prefix="cwm-llm")
        self._ledger_lock = threading.Lock()
        self.possibly_paid = 0
        self._count_stopped_calls()

    # -- calls --------------------------------------------------------------------------------------
    @property
    def can_submit(self) -> bool:
        return self.submitted < self.budget and len(self._pending) < self.concurrency and not self.solved

    @property
    def in_flight(self) -> int:
        return len(self._pending)

    def submit(self, messages: tuple[Message, ...], *, tag: str, meta: Any) -> int:
        """Sends one call (or replays it from the journal); returns its index."""
        if self.submitted >= self.budget:
            raise RuntimeError(f"LLM-call budget of {self.budget} would be exceeded")  # strategies check first
        index = self.submitted
        self.submitted += 1
        # providers take 32-bit seeds
        request = Request(messages=messages, system=self.system, seed=(self.seed * 1_000_003 + index) % 2**31,
                          sample_index=index, tag=tag, **self.request_options)
        key = request.key(self.llm.model)
        entry = self.store.journaled(index, key)
        future: cf.Future[Response] = cf.Future()
        if entry is not None:
            future.set_result(Response.from_json(entry["response"]))
            self.replayed += 1
        else:
            self.store.write_prompt(index, _prompt_text(messages))
            future = self._pool.submit(self._call, index, request, key)
        self._pending.append((index, future, meta))
        return index

    def _call(self, index: int, request: Request, key: str) -> Response:
        self.store.sending(index, {"index": index, "request_key": key, "model": self.llm.model, "tag": request.tag,
                                   "usage_at_most": dataclasses.asdict(usage_at_most(request))})
        try:
            response = self.llm.complete(request)
        except BlockedError as e:  # a refusal is an answer without code: scored, not fatal; its tokens count
            response = Response(("",), (f"BLOCKED: {e}",), e.usage, 0.0, self.llm.model)
        except LLMError:  # the call ended without a reply (the ledger counted the error): not in flight any more
            self._save_ledger()
            self.store.sent(index)
            raise
        # the ledger first: a stop before the journal is written counts this call twice, never not at all
        self._save_ledger()
        self.store.journal(index, {"index": index, "request_key": key, "tag": request.tag,
                                   "request": request.to_json(), "response": response.to_json()})
        self.store.sent(index)
        return response

    def _count_stopped_calls(self) -> None:
        """Counts the calls a stopped session left in flight as possibly paid, saves that, and says so."""
        stopped = self.store.stopped_calls()
        if not stopped:
            return
        ledger = self.llm.ledger
        usd = 0.0
        for entry in stopped:
            model, at_most = str(entry.get("model", self.llm.model)), Usage(**entry.get("usage_at_most", {}))
            usd += cost_usd(model, at_most) or 0.0
            if ledger is not None:
                ledger.record_possibly_paid(model, at_most, tag=str(entry.get("tag", "")))
        self.possibly_paid = len(stopped)
        self._save_ledger()  # on disk before the markers go, so a second stop cannot lose the count
        for entry in stopped:
            self.store.sent(entry["index"])
        log.warning("%s: %d LLM request(s) were in flight when the last session stopped; they may have been paid, "
                    "so the ledger counts them as possibly paid ($%.4f, a high estimate), and they are sent again",
                    self.store.root, len(stopped), usd)

    def _save_ledger(self) -> None:
        ledger = self.llm.ledger
        with self._ledger_lock:  # the worker threads save it too
            if ledger is not None:
                self.store.write_ledger(ledger.snapshot())
            elif self.possibly_paid:  # a client without a ledger: the count is kept all the same
                self.store.write_ledger({"possibly_paid_calls": self.possibly_paid})

    def next_reply(self) -> tuple[int, Any, Response]:
        """The oldest submitted call's reply (waits for it); re-raises the call's error."""
        index, future, meta = self._pending.popleft()
        response = future.result()
        self.usage = self.usage + response.usage
        self.processed += 1
        return index, meta, response

    def close(self) -> None:
        """Waits for calls in flight (their replies are journaled for a resume) and stops the pool."""
        self._pool.shutdown(wait=True, cancel_futures=True)
        self._save_ledger()

    # -- candidates ---------------------------------------------------------------------------------
    def evaluate(self, index: int, response: Response, parent: Node | None, expandable: ExpandRule) -> list[Node]:
        """Scores every candidate program of a reply as a new node (a reply without code gives one
        failing node), records the nodes and the curve point, and reports progress."""
        new: list[Node] = []
        found: list[tuple[str, list[str | CheckReport]]] = []
        for text in response.texts:
            try:
                found.append((text, list(extract_code(text, self.target.required).candidates)))
            except CodeExtractionError as e:
                found.append((text, [error_report(f"no usable code in the reply: {e}")]))
        self._check_all([item for _, items in found for item in items if isinstance(item, str)])
        for text, sources in found:
            for item in sources:
                new.append(self._add_node(index, len(new), item, parent, expandable))
                self._texts[new[-1].id] = text
        self._record_curve()
        if self.progress is not None:
            self.progress(self)
        return new

    def reply_text(self, node: Node) -> str:
        """The reply text (one of a call's ``texts``) that ``node``'s program was taken from."""
        return self._texts[node.id]

    def _add_node(self, index: int, candidate: int, item: str | CheckReport, parent: Node | None,
                  expandable: ExpandRule) -> Node:
        source, report = ("", item) if isinstance(item, CheckReport) else (item, self._check(item))
        h = self.target.score(report) if source else 0.0
        twins = [n for n in self.nodes if source and n.source == source]
        node = Node.scored(id=len(self.nodes), parent=None if parent is None else parent.id, call=index,
                           candidate=candidate, source=source, report=report, h=h,
                           expandable=(bool(source) and not report.all_passed and expandable(h, parent)
                                       and not any(n.expandable for n in twins)))
        if twins:
            node = dataclasses.replace(node, duplicate_of=twins[0].id)
        self.nodes.append(node)
        self.reports[node.id] = report
        self.store.write_node(node.to_json(), report)
        self.store.write_tree([{k: v for k, v in n.to_json().items() if k != "source"} for n in self.nodes])
        return node

    def _check_all(self, sources: list[str]) -> None:
        """Checks the reply's programs not checked before together when the target's checker can
        (``BatchChecker``: one sandbox child while they pass, each with the report it gets alone), so that
        ``_check`` finds each one's report cached."""
        if not isinstance(self.target.check, BatchChecker):
            return
        todo = [s for s in dict.fromkeys(sources) if self.store.cached_report(s) is None]
        if len(todo) > 1:
            for source, report in zip(todo, self.target.check.many(todo)):
                self.store.cache_report(source, report)

    def _check(self, source: str) -> CheckReport:
        report = self.store.cached_report(source)
        if report is None:
            report = self.target.check(source)
            self.store.cache_report(source, report)
        return report

    def _record_curve(self) -> None:
        best = self.best
        self.curve.append(CurvePoint(self.processed, best.pass_rate if best else 0.0,
                                     best.transition_accuracy if best else 0.0))

    @property
    def best(self) -> Node | None:
        """The node with the highest pass rate (the earliest among equals)."""
        usable = [n for n in self.nodes if n.source]
        return max(usable, key=lambda n: (n.pass_rate, -n.id)) if usable else None

    @property
    def passing(self) -> list[Node]:
        """The programs that passed every check, the first node of each distinct source, in node order."""
        seen: set[str] = set()
        found = []
        for n in self.nodes:
            if n.solved and n.source not in seen:
                seen.add(n.source)
                found.append(n)
        return found

    @property
    def solved(self) -> bool:
        """As many distinct programs as the target wants (``Target.wanted``) passed every check."""
        return len(self.passing) >= self.target.wanted


def _prompt_text(messages: tuple[Message, ...]) -> str:
    if len(messages) == 1:
        return messages[0].text
    return "\n\n".join(f"===== {m.role} =====\n{m.text}" for m in messages)


__all__ = ["Engine", "ExpandRule", "Progress"]
