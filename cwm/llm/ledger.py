"""The ledger: calls, tokens and estimated cost of the requests a client answered (or failed), by tag."""

from __future__ import annotations

import collections
import threading
from collections.abc import Callable
from typing import Any

from cwm.llm.prices import cost_usd
from cwm.llm.types import LLMError, PendingBatch, Request, Response, Usage


class Ledger:
    """Per-run totals: calls, tokens and estimated cost (from :mod:`cwm.llm.prices`). Thread-safe.

    Replies served from the cache or a replay file are counted as ``cached`` and cost nothing. A reply
    with ``Response.batch`` set (or every reply, when recorded with ``batch=True``) is priced at batch rates.
    A request that was sent but whose reply was never recorded (the process stopped while it was in flight)
    is counted as possibly paid, at a high estimate, so the ledger never counts less than was billed.
    """

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._totals: collections.Counter[str] = collections.Counter()
        self._cost = 0.0
        self._possibly_paid_cost = 0.0
        self._by_tag: dict[str, collections.Counter[str]] = collections.defaultdict(collections.Counter)

    def record(self, response: Response, *, tag: str = "", batch: bool = False) -> None:
        """Counts one answered request; ``batch`` prices it at batch rates even if ``response.batch`` is unset."""
        with self._lock:
            if response.cached:
                self._totals["cached"] += 1
                self._by_tag[tag]["cached"] += 1
                return
            self._add_usage(response.model, response.usage, tag, batch or response.batch)

    def record_error(self, error: LLMError, *, model: str, tag: str = "", batch: bool = False) -> None:
        """Counts a request that failed for good (tokens a blocked reply still billed included, at batch
        rates when ``batch``).

        A :class:`cwm.llm.PendingBatch` is counted as ``pending``, not as an error.
        """
        kind = "pending" if isinstance(error, PendingBatch) else "errors"
        with self._lock:
            self._totals[kind] += 1
            self._by_tag[tag][kind] += 1
            usage = getattr(error, "usage", None)
            if isinstance(usage, Usage) and usage != Usage():
                self._add_usage(model, usage, tag, batch, calls=0)

    def record_possibly_paid(self, model: str, at_most: Usage, *, tag: str = "", batch: bool = False) -> None:
        """Counts a request that may have been billed without its reply being recorded: one sent by a session
        that stopped (a kill, a crash) while it was in flight. ``at_most`` is its usage estimated high
        (:func:`cwm.llm.types.usage_at_most`); its cost is added to ``cost_usd`` and to ``possibly_paid_usd``.
        """
        cost = cost_usd(model, at_most, batch=batch) or 0.0
        with self._lock:
            self._totals["possibly_paid_calls"] += 1
            self._by_tag[tag]["possibly_paid_calls"] += 1
            self._possibly_paid_cost += cost

    def count(self, model: str, request: Request, answer: Callable[[Request], Response]) -> Response:
        """``answer(request)``, counted here: its reply, or the typed error it raised (which is raised on).

        How a client that answers requests itself (a provider, a replay file, a batch directory) keeps the
        ledger the :class:`cwm.llm.Client` protocol asks of it.
        """
        try:
            response = answer(request)
        except LLMError as e:
            self.record_error(e, model=model, tag=request.tag)
            raise
        self.record(response, tag=request.tag)
        return response

    def record_retry(self, *, tag: str = "") -> None:
        """Counts one retried attempt."""
        with self._lock:
            self._totals["retries"] += 1
            self._by_tag[tag]["retries"] += 1

    def _add_usage(self, model: str, usage: Usage, tag: str, batch: bool, calls: int = 1) -> None:
        counts = {"calls": calls, "input_tokens": usage.input_tokens, "output_tokens": usage.output_tokens,
                  "thinking_tokens": usage.thinking_tokens}
        self._totals.update(counts)
        self._by_tag[tag].update(counts)
        cost = cost_usd(model, usage, batch=batch)
        if cost is None:
            self._totals["unpriced_calls"] += calls
        else:
            self._cost += cost

    def snapshot(self) -> dict[str, Any]:
        """``{"calls", "input_tokens", "output_tokens", "thinking_tokens", "cost_usd", "cached", "retries",
        "errors", "pending", "unpriced_calls", "possibly_paid_calls", "possibly_paid_usd"}``: ``calls`` counts
        provider answers, not cache hits; ``cost_usd`` includes ``possibly_paid_usd``, the high estimate for
        the ``possibly_paid_calls`` (requests in flight when an earlier session stopped)."""
        keys = ("calls", "input_tokens", "output_tokens", "thinking_tokens")
        with self._lock:
            data: dict[str, Any] = {k: self._totals[k] for k in keys}
            data["cost_usd"] = round(self._cost + self._possibly_paid_cost, 10)
            data.update({k: self._totals[k] for k in ("cached", "retries", "errors", "pending", "unpriced_calls",
                                                       "possibly_paid_calls")})
            data["possibly_paid_usd"] = round(self._possibly_paid_cost, 10)
        return data

    def by_tag(self) -> dict[str, dict[str, int]]:
        """The counts per request tag ("synthesis/refine": {"calls": 3, ...})."""
        with self._lock:
            return {tag: dict(c) for tag, c in self._by_tag.items()}
