"""`make_client`: build a provider client from a spec string and wrap it in the shared behaviour."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from cwm.llm.base import Client, LLMConfigError


def make_client(spec: str, *, run_dir: Path | None = None, cache: Path | None = None, **options: Any) -> Client:
    """A client for ``spec`` ("gemini", "gemini:MODEL", "openai:MODEL", "replay:FILE").

    Providers land in the next commits; until then every spec is refused with a clear error.
    """
    raise LLMConfigError(f"make_client({spec!r}): providers are not implemented yet (issue 4 in progress)")
