"""LLM clients: one protocol, Gemini and OpenAI-compatible providers, replay, cache, batch, retries, ledger."""

from cwm.llm.base import (
    BadRequestError,
    BlockedError,
    Client,
    LLMConfigError,
    LLMError,
    LLMTimeoutError,
    Message,
    RateLimitedError,
    Request,
    Response,
    ScriptedClient,
    ServerError,
    Usage,
)
from cwm.llm.factory import make_client

__all__ = [
    "BadRequestError",
    "BlockedError",
    "Client",
    "LLMConfigError",
    "LLMError",
    "LLMTimeoutError",
    "Message",
    "RateLimitedError",
    "Request",
    "Response",
    "ScriptedClient",
    "ServerError",
    "Usage",
    "make_client",
]
