"""LLM clients: one protocol, Gemini and OpenAI-compatible providers, replay, cache, batch, retries, ledger.

``make_client("gemini")`` is the usual entry point; see docs/llm.md. Provider SDKs are imported only
when their client is built (``cwm.llm.gemini``, ``cwm.llm.openai_compat``).

The modules, each importing only those above it: ``types`` (requests, replies, errors), ``prices``,
``ledger``, ``provenance`` (who answered and how the texts travelled), ``base`` (the :class:`Client` protocol, :class:`ScriptedClient`), ``cache``, ``replay``,
``batch``, ``batch_texts``, ``openai_compat``, ``gemini``, ``shared`` (retries, limit, run log),
``factory`` (:func:`make_client`), ``fakes`` and ``testing`` (fake servers for tests).
"""

from cwm.llm.base import Client, ScriptedClient
from cwm.llm.batch import BatchFileClient, answer_pending, pending_entries, pending_requests
from cwm.llm.cache import CachedClient
from cwm.llm.factory import (
    SPEC_FORMS,
    ClientSettings,
    client_provenance,
    make_client,
    provider_client,
    wrap_client,
)
from cwm.llm.ledger import Ledger
from cwm.llm.provenance import (
    PROVENANCE_FILE,
    RELAYS,
    Provenance,
    ProvenanceError,
    read_provenance,
    write_provenance,
)
from cwm.llm.replay import RecordingClient, ReplayClient, ReplayFormatError, ReplayMissError
from cwm.llm.shared import ManagedClient
from cwm.llm.types import (
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
    ServerError,
    Usage,
    refuse_long_text,
)

__all__ = [
    "SPEC_FORMS",
    "BadRequestError",
    "BatchFileClient",
    "BlockedError",
    "CachedClient",
    "Client",
    "ClientSettings",
    "LLMConfigError",
    "LLMError",
    "LLMTimeoutError",
    "Ledger",
    "ManagedClient",
    "Message",
    "PROVENANCE_FILE",
    "PendingBatch",
    "PromptTooLongError",
    "refuse_long_text",
    "Provenance",
    "ProvenanceError",
    "RELAYS",
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
    "client_provenance",
    "make_client",
    "pending_entries",
    "pending_requests",
    "provider_client",
    "read_provenance",
    "wrap_client",
    "write_provenance",
]
