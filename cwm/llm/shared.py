"""Behaviour shared by every provider, as wrappers: retries, a concurrency limit, the ledger, the run log.

:class:`~cwm.llm.ledger.Ledger` lives in :mod:`cwm.llm.ledger`; it is importable from here as before.
"""

from __future__ import annotations

import datetime
import json
import random
import threading
import time
from collections.abc import Callable
from pathlib import Path

from cwm.files import RUN_FILE_BYTES, InputLimitError, atomic_write, loads_bounded, read_bounded
from cwm.llm.base import Client
from cwm.llm.ledger import Ledger
from cwm.llm.prices import CONTEXT_WINDOWS, context_window, listed_as
from cwm.llm.types import (
    CHARS_PER_TOKEN,
    LLMConfigError,
    LLMError,
    PromptTooLongError,
    Request,
    Response,
    approx_tokens,
)

__all__ = ["LEDGER_FILE", "LEDGER_HISTORY_FILE", "LOG_FILE", "Ledger", "LimitedClient", "ManagedClient",
           "RetryingClient", "check_prompt_cap"]

LOG_FILE = "llm_log.jsonl"
LEDGER_FILE = "llm_ledger.json"
LEDGER_HISTORY_FILE = "llm_ledger_history.jsonl"


class RetryingClient:
    """Retries rate-limited, failed and timed-out calls with exponential backoff and jitter.

    The wait before retry ``k`` (1-based) is ``min(max_delay_s, base_delay_s * 2**(k-1))`` scaled by a
    uniform factor in [0.5, 1], and at least the provider's ``Retry-After``. A ``Retry-After`` longer
    than ``max_retry_after_s`` (a daily quota, say) is not waited out: the error is raised at once, its
    message saying how long the provider asked to wait. Errors that are not retryable (bad request,
    blocked) pass through at once.

    Args:
      inner: the client to call.
      max_attempts: attempts per request, the first included (default 5).
      base_delay_s: the first backoff (default 2 s).
      max_delay_s: the backoff cap (default 60 s); a longer ``Retry-After`` is still honoured.
      max_retry_after_s: the longest ``Retry-After`` waited out (default 120 s).
      sleep: the sleeping function (tests inject a recorder).
      seed: seed of the jitter's ``random.Random`` (default None: fresh entropy).
      ledger: counts each retry, and is this client's ``ledger``; default none (retries go uncounted) and the
        inner client's ledger is shown.
    """

    def __init__(self, inner: Client, *, max_attempts: int = 5, base_delay_s: float = 2.0,
                 max_delay_s: float = 60.0, max_retry_after_s: float = 120.0,
                 sleep: Callable[[float], None] = time.sleep, seed: int | None = None,
                 ledger: Ledger | None = None) -> None:
        if max_attempts < 1:
            raise ValueError(f"max_attempts must be >= 1, got {max_attempts}")
        self.inner, self.model = inner, inner.model
        self.max_attempts, self.base_delay_s, self.max_delay_s = max_attempts, base_delay_s, max_delay_s
        self.max_retry_after_s = max_retry_after_s
        self._sleep, self._rng, self._ledger = sleep, random.Random(seed), ledger
        self._rng_lock = threading.Lock()

    @property
    def ledger(self) -> Ledger:
        """The ledger given, else the inner client's."""
        return self._ledger if self._ledger is not None else self.inner.ledger

    def delay_s(self, attempt: int, error: LLMError) -> float:
        """Seconds to wait after failed attempt ``attempt`` (1-based)."""
        with self._rng_lock:
            factor = 0.5 + 0.5 * self._rng.random()
        backoff = min(self.max_delay_s, self.base_delay_s * 2 ** (attempt - 1)) * factor
        retry_after = getattr(error, "retry_after", None)
        return max(backoff, retry_after) if retry_after is not None else backoff

    def complete(self, request: Request) -> Response:
        """The inner client's response, retrying as documented; the last error once attempts run out."""
        for attempt in range(1, self.max_attempts + 1):
            try:
                return self.inner.complete(request)
            except LLMError as e:
                if not e.retryable:
                    raise
                retry_after = getattr(e, "retry_after", None)
                if retry_after is not None and retry_after > self.max_retry_after_s:
                    e.args = (f"{e.args[0] if e.args else e} (the provider asked to wait {retry_after:g} s, more "
                              f"than max_retry_after_s={self.max_retry_after_s:g}; not retried)",)
                    raise
                if attempt == self.max_attempts:
                    if attempt > 1:
                        e.args = (f"{e.args[0] if e.args else e} (gave up after {attempt} attempts)",)
                    raise
                if self._ledger is not None:
                    self._ledger.record_retry(tag=request.tag)
                self._sleep(self.delay_s(attempt, e))
        raise AssertionError("unreachable")


class LimitedClient:
    """At most ``max_concurrency`` calls of the inner client run at once (a threading semaphore); its
    ``ledger`` is the inner client's."""

    def __init__(self, inner: Client, *, max_concurrency: int = 8) -> None:
        if max_concurrency < 1:
            raise ValueError(f"max_concurrency must be >= 1, got {max_concurrency}")
        self.inner, self.model = inner, inner.model
        self._slots = threading.BoundedSemaphore(max_concurrency)

    @property
    def ledger(self) -> Ledger:
        """The inner client's ledger."""
        return self.inner.ledger

    def complete(self, request: Request) -> Response:
        with self._slots:
            return self.inner.complete(request)


def check_prompt_cap(max_prompt_tokens: object) -> None:
    """Refuses a ``max_prompt_tokens`` that is neither ``None`` nor an int >= 1.

    Raises:
      LLMConfigError: says what was given.
    """
    if max_prompt_tokens is not None and (isinstance(max_prompt_tokens, bool)
                                          or not isinstance(max_prompt_tokens, int) or max_prompt_tokens < 1):
        raise LLMConfigError(f"max_prompt_tokens must be an int >= 1, got {max_prompt_tokens!r}")


class ManagedClient:
    """The outermost wrapper :func:`cwm.llm.make_client` returns: ledger, run log, and the chain inside.

    With ``run_dir``, every request and its reply or error is appended to ``run_dir/llm_log.jsonl``
    (one JSON object a line, flushed at once) and the ledger is rewritten to ``run_dir/llm_ledger.json``
    after every call. The ledger covers this client's session only (a resumed synthesis run sums its
    sessions itself, so seeding it with earlier totals would count them twice); when a session first
    writes ``llm_ledger.json`` over an earlier session's, that earlier ledger is appended as one line to
    ``run_dir/llm_ledger_history.jsonl``, so no session's totals are lost. ``llm_log.jsonl`` holds
    every call of every session.

    A request whose prompt is estimated (4 characters a token) above ``max_prompt_tokens`` is refused with a
    :class:`PromptTooLongError` before anything else happens: it is not sent, logged or counted.

    Attributes:
      model: the model id of the chain.
      ledger: this run's :class:`Ledger` (every reply, cached or not, every error and retry).
      inner: the wrapped chain (cache, retries, limit, provider).
      max_prompt_tokens: the longest prompt sent, in estimated tokens; default the model's context window
        (:func:`cwm.llm.prices.context_window`).
    """

    def __init__(self, inner: Client, *, ledger: Ledger, run_dir: Path | None = None, batch: bool = False,
                 max_prompt_tokens: int | None = None):
        self.inner, self.model, self.ledger, self.batch = inner, inner.model, ledger, batch
        self.run_dir = Path(run_dir) if run_dir is not None else None
        check_prompt_cap(max_prompt_tokens)
        self._limit_given = max_prompt_tokens is not None
        self.max_prompt_tokens = max_prompt_tokens or context_window(self.model)
        self._lock = threading.Lock()
        self._wrote_ledger = False
        if self.run_dir is not None:
            self.run_dir.mkdir(parents=True, exist_ok=True)

    def complete(self, request: Request) -> Response:
        """The chain's response; the ledger and the log record it (or the error) first.

        Raises:
          PromptTooLongError: the prompt is estimated above ``max_prompt_tokens`` (nothing was sent).
          LLMError: what the chain raised.
        """
        self._check_size(request)
        try:
            response = self.inner.complete(request)
        except LLMError as e:
            self.ledger.record_error(e, model=self.model, tag=request.tag, batch=self.batch)
            self._log(request, None, e)
            raise
        self.ledger.record(response, tag=request.tag, batch=self.batch)
        self._log(request, response, None)
        return response

    def _check_size(self, request: Request) -> None:
        estimate = approx_tokens(request.prompt_chars)
        if estimate <= self.max_prompt_tokens:
            return
        if self._limit_given:
            source = "max_prompt_tokens"
        elif listed_as(self.model, CONTEXT_WINDOWS):
            source = f"the context window of {self.model}"
        else:
            source = f"the default for {self.model}, a model without a known context window"
        raise PromptTooLongError(
            f"the prompt of request {request.tag or 'untagged'!r} is about {estimate:,} tokens "
            f"({request.prompt_chars:,} characters at {CHARS_PER_TOKEN} a token), over the limit of "
            f"{self.max_prompt_tokens:,} ({source}); it was not sent. Shorten what goes into it (a rules file; "
            f"long example games) or raise the limit: --max-prompt-tokens N on the command "
            f"line, max_prompt_tokens=N for make_client", estimate=estimate, limit=self.max_prompt_tokens)

    def _log(self, request: Request, response: Response | None, error: LLMError | None) -> None:
        if self.run_dir is None:
            return
        entry = {
            "time": datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="milliseconds"),
            "model": self.model, "tag": request.tag, "key": request.key(self.model),
            "request": request.to_json(),
            "response": response.to_json() if response is not None else None,
            "error": {"type": type(error).__name__, "message": str(error)} if error is not None else None,
        }
        line = json.dumps(entry, ensure_ascii=False) + "\n"
        with self._lock:
            with open(self.run_dir / LOG_FILE, "a", encoding="utf-8") as f:
                f.write(line)
            if not self._wrote_ledger:
                self._keep_earlier_ledger()
            atomic_write(self.run_dir / LEDGER_FILE, json.dumps(self.ledger.snapshot(), indent=2) + "\n")

    def _keep_earlier_ledger(self) -> None:
        """Appends an earlier session's ``llm_ledger.json`` to the history before the first overwrite."""
        assert self.run_dir is not None
        self._wrote_ledger = True
        earlier = self.run_dir / LEDGER_FILE
        if earlier.is_file():
            try:  # its size checked before it is read: a run directory may come from anywhere
                text = read_bounded(earlier, RUN_FILE_BYTES, what="LLM ledger").decode("utf-8", "replace")
            except InputLimitError as e:  # noted rather than failing the call
                text = str(e)
            try:
                line = json.dumps(loads_bounded(text, where=str(earlier), allow_nan=True))
            except (ValueError, RecursionError):  # kept as text rather than failing the call
                line = json.dumps({"unreadable": text})
            with open(self.run_dir / LEDGER_HISTORY_FILE, "a", encoding="utf-8") as f:
                f.write(line + "\n")
