"""The LLM client protocol, and a scripted client for tests; re-exports the types of :mod:`cwm.llm.types`.

``cwm.llm.base`` is where the package's types were first defined; they live in :mod:`cwm.llm.types` now and
are importable from here as before.
"""

from __future__ import annotations

import threading
from collections.abc import Sequence
from typing import Protocol, runtime_checkable

from cwm.llm.ledger import Ledger
from cwm.llm.types import (
    CHARS_PER_TOKEN,
    REQUEST_SCHEMA,
    BadRequestError,
    BlockedError,
    LLMConfigError,
    LLMError,
    LLMTimeoutError,
    Message,
    PendingBatch,
    PromptTooLongError,
    RateLimitedError,
    Request,
    Response,
    Role,
    ServerError,
    Usage,
    approx_tokens,
    usage_at_most,
)

__all__ = [
    "CHARS_PER_TOKEN",
    "REQUEST_SCHEMA",
    "BadRequestError",
    "BlockedError",
    "Client",
    "LLMConfigError",
    "LLMError",
    "LLMTimeoutError",
    "Message",
    "PendingBatch",
    "PromptTooLongError",
    "RateLimitedError",
    "Request",
    "Response",
    "Role",
    "ScriptedClient",
    "ServerError",
    "Usage",
    "approx_tokens",
    "usage_at_most",
]


@runtime_checkable
class Client(Protocol):
    """Anything that answers a :class:`Request` with a :class:`Response`, and counts what it answered.

    Implementations raise the typed errors of :mod:`cwm.llm.types` (never a provider SDK's own errors).
    ``isinstance(x, Client)`` checks that the three members are there.

    Attributes:
      model: the model id the client asks (and keys cache and replay entries with).
      ledger: the calls, tokens and estimated cost it answered. A client that answers requests itself (a
        provider, a replay file, a batch directory, :class:`ScriptedClient`) keeps its own; a wrapper that
        passes requests on (retries, concurrency limit, cache, recording) shows the ledger of the client it
        wraps, or the one it was given; :class:`cwm.llm.ManagedClient` keeps the run's, which also counts
        cache hits, errors and retries. A client of your own gets one from :func:`cwm.llm.wrap_client`.
    """

    model: str

    @property
    def ledger(self) -> Ledger: ...

    def complete(self, request: Request) -> Response: ...


class ScriptedClient:
    """Answers with the given replies in order; for tests and offline demos.

    Each item of ``replies`` answers one call. A ``str`` is the text of every candidate (repeated
    ``request.n`` times); a sequence of strings gives the candidates themselves. Usage is a
    deterministic estimate of 4 characters per token. Thread-safe.

    Attributes:
      model: the model id reported in responses.
      calls: every request seen, in order.
      ledger: a :class:`cwm.llm.Ledger` of the answered calls, like the one make_client gives.
    """

    def __init__(self, replies: Sequence[str | Sequence[str]], *, model: str = "scripted") -> None:
        self.model = model
        self.calls: list[Request] = []
        self.ledger = Ledger()
        self._replies = [(r,) if isinstance(r, str) else tuple(r) for r in replies]
        self._lock = threading.Lock()

    @property
    def remaining(self) -> int:
        """Replies not used yet."""
        return len(self._replies) - len(self.calls)

    def complete(self, request: Request) -> Response:
        """The next scripted reply.

        Raises:
          LLMError: the script is exhausted (says how many replies it had).
        """
        with self._lock:
            index = len(self.calls)
            if index >= len(self._replies):
                raise LLMError(
                    f"ScriptedClient {self.model!r} has only {len(self._replies)} replies; call {index + 1} "
                    f"(tag {request.tag!r}, last user message {request.last_user_text[:80]!r}) has none"
                )
            self.calls.append(request)
        texts = self._replies[index]
        if len(texts) == 1 and request.n > 1:
            texts = texts * request.n
        usage = Usage(approx_tokens(request.prompt_chars), sum(approx_tokens(len(t)) for t in texts), 0)
        response = Response(texts, ("STOP",) * len(texts), usage, 0.0, self.model)
        self.ledger.record(response, tag=request.tag)
        return response
