"""LLM clients: one protocol, Gemini and OpenAI-compatible providers, replay, cache, batch, retries, ledger.

``make_client("gemini")`` is the usual entry point; see docs/llm.md. Provider SDKs are imported only
when their client is built (``cwm.llm.gemini``, ``cwm.llm.openai_compat``).
"""

from cwm.llm.base import (
    BadRequestError,
    BlockedError,
    Client,
    LLMConfigError,
    LLMError,
    LLMTimeoutError,
    Message,
    PromptTooLongError,
    RateLimitedError,
    Request,
    Response,
    ScriptedClient,
    ServerError,
    Usage,
)
from cwm.llm.batch import BatchFileClient, PendingBatch, answer_pending, pending_entries, pending_requests
from cwm.llm.cache import CachedClient
from cwm.llm.factory import make_client, provider_client, wrap_client
from cwm.llm.replay import RecordingClient, ReplayClient, ReplayFormatError, ReplayMissError
from cwm.llm.shared import Ledger, ManagedClient

__all__ = [
    "BadRequestError",
    "BatchFileClient",
    "BlockedError",
    "CachedClient",
    "Client",
    "LLMConfigError",
    "LLMError",
    "LLMTimeoutError",
    "Ledger",
    "ManagedClient",
    "Message",
    "PendingBatch",
    "PromptTooLongError",
    "RateLimitedError",
    "RecordingClient",
    "ReplayClient",
    "ReplayFormatError",
    "ReplayMissError",
    "Request",
    "Response",
    "ScriptedClient",
    "ServerError",
    "Usage",
    "answer_pending",
    "make_client",
    "pending_entries",
    "pending_requests",
    "provider_client",
    "wrap_client",
]
