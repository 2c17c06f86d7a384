"""`make_client`: build a provider client from a spec string and wrap it in the shared behaviour."""

from __future__ import annotations

import dataclasses
import math
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from cwm.llm.base import Client, ScriptedClient
from cwm.llm.batch import BatchFileClient
from cwm.llm.cache import CachedClient
from cwm.llm.ledger import Ledger
from cwm.llm.openai_compat import OpenAIClient
from cwm.llm.provenance import Provenance, read_provenance, short_name, today
from cwm.llm.replay import RecordingClient, ReplayClient
from cwm.llm.shared import LimitedClient, ManagedClient, RetryingClient, check_prompt_cap
from cwm.llm.types import LLMConfigError

PROVIDERS = ("gemini", "openai", "replay", "batch")
# every form an LLM spec takes, for the --help of every flag that takes one
SPEC_FORMS = "gemini[:MODEL] | openai:MODEL | replay:FILE | batch:DIR"

_PROVIDER_OPTIONS = {
    "gemini": {"api_key", "base_url", "timeout_s"},
    "openai": {"api_key", "base_url", "timeout_s"},
    "replay": {"model"},
    "batch": {"model", "wait_s", "poll_s"},
}


@dataclasses.dataclass(frozen=True, kw_only=True)
class ClientSettings:
    """What :func:`wrap_client` puts around a client: where it logs, caches and records, how it retries, how
    many calls it lets run at once, how it prices replies, and the longest prompt it sends.

    Attributes:
      run_dir: where ``llm_log.jsonl`` and ``llm_ledger.json`` go (default: no files).
      cache: the SQLite cache file (default: no cache).
      record: a replay file to append every reply to (default: no recording).
      max_attempts: attempts per request, the first included (default 5).
      base_delay_s: the first backoff (default 2 s).
      max_delay_s: the backoff cap (default 60 s).
      max_retry_after_s: the longest ``Retry-After`` waited out (default 120 s).
      retry_seed: seed of the backoff jitter (default None: fresh entropy).
      sleep: the sleeping function between retries (tests pass one that does not sleep).
      max_concurrency: calls in flight at once (default 8).
      batch: price every reply at batch rates (half price), for a client that goes through a provider's
        batch API; otherwise a reply is batch-priced only when its ``Response.batch`` says so (the
        ``batch:DIR`` client sets it from each reply line's ``"batch"`` field).
      max_prompt_tokens: refuse (``PromptTooLongError``, nothing sent) a prompt estimated above this many
        tokens at 4 characters a token; default the model's context window
        (:data:`cwm.llm.prices.CONTEXT_WINDOWS`, else ``DEFAULT_CONTEXT_WINDOW``).

    Raises:
      LLMConfigError: a setting out of range or of the wrong type (one line naming it and the value).
    """

    run_dir: Path | None = None
    cache: Path | None = None
    record: Path | None = None
    max_attempts: int = 5
    base_delay_s: float = 2.0
    max_delay_s: float = 60.0
    max_retry_after_s: float = 120.0
    retry_seed: int | None = None
    sleep: Callable[[float], None] = time.sleep
    max_concurrency: int = 8
    batch: bool = False
    max_prompt_tokens: int | None = None

    def __post_init__(self) -> None:
        for name in ("run_dir", "cache", "record"):
            value = getattr(self, name)
            if value is not None and not isinstance(value, (str, Path)):
                raise LLMConfigError(f"{name} must be a path or None, got {value!r}")
            object.__setattr__(self, name, None if value is None else Path(value))
        for name in ("max_attempts", "max_concurrency"):
            _check_int(name, getattr(self, name))
        for name in ("base_delay_s", "max_delay_s", "max_retry_after_s"):
            value = getattr(self, name)
            if isinstance(value, bool) or not isinstance(value, (int, float)) or not 0 <= value < math.inf:
                raise LLMConfigError(f"{name} must be a finite number of seconds >= 0, got {value!r}")
        if self.retry_seed is not None and (isinstance(self.retry_seed, bool)
                                            or not isinstance(self.retry_seed, int)):
            raise LLMConfigError(f"retry_seed must be an int or None, got {self.retry_seed!r}")
        if not callable(self.sleep):
            raise LLMConfigError(f"sleep must be a function of seconds, got {self.sleep!r}")
        if not isinstance(self.batch, bool):
            raise LLMConfigError(f"batch must be True or False, got {self.batch!r}")
        check_prompt_cap(self.max_prompt_tokens)

    @classmethod
    def names(cls) -> frozenset[str]:
        """The settings' names: the keyword arguments :func:`wrap_client` and :func:`make_client` take."""
        return frozenset(f.name for f in dataclasses.fields(cls))


def _check_int(name: str, value: object) -> None:
    if isinstance(value, bool) or not isinstance(value, int) or value < 1:
        raise LLMConfigError(f"{name} must be an int >= 1, got {value!r}")


def _settings(settings: ClientSettings | None, options: dict[str, Any]) -> ClientSettings:
    """``settings`` (default :class:`ClientSettings`) with ``options`` (settings by name) replacing fields."""
    unknown = sorted(set(options) - ClientSettings.names())
    if unknown:
        raise LLMConfigError(f"unknown client setting(s) {unknown}; the settings are {sorted(ClientSettings.names())}")
    return dataclasses.replace(settings or ClientSettings(), **options)


def provider_client(spec: str, **options: Any) -> Client:
    """The bare provider client for ``spec``, without retries, cache or ledger.

    Args:
      spec: ``"gemini"``, ``"gemini:MODEL"``, ``"openai:MODEL"``, ``"replay:FILE"`` or ``"batch:DIR"``.
      **options: the provider's own options (see :func:`make_client`).

    Raises:
      LLMConfigError: an unknown provider, an option the provider does not take, or a missing argument.
    """
    provider, _, arg = spec.partition(":")
    if provider not in PROVIDERS:
        raise LLMConfigError(f"unknown LLM spec {spec!r}: the provider must be one of {', '.join(PROVIDERS)}")
    unknown = set(options) - _PROVIDER_OPTIONS[provider]
    if unknown:
        raise LLMConfigError(f"LLM spec {spec!r} does not take option(s) {sorted(unknown)}; "
                             f"it takes {sorted(_PROVIDER_OPTIONS[provider])}")
    if provider == "gemini" and ":" in spec and not arg.strip():  # "gemini:" typed without its model
        raise LLMConfigError(f"LLM spec {spec!r}: the model is missing after ':' (gemini:MODEL, or gemini "
                             f"for the default model)")
    if provider == "gemini":
        # google-genai takes about half a second to import: only runs that use Gemini pay for it
        from cwm.llm.gemini import DEFAULT_MODEL, GeminiClient

        return GeminiClient(model=arg or DEFAULT_MODEL, **options)
    if not arg:
        what = {"openai": "MODEL", "replay": "FILE", "batch": "DIR"}[provider]
        raise LLMConfigError(f"LLM spec {spec!r} needs an argument: '{provider}:{what}'")
    if provider == "openai":
        return OpenAIClient(model=arg, **options)
    if provider == "replay":
        return ReplayClient(arg, **options)
    return BatchFileClient(arg, **options)


def wrap_client(client: Client, settings: ClientSettings | None = None, **options: Any) -> ManagedClient:
    """Wraps any client in the shared behaviour; the chain from outside in is
    ledger + run log -> recording -> cache -> retries -> concurrency limit -> ``client``.

    Args:
      client: the client to wrap (a provider, a :class:`cwm.llm.ScriptedClient`, a client of your own, which
        needs only ``model`` and ``complete``: the wrapped client has the ledger).
      settings: the wrappers' settings (default :class:`ClientSettings`'s defaults).
      **options: settings by name, over those of ``settings``: ``run_dir``, ``cache``, ``record``,
        ``max_attempts``, ``base_delay_s``, ``max_delay_s``, ``max_retry_after_s``, ``retry_seed``, ``sleep``,
        ``max_concurrency``, ``batch``, ``max_prompt_tokens`` (see :class:`ClientSettings`).

    Returns:
      The wrapped client; its ``ledger`` attribute holds the run's totals.

    Raises:
      LLMConfigError: an unknown setting, or one out of range.
    """
    s = _settings(settings, options)
    chain: Client = LimitedClient(client, max_concurrency=s.max_concurrency)
    ledger = Ledger()
    chain = RetryingClient(chain, max_attempts=s.max_attempts, base_delay_s=s.base_delay_s, max_delay_s=s.max_delay_s,
                           max_retry_after_s=s.max_retry_after_s, sleep=s.sleep, seed=s.retry_seed, ledger=ledger)
    if s.cache is not None:
        chain = CachedClient(chain, s.cache)
    if s.record is not None:
        chain = RecordingClient(chain, s.record)
    return ManagedClient(chain, ledger=ledger, run_dir=s.run_dir, batch=s.batch, max_prompt_tokens=s.max_prompt_tokens)


def client_provenance(client: Client, *, answered_by: str | None = None) -> Provenance:
    """Who answered ``client``'s requests and how the texts travelled (``cwm.llm.provenance``).

    The chain of wrappers is followed to the provider: a batch directory says it from its replies
    (:meth:`BatchFileClient.provenance`), a replay from its recording's ``<stem>.provenance.json`` when one
    lies beside it, Gemini and OpenAI-compatible providers are ``direct-api`` calls of their model, a
    :class:`ScriptedClient` is ``scripted``; anything else is ``unknown``.

    Args:
      client: the client a run used (wrapped or not).
      answered_by: who answered, as the user states it (``cwm synthesize --answered-by``): used where the
        client cannot say (batch replies without a ``"model"``, a replay without a provenance file, a client
        of your own).

    Raises:
      LLMError: a batch file or a recording's provenance file that does not read or holds a malformed field
        (one line naming the file).
    """
    inner: Any = client
    for _ in range(32):  # a chain of wrappers is a few deep
        if isinstance(inner, BatchFileClient):
            return inner.provenance(answered_by=answered_by)
        if isinstance(inner, ReplayClient):
            beside = inner.path.with_name(inner.path.stem + ".provenance.json")
            if beside.is_file():
                return read_provenance(beside)
            return Provenance(short_name(answered_by or inner.model), "unknown", None)
        if isinstance(inner, ScriptedClient):
            return Provenance(short_name(answered_by or "scripted replies"), "scripted", today())
        if getattr(inner, "inner", None) is None:
            break
        inner = inner.inner
    direct = isinstance(inner, OpenAIClient) or type(inner).__module__ == "cwm.llm.gemini"
    return Provenance(short_name(answered_by or str(getattr(inner, "model", "unknown"))),
                      "direct-api" if direct else "unknown", today())


def make_client(spec: str, settings: ClientSettings | None = None, **options: Any) -> ManagedClient:
    """A ready client for ``spec`` with retries, a concurrency limit, a ledger and (with run_dir) a log.

    Args:
      spec: ``"gemini"`` (default model ``gemini-2.5-pro``), ``"gemini:MODEL"``, ``"openai:MODEL"``,
        ``"replay:FILE"`` or ``"batch:DIR"``.
      settings: the wrappers' settings (see :func:`wrap_client`).
      **options: provider options (``api_key``, ``base_url``, ``timeout_s`` for gemini and openai;
        ``model`` for replay and batch; ``wait_s``, ``poll_s`` for batch) and settings by name (over those of
        ``settings``): ``run_dir`` (where the request log and ledger are written; default nowhere), ``cache``
        (SQLite cache file shared across runs; default none), ``record``, ``max_attempts``, ``base_delay_s``,
        ``max_delay_s``, ``max_retry_after_s``, ``max_concurrency``, ``retry_seed``, ``sleep``, ``batch``,
        ``max_prompt_tokens`` (see :class:`ClientSettings`).

    Raises:
      LLMConfigError: an unknown spec or option, a setting out of range, a missing key, a missing optional
        package.
    """
    names = ClientSettings.names()
    wrapper = _settings(settings, {k: v for k, v in options.items() if k in names})
    client = provider_client(spec, **{k: v for k, v in options.items() if k not in names})
    # batch= stays False unless asked: batch:DIR replies carry their own pricing flag (Response.batch)
    return wrap_client(client, wrapper)
