"""The one price table (USD per million tokens by model id, for the ledger's cost estimates) and, next to
it, the table of context windows (the longest prompt a model takes, for the prompt cap).

Prices are providers' published list prices for the standard (non-batch) API, as we last read them;
they change, so treat costs as estimates and update this table (only this table) when they do.
Thinking tokens are billed at the output price by both Google and OpenAI. Models not listed (local
servers, fakes) cost 0 and are counted as unpriced in the ledger, and get the small
``DEFAULT_CONTEXT_WINDOW``.
"""

from __future__ import annotations

import dataclasses
import re
from collections.abc import Mapping
from typing import Any

from cwm.llm.types import Usage


@dataclasses.dataclass(frozen=True)
class Price:
    """USD per million tokens; prompts longer than ``long_prompt_tokens`` use the ``long_`` prices."""

    input: float
    output: float
    long_prompt_tokens: int | None = None
    long_input: float = 0.0
    long_output: float = 0.0


# A model id matches an entry exactly or with a version suffix only ("gemini-2.5-pro-preview-05-06",
# "gpt-4o-2024-08-06", "gemini-2.0-flash-001" -> their entries); a sibling such as "gpt-4.1-mini" or
# "o3-mini" is another model and matches nothing unless listed itself.
PRICES: dict[str, Price] = {
    "gemini-3-pro": Price(2.00, 12.00, 200_000, 4.00, 18.00),
    "gemini-2.5-pro": Price(1.25, 10.00, 200_000, 2.50, 15.00),
    "gemini-2.5-flash-lite": Price(0.10, 0.40),
    "gemini-2.5-flash": Price(0.30, 2.50),
    "gemini-2.0-flash": Price(0.10, 0.40),
    "gpt-4o-mini": Price(0.15, 0.60),
    "gpt-4o": Price(2.50, 10.00),
    "gpt-4.1-mini": Price(0.40, 1.60),
    "gpt-4.1": Price(2.00, 8.00),
    "o3-mini": Price(1.10, 4.40),
    "o3": Price(2.00, 8.00),
    "o4-mini": Price(1.10, 4.40),
}

# Input tokens a model takes in one prompt, from the providers' model pages (same matching as PRICES).
CONTEXT_WINDOWS: dict[str, int] = {
    "gemini-3-pro": 1_048_576,
    "gemini-2.5-pro": 1_048_576,
    "gemini-2.5-flash-lite": 1_048_576,
    "gemini-2.5-flash": 1_048_576,
    "gemini-2.0-flash": 1_048_576,
    "gpt-4o-mini": 128_000,
    "gpt-4o": 128_000,
    "gpt-4.1-mini": 1_047_576,
    "gpt-4.1": 1_047_576,
    "o3-mini": 200_000,
    "o3": 200_000,
    "o4-mini": 200_000,
}
# For a model not listed (a local server's, a new one): small on purpose, since a long prompt to an unknown
# model is more likely a mistake than a need; raise it with max_prompt_tokens / --max-prompt-tokens.
DEFAULT_CONTEXT_WINDOW = 32_768

BATCH_DISCOUNT = 0.5  # Gemini's and OpenAI's batch APIs bill half the standard price


# What may follow a listed id in the same model: a date (-2024-08-06, -20250514, -05-06), a preview or
# experimental tag with an optional date, a version number (-001), "-latest".
_VERSION_SUFFIX = re.compile(
    r"(-(preview|exp|experimental))?(-\d{4}-\d{2}-\d{2}|-\d{8}|-\d{2}-\d{4}|-\d{2}-\d{2}|-\d{3}|-\d{4})?(-latest)?")


def listed_as(model: str, table: Mapping[str, Any]) -> str | None:
    """The id ``model`` is listed under in ``table``: the id itself, or it plus a version suffix (a date, a
    ``-preview``/``-exp`` tag, ``-001``, ``-latest``); ``"models/"`` is ignored. ``None`` if unlisted."""
    name = model.removeprefix("models/")
    for listed in sorted(table, key=len, reverse=True):
        if name.startswith(listed) and _VERSION_SUFFIX.fullmatch(name[len(listed):]):
            return listed
    return None


def price_for(model: str) -> Price | None:
    """The price entry of ``model`` (matched as :func:`listed_as` says), ``None`` if unlisted."""
    listed = listed_as(model, PRICES)
    return None if listed is None else PRICES[listed]


def context_window(model: str) -> int:
    """The most input tokens ``model`` takes (``CONTEXT_WINDOWS``; ``DEFAULT_CONTEXT_WINDOW`` if unlisted)."""
    listed = listed_as(model, CONTEXT_WINDOWS)
    return DEFAULT_CONTEXT_WINDOW if listed is None else CONTEXT_WINDOWS[listed]


def cost_usd(model: str, usage: Usage, *, batch: bool = False) -> float | None:
    """Estimated cost of one call in USD; ``None`` when the model has no price listed.

    Args:
      model: the model id that answered.
      usage: the call's tokens; thinking tokens are billed as output.
      batch: whether the call went through a provider's batch API (half price).
    """
    price = price_for(model)
    if price is None:
        return None
    long = price.long_prompt_tokens is not None and usage.input_tokens > price.long_prompt_tokens
    per_in, per_out = (price.long_input, price.long_output) if long else (price.input, price.output)
    cost = (usage.input_tokens * per_in + (usage.output_tokens + usage.thinking_tokens) * per_out) / 1e6
    return cost * (BATCH_DISCOUNT if batch else 1.0)
