"""Any OpenAI-compatible chat endpoint (vLLM, llama.cpp server, Ollama, hosted APIs); the `openai` extra."""

from __future__ import annotations

import os
import time
from typing import Any

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


def _import_openai() -> Any:
    try:
        import openai  # an optional extra (`pip install '.[openai]'`), imported when a client is built
    except ImportError as e:
        raise LLMConfigError(
            "the OpenAI-compatible client needs the optional `openai` package: pip install '.[openai]' in the "
            "cwm checkout (or pip install openai)") from e
    return openai


class OpenAIClient:
    """A :class:`cwm.llm.Client` for an OpenAI-compatible ``chat/completions`` endpoint.

    The SDK's own retries stay off (``max_retries=0``): the shared retry layer retries.
    ``thinking_budget`` is not sent (the chat API has no such field); ``seed`` is sent when set. Its
    ``ledger`` counts the calls it made: replies, and errors (with the tokens a blocked reply was billed).

    Args:
      model: the model id the endpoint serves.
      api_key: default ``OPENAI_API_KEY``; local servers accept any text, so "none" is used if unset
        and a base URL is given.
      base_url: default ``OPENAI_BASE_URL``, else the SDK's default (OpenAI's hosted API).
      timeout_s: per-request timeout in seconds (default 600).

    Raises:
      LLMConfigError: the `openai` package is missing, or no key for the hosted API.
    """

    def __init__(self, *, model: str, api_key: str | None = None, base_url: str | None = None,
                 timeout_s: float = 600.0) -> None:
        openai = _import_openai()
        self._openai = openai
        base_url = base_url or os.environ.get("OPENAI_BASE_URL") or None
        key = api_key or os.environ.get("OPENAI_API_KEY") or ("none" if base_url else "")
        if not key:
            raise LLMConfigError("the OpenAI API needs a key: set OPENAI_API_KEY or pass api_key=, "
                                 "or give base_url= of a local server")
        if not model:
            raise LLMConfigError("the OpenAI-compatible client needs a model id: 'openai:MODEL'")
        self.model = model
        self.base_url = base_url
        self._sdk = openai.OpenAI(api_key=key, base_url=base_url, timeout=timeout_s, max_retries=0)
        self.ledger = Ledger()

    def complete(self, request: Request) -> Response:
        """One ``chat.completions.create`` call, counted in ``ledger``.

        Raises:
          RateLimitedError, ServerError, LLMTimeoutError, BlockedError, BadRequestError: see cwm.llm.types.
        """
        return self.ledger.count(self.model, request, self._create)

    def _create(self, request: Request) -> Response:
        messages = ([{"role": "system", "content": request.system}] if request.system else [])
        messages += [{"role": m.role, "content": m.text} for m in request.messages]
        settings: dict[str, Any] = {"n": request.n, "temperature": request.temperature,
                                    "max_tokens": request.max_output_tokens}
        if request.seed is not None:
            settings["seed"] = request.seed
        start = time.monotonic()
        try:
            reply = self._sdk.chat.completions.create(model=self.model, messages=messages, **settings)
        except Exception as e:  # every SDK failure becomes one of our typed errors
            raise self._typed(e) from e
        try:
            return self._response(reply, time.monotonic() - start)
        except (TypeError, AttributeError, ValueError) as e:  # the SDK does not validate reply shapes
            raise ServerError(f"OpenAI-compatible {self.model!r}: malformed reply: {type(e).__name__}: {e}") from e

    def _typed(self, e: Exception) -> LLMError:
        openai = self._openai
        where = f"OpenAI-compatible {self.model!r} at {self.base_url or 'the default endpoint'}"
        if isinstance(e, openai.APITimeoutError):
            return LLMTimeoutError(f"{where}: no answer within the timeout")
        if isinstance(e, openai.APIStatusError):
            retry_after = parse_retry_after(e.response.headers.get("retry-after"))
            return error_for_status(e.status_code, f"{where}: {e.status_code}: {e.message}", retry_after)
        if isinstance(e, openai.APIConnectionError):
            return ServerError(f"{where}: connection failed: {e}")
        if isinstance(e, (openai.APIResponseValidationError, ValueError, TypeError, AttributeError)):
            return ServerError(f"{where}: malformed reply: {type(e).__name__}: {e}")
        raise e

    def _response(self, reply: Any, latency_s: float) -> Response:
        if not hasattr(reply, "choices"):  # the SDK hands back a bare str when the body is not JSON
            raise ServerError(f"OpenAI-compatible {self.model!r}: malformed reply: {str(reply)[:200]!r}")
        usage = _usage(getattr(reply, "usage", None))
        choices = sorted(reply.choices or [], key=lambda c: c.index)
        texts = tuple((c.message.content or "") if c.message else "" for c in choices)
        reasons = tuple(str(c.finish_reason or "unspecified") for c in choices)
        if not any(texts):
            raise BlockedError(f"OpenAI-compatible {self.model!r} gave no usable reply "
                               f"({len(choices)} choices, finish reasons {list(reasons)})", usage=usage)
        return Response(texts, reasons, usage, latency_s, str(reply.model or self.model))


def _usage(usage: Any) -> Usage:
    if usage is None:
        return Usage()
    details = getattr(usage, "completion_tokens_details", None)
    reasoning = int(getattr(details, "reasoning_tokens", 0) or 0) if details else 0
    completion = int(usage.completion_tokens or 0)
    return Usage(int(usage.prompt_tokens or 0), completion - reasoning, reasoning)
