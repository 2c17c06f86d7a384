"""`make_client`: build a provider client from a spec string and wrap it in the shared behaviour."""

from __future__ import annotations

import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from cwm.llm.base import Client
from cwm.llm.batch import BatchFileClient
from cwm.llm.cache import CachedClient
from cwm.llm.ledger import Ledger
from cwm.llm.openai_compat import OpenAIClient
from cwm.llm.replay import RecordingClient, ReplayClient
from cwm.llm.shared import LimitedClient, ManagedClient, RetryingClient
from cwm.llm.types import LLMConfigError

PROVIDERS = ("gemini", "openai", "replay", "batch")

_PROVIDER_OPTIONS = {
    "gemini": {"api_key", "base_url", "timeout_s"},
    "openai": {"api_key", "base_url", "timeout_s"},
    "replay": {"model"},
    "batch": {"model", "wait_s", "poll_s"},
}


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


def wrap_client(client: Client, *, run_dir: Path | None = None, cache: Path | None = None,
                record: Path | None = None, max_attempts: int = 5, base_delay_s: float = 2.0,
                max_delay_s: float = 60.0, max_retry_after_s: float = 120.0, max_concurrency: int = 8,
                retry_seed: int | None = None, sleep: Callable[[float], None] = time.sleep, batch: bool = False,
                max_prompt_tokens: int | None = None) -> ManagedClient:
    """Wraps any client in the shared behaviour; the chain from outside in is
    ledger + run log -> recording -> cache -> retries -> concurrency limit -> ``client``.

    Args:
      client: the client to wrap (a provider, a :class:`cwm.llm.ScriptedClient`, ...).
      run_dir: where ``llm_log.jsonl`` and ``llm_ledger.json`` go (default: no files).
      cache: the SQLite cache file (default: no cache).
      record: a replay file to append every reply to (default: no recording).
      max_attempts, base_delay_s, max_delay_s, max_retry_after_s, retry_seed, sleep: see
        :class:`cwm.llm.shared.RetryingClient`.
      max_concurrency: calls in flight at once (default 8).
      batch: price every reply at batch rates (half price), for a client that goes through a provider's
        batch API; otherwise a reply is batch-priced only when its ``Response.batch`` says so (the
        ``batch:DIR`` client sets it from each reply line's ``"batch"`` field).
      max_prompt_tokens: refuse (``PromptTooLongError``, nothing sent) a prompt estimated above this many
        tokens at 4 characters a token; default the model's context window
        (:data:`cwm.llm.prices.CONTEXT_WINDOWS`, else ``DEFAULT_CONTEXT_WINDOW``).

    Returns:
      The wrapped client; its ``ledger`` attribute holds the run's totals.
    """
    chain: Client = LimitedClient(client, max_concurrency=max_concurrency)
    ledger = Ledger()
    chain = RetryingClient(chain, max_attempts=max_attempts, base_delay_s=base_delay_s, max_delay_s=max_delay_s,
                           max_retry_after_s=max_retry_after_s, sleep=sleep, seed=retry_seed, ledger=ledger)
    if cache is not None:
        chain = CachedClient(chain, cache)
    if record is not None:
        chain = RecordingClient(chain, record)
    return ManagedClient(chain, ledger=ledger, run_dir=run_dir, batch=batch, max_prompt_tokens=max_prompt_tokens)


def make_client(spec: str, *, run_dir: Path | None = None, cache: Path | None = None, **options: Any) -> ManagedClient:
    """A ready client for ``spec`` with retries, a concurrency limit, a ledger and (with run_dir) a log.

    Args:
      spec: ``"gemini"`` (default model ``gemini-2.5-pro``), ``"gemini:MODEL"``, ``"openai:MODEL"``,
        ``"replay:FILE"`` or ``"batch:DIR"``.
      run_dir: where the request log and ledger are written (default: nowhere).
      cache: SQLite cache file shared across runs (default: no cache).
      **options: provider options (``api_key``, ``base_url``, ``timeout_s`` for gemini and openai;
        ``model`` for replay and batch; ``wait_s``, ``poll_s`` for batch) and the options of
        :func:`wrap_client` (``record``, ``max_attempts``, ``base_delay_s``, ``max_delay_s``,
        ``max_retry_after_s``, ``max_concurrency``, ``retry_seed``, ``sleep``, ``max_prompt_tokens``).

    Raises:
      LLMConfigError: an unknown spec or option, a missing key, a missing optional package.
    """
    wrap_names = {"record", "max_attempts", "base_delay_s", "max_delay_s", "max_retry_after_s", "max_concurrency",
                  "retry_seed", "sleep", "max_prompt_tokens"}
    wrap_options = {k: v for k, v in options.items() if k in wrap_names}
    provider_options = {k: v for k, v in options.items() if k not in wrap_names}
    client = provider_client(spec, **provider_options)
    # batch:DIR replies carry their own "batch" pricing flag (Response.batch), so nothing is forced here
    return wrap_client(client, run_dir=run_dir, cache=cache, **wrap_options)
