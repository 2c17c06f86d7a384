"""The LLM package's shared types: requests, replies, token usage and estimates, and the typed errors.

Every other module of :mod:`cwm.llm` builds on this one; it imports nothing of the package.
"""

from __future__ import annotations

import dataclasses
import hashlib
import json
import numbers
from pathlib import Path
from typing import Any, Literal

from cwm.text import without_surrogates
from cwm.types import CwmError

Role = Literal["user", "assistant"]
REQUEST_SCHEMA = "cwm.llm.request/1"


# ---------------------------------------------------------------------------------------------- errors
class LLMError(CwmError, RuntimeError):
    """Base class of every error an LLM client raises on purpose.

    Attributes:
      retryable: whether the shared retry layer may try the same request again.
    """

    retryable: bool = False


class RateLimitedError(LLMError):
    """The provider refused the call for quota or rate reasons (HTTP 429); retried with backoff.

    Attributes:
      retry_after: seconds the provider asked us to wait (``Retry-After``), if it said.
    """

    retryable = True

    def __init__(self, message: str, *, retry_after: float | None = None) -> None:
        super().__init__(message)
        self.retry_after = retry_after


class ServerError(LLMError):
    """The provider failed (HTTP 5xx) or answered with a body that is not a valid reply; retried.

    Attributes:
      status: the HTTP status code, or 0 when the body (not the status) was the problem.
    """

    retryable = True

    def __init__(self, message: str, *, status: int = 0) -> None:
        super().__init__(message)
        self.status = status


class LLMTimeoutError(LLMError):
    """The provider did not answer within the client's timeout; retried."""

    retryable = True


class BlockedError(LLMError):
    """The provider answered without usable text: a safety block, or empty candidates. Not retried.

    Attributes:
      usage: tokens the provider still billed for the call (the ledger counts them).
    """

    def __init__(self, message: str, *, usage: Usage | None = None) -> None:
        super().__init__(message)
        self.usage = usage if usage is not None else Usage()


class BadRequestError(LLMError, ValueError):
    """The provider rejected the request itself (HTTP 4xx other than 429: bad key, unknown model,
    invalid settings). Retrying cannot help, so it is not retried.

    Attributes:
      status: the HTTP status code.
    """

    def __init__(self, message: str, *, status: int = 400) -> None:
        super().__init__(message)
        self.status = status


class LLMConfigError(LLMError, ValueError):
    """A client cannot be built as asked: unknown spec, missing API key, missing optional package."""


class PromptTooLongError(LLMError, ValueError):
    """A prompt estimated (``estimate`` tokens: :func:`approx_tokens` of :attr:`Request.prompt_chars`) above
    the client's ``max_prompt_tokens`` (``limit``); refused unsent and not retried. The message says how to
    raise the limit."""

    def __init__(self, message: str, *, estimate: int, limit: int) -> None:
        super().__init__(message)
        self.estimate, self.limit = estimate, limit


class PendingBatch(LLMError):
    """Requests wait for replies in a batch directory; answer them and run again.

    Attributes:
      directory: the batch directory.
      pending: how many distinct requests wait there.
    """

    def __init__(self, message: str, *, directory: Path, pending: int) -> None:
        super().__init__(message)
        self.directory = directory
        self.pending = pending


def error_for_status(status: int, message: str, retry_after: float | None = None) -> LLMError:
    """The typed error for an HTTP status: 429 rate limited, 408 timeout, 5xx server, other 4xx bad request."""
    if status == 408:  # the server (or a proxy) gave up waiting: as retryable as our own timeout
        return LLMTimeoutError(message)
    if status == 429:
        return RateLimitedError(message, retry_after=retry_after)
    if status >= 500 or status == 0:
        return ServerError(message, status=status)
    return BadRequestError(message, status=status)


def parse_retry_after(value: str | None) -> float | None:
    """Seconds from a ``Retry-After`` header value (delta-seconds form), else ``None``."""
    try:
        return max(0.0, float(value)) if value else None
    except ValueError:
        return None  # an HTTP date: rare from LLM APIs; fall back to our own backoff


# ---------------------------------------------------------------------------------------------- types
@dataclasses.dataclass(frozen=True)
class Message:
    """One turn of a conversation."""

    role: Role
    text: str

    def __post_init__(self) -> None:
        if self.role not in ("user", "assistant"):
            raise ValueError(f"Message.role must be 'user' or 'assistant', got {self.role!r}")


@dataclasses.dataclass(frozen=True)
class Request:
    """One call to an LLM.

    Attributes:
      messages: the conversation, oldest first; the last message is normally the user's.
      system: the system instruction ("" for none).
      n: candidates wanted from this one call.
      temperature: sampling temperature.
      max_output_tokens: cap on each candidate's output tokens.
      seed: provider-side sampling seed where supported.
      thinking_budget: reasoning-token budget where supported (``None``: provider default).
      sample_index: distinguishes repeated identical sampled requests in the cache (0, 1, 2, ...).
      tag: free label for logs and the ledger ("synthesis/refine"); not part of the cache key.
    """

    messages: tuple[Message, ...]
    system: str = ""
    n: int = 1
    temperature: float = 1.0
    max_output_tokens: int = 16384
    seed: int | None = None
    thinking_budget: int | None = None
    sample_index: int = 0
    tag: str = ""

    def __post_init__(self) -> None:
        if not isinstance(self.messages, tuple):
            object.__setattr__(self, "messages", tuple(self.messages))
        if not self.messages:
            raise ValueError("Request.messages is empty: a request needs at least one message")
        # Normalise number types so that 0 and 0.0 give the same cache key.
        object.__setattr__(self, "temperature", float(self.temperature))
        if not self.temperature >= 0:  # also refuses NaN
            raise ValueError(f"Request.temperature must be >= 0, got {self.temperature}")
        for name in ("n", "max_output_tokens"):
            value = getattr(self, name)
            if isinstance(value, bool) or not isinstance(value, numbers.Integral) or value < 1:
                raise ValueError(f"Request.{name} must be an int >= 1, got {value!r}")
            object.__setattr__(self, name, int(value))  # numpy ints too, as plain ints for JSON and keys

    @classmethod
    def user(cls, text: str, **settings: Any) -> Request:
        """A one-message request: ``Request.user("hi", temperature=0.0)``."""
        return cls(messages=(Message("user", text),), **settings)

    @property
    def prompt_chars(self) -> int:
        """Characters of everything sent as the prompt: the system text and every message."""
        return len(self.system) + sum(len(m.text) for m in self.messages)

    @property
    def last_user_text(self) -> str:
        """The text of the last user message ("" if there is none)."""
        return next((m.text for m in reversed(self.messages) if m.role == "user"), "")

    def to_json(self) -> dict[str, Any]:
        """A JSON-able dict of every field (the tag included)."""
        data = dataclasses.asdict(self)
        data["messages"] = [{"role": m.role, "text": m.text} for m in self.messages]
        return data

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> Request:
        """The inverse of :meth:`to_json`."""
        fields = dict(data)
        fields["messages"] = tuple(Message(m["role"], m["text"]) for m in data["messages"])
        return cls(**fields)

    def key(self, model: str) -> str:
        """A stable hash of the normalised request for ``model``: every setting except ``tag``.

        Used by the cache and the replay file. Identical requests give identical keys across
        processes and Python versions (canonical JSON, sorted keys, SHA-256).
        """
        data = self.to_json()
        del data["tag"]
        data["model"] = model
        data["schema"] = REQUEST_SCHEMA
        canonical = json.dumps(data, sort_keys=True, ensure_ascii=False, separators=(",", ":"))
        return hashlib.sha256(canonical.encode("utf-8")).hexdigest()


@dataclasses.dataclass(frozen=True)
class Usage:
    """Tokens one call consumed (``thinking_tokens`` are billed as output by most providers)."""

    input_tokens: int = 0
    output_tokens: int = 0
    thinking_tokens: int = 0

    def __add__(self, other: Usage) -> Usage:
        return Usage(
            self.input_tokens + other.input_tokens,
            self.output_tokens + other.output_tokens,
            self.thinking_tokens + other.thinking_tokens,
        )


@dataclasses.dataclass(frozen=True)
class Response:
    """The reply to one request.

    Attributes:
      texts: one text per candidate.
      finish_reasons: the provider's finish reason per candidate ("STOP", "MAX_TOKENS", ...).
      usage: tokens the original provider call consumed; a reply served from the cache or a replay file
        keeps them (the ledger charges nothing for it: see ``cached``).
      latency_s: wall time of the call.
      model: the model id that answered.
      cached: whether the reply came from the disk cache or a replay file instead of a provider.
      batch: whether the call was billed at a provider's batch rate (half price); set by the batch client
        from each reply's ``"batch"`` field.

    Lone surrogates in ``texts`` and ``finish_reasons`` become U+FFFD (``cwm.text.without_surrogates``), so
    a reply can always be written as UTF-8; nothing else in a reply is changed.
    """

    texts: tuple[str, ...]
    finish_reasons: tuple[str, ...]
    usage: Usage
    latency_s: float
    model: str
    cached: bool = False
    batch: bool = False

    def __post_init__(self) -> None:
        # a lone surrogate (valid in JSON as "\ud800") cannot be written as UTF-8: every log, journal and
        # program file of the reply would crash, and the paid call be asked again on every resume
        object.__setattr__(self, "texts", tuple(without_surrogates(t) for t in self.texts))
        object.__setattr__(self, "finish_reasons", tuple(without_surrogates(r) for r in self.finish_reasons))

    @property
    def text(self) -> str:
        """The first candidate's text."""
        return self.texts[0]

    def to_json(self) -> dict[str, Any]:
        """A JSON-able dict of every field."""
        data = dataclasses.asdict(self)
        data["texts"] = list(self.texts)
        data["finish_reasons"] = list(self.finish_reasons)
        return data

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> Response:
        """The inverse of :meth:`to_json`."""
        return cls(
            texts=tuple(data["texts"]),
            finish_reasons=tuple(data["finish_reasons"]),
            usage=Usage(**data["usage"]),
            latency_s=float(data["latency_s"]),
            model=data["model"],
            cached=bool(data.get("cached", False)),
            batch=bool(data.get("batch", False)),
        )


# ---------------------------------------------------------------------------------------------- token estimates
CHARS_PER_TOKEN = 4  # the estimate's rate: English prose and code average about 4 characters per token


def approx_tokens(chars: int) -> int:
    """A deterministic token estimate of ``chars`` characters (4 per token, rounded up): the usage offline
    clients report, and the measure of the prompt cap and of requests possibly paid."""
    return (chars + CHARS_PER_TOKEN - 1) // CHARS_PER_TOKEN


def refuse_long_text(text: str, limit: int, *, what: str) -> None:
    """Refuses, before any work, a text that alone is estimated (``approx_tokens``) above a client's prompt
    limit of ``limit`` tokens: no prompt holding it could be sent (a rules file of megabytes).

    Raises:
      PromptTooLongError: one line naming ``what``, its size and the limit, and the flag that raises it.
    """
    tokens = approx_tokens(len(text))
    if tokens > limit:
        raise PromptTooLongError(f"{what}: about {tokens:,} tokens ({len(text):,} characters) on its own, over "
                                 f"the prompt limit of {limit:,} tokens; shorten it, or raise the limit with "
                                 f"--max-prompt-tokens N", estimate=tokens, limit=limit)


def usage_at_most(request: Request) -> Usage:
    """A high estimate of what ``request`` can be billed: its prompt at 4 characters a token, and every
    candidate's whole ``max_output_tokens`` (which covers thinking, where a provider counts it in the cap)."""
    return Usage(approx_tokens(request.prompt_chars), request.n * request.max_output_tokens, 0)
