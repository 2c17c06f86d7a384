"""Gemini through the google-genai SDK: requests in, typed errors and token usage out."""

from __future__ import annotations

import importlib
import os
import time
from types import ModuleType
from typing import Any

from google import genai
from google.genai import errors as genai_errors
from google.genai import types as genai_types

from cwm.llm.ledger import Ledger
from cwm.llm.types import (
    BlockedError,
    LLMConfigError,
    LLMError,
    LLMTimeoutError,
    Request,
    Response,
    ServerError,
    Usage,
    error_for_status,
    parse_retry_after,
)

__all__ = ["DEFAULT_MODEL", "HTTP_MODULES", "KEY_VARIABLES", "GeminiClient", "api_key_from_env", "error_for_status",
           "http_error_classes", "parse_retry_after"]

DEFAULT_MODEL = "gemini-2.5-pro"
KEY_VARIABLES = ("GEMINI_API_KEY", "GOOGLE_API_KEY")
HTTP_MODULES = ("httpx2", "httpx")  # google-genai uses either, by GOOGLE_GENAI_HTTP_CLIENT and what is installed


def http_error_classes(modules: tuple[str, ...] = HTTP_MODULES) -> tuple[tuple[type, ...], tuple[type, ...]]:
    """``(timeout classes, transport classes)`` of every HTTP library in ``modules`` that imports.

    google-genai (>= 3.6) sends through httpx2 by default and through httpx when
    ``GOOGLE_GENAI_HTTP_CLIENT=httpx`` (or when only httpx is installed); a timeout surfaces as that
    library's own exception, so both families must be recognised.
    """
    found = [m for m in (_try_import(name) for name in modules) if m is not None]
    return (tuple(m.TimeoutException for m in found), tuple(m.TransportError for m in found))


def _try_import(name: str) -> ModuleType | None:
    try:
        return importlib.import_module(name)
    except ImportError:
        return None


_TIMEOUT_ERRORS, _TRANSPORT_ERRORS = http_error_classes()


def api_key_from_env() -> tuple[str, str]:
    """The first non-empty Gemini key variable: ``(name, value)``, or ``("", "")`` if none is set."""
    for name in KEY_VARIABLES:
        if os.environ.get(name):
            return name, os.environ[name]
    return "", ""


class GeminiClient:
    """A :class:`cwm.llm.Client` for Gemini models through google-genai.

    The SDK's own retries stay off: the shared retry layer (:mod:`cwm.llm.shared`) retries. Its ``ledger``
    counts the calls it made: replies, and errors (with the tokens a blocked reply was billed).

    Args:
      model: Gemini model id (default ``"gemini-2.5-pro"``).
      api_key: the key; default ``GEMINI_API_KEY`` or else ``GOOGLE_API_KEY``.
      base_url: another endpoint (a proxy, a local fake server); default the SDK's.
      timeout_s: per-request timeout in seconds (default 600; long thinking can take minutes).

    Raises:
      LLMConfigError: no key given and none in the environment.
    """

    def __init__(self, *, model: str = DEFAULT_MODEL, api_key: str | None = None, base_url: str | None = None,
                 timeout_s: float = 600.0) -> None:
        key = api_key or api_key_from_env()[1]
        if not key:
            raise LLMConfigError(
                f"Gemini needs an API key: set {' or '.join(KEY_VARIABLES)}, or pass api_key=")
        self.model = model
        self.base_url = base_url
        options = genai_types.HttpOptions(base_url=base_url, timeout=int(timeout_s * 1000))
        self._sdk = genai.Client(api_key=key, http_options=options)
        self.ledger = Ledger()

    def complete(self, request: Request) -> Response:
        """One ``generateContent`` call, counted in ``ledger``.

        Raises:
          RateLimitedError, ServerError, LLMTimeoutError, BlockedError, BadRequestError: see cwm.llm.types.
        """
        return self.ledger.count(self.model, request, self._generate)

    def _generate(self, request: Request) -> Response:
        start = time.monotonic()
        try:
            reply = self._sdk.models.generate_content(
                model=self.model, contents=_contents(request), config=_config(request))
        except Exception as e:  # every SDK failure becomes one of our typed errors
            raise self._typed(e) from e
        return _response(reply, self.model, time.monotonic() - start)

    def _typed(self, e: Exception) -> LLMError:
        where = f"Gemini {self.model!r} at {self.base_url or 'the default endpoint'}"
        if isinstance(e, genai_errors.APIError):
            return error_for_status(int(e.code or 0), f"{where}: {e.code} {e.status}: {e.message}",
                                    _retry_after(e))
        if isinstance(e, _TIMEOUT_ERRORS):
            return LLMTimeoutError(f"{where}: no answer within the timeout ({type(e).__name__})")
        if isinstance(e, _TRANSPORT_ERRORS):
            return ServerError(f"{where}: connection failed: {type(e).__name__}: {e}")
        if isinstance(e, (ValueError, TypeError)):
            return ServerError(f"{where}: malformed reply: {type(e).__name__}: {e}")
        raise e


def _retry_after(e: genai_errors.APIError) -> float | None:
    headers = getattr(getattr(e, "response", None), "headers", None)
    return parse_retry_after(headers.get("retry-after")) if headers is not None else None


def _contents(request: Request) -> list[genai_types.Content]:
    return [genai_types.Content(role="model" if m.role == "assistant" else "user",
                                parts=[genai_types.Part(text=m.text)]) for m in request.messages]


def _config(request: Request) -> genai_types.GenerateContentConfig:
    thinking = (None if request.thinking_budget is None
                else genai_types.ThinkingConfig(thinking_budget=request.thinking_budget))
    return genai_types.GenerateContentConfig(
        system_instruction=request.system or None,
        candidate_count=request.n,
        temperature=request.temperature,
        max_output_tokens=request.max_output_tokens,
        seed=request.seed,
        thinking_config=thinking,
    )


def _candidate_text(candidate: Any) -> str:
    parts = (candidate.content.parts or []) if candidate.content else []
    return "".join(p.text for p in parts if p.text and not p.thought)


def _name(value: Any) -> str:
    return str(getattr(value, "value", value) or "UNSPECIFIED")


def _response(reply: genai_types.GenerateContentResponse, model: str, latency_s: float) -> Response:
    meta = reply.usage_metadata
    usage = Usage(
        input_tokens=(meta.prompt_token_count or 0) if meta else 0,
        output_tokens=(meta.candidates_token_count or 0) if meta else 0,
        thinking_tokens=(meta.thoughts_token_count or 0) if meta else 0,
    )
    candidates = reply.candidates or []
    feedback = reply.prompt_feedback
    if not candidates and meta is None and not (feedback and feedback.block_reason):
        # an empty body ("", [], null, {}): a broken gateway or a cut-off reply, not a refusal
        raise ServerError(f"Gemini {model!r}: malformed reply: empty body (no candidates, no block reason, "
                          "no usage)")
    texts = tuple(_candidate_text(c) for c in candidates)
    reasons = tuple(_name(c.finish_reason) for c in candidates)
    if not any(texts):
        why = (f"prompt blocked: {_name(feedback.block_reason)}" if feedback and feedback.block_reason
               else f"{len(candidates)} candidates, none with text (finish reasons {list(reasons)})")
        if "MAX_TOKENS" in reasons:
            why += "; thinking may have used the whole max_output_tokens: raise it or lower thinking_budget"
        raise BlockedError(f"Gemini {model!r} gave no usable reply: {why}", usage=usage)
    return Response(texts, reasons, usage, latency_s, model)
