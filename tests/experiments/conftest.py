"""Every experiments test runs without the developer's LLM keys, so none can reach a live (paid) LLM.

``auto`` picks Gemini whenever GEMINI_API_KEY or GOOGLE_API_KEY is set, and the OpenAI client follows
OPENAI_API_KEY / OPENAI_BASE_URL; a test that wants a provider sets its own (a fake server on 127.0.0.1).
Module scope, so the module-scoped fixtures that run whole experiments see the cleared environment too.
"""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from cwm.pipeline import recordings
from cwm.pipeline import stages as pipeline

LLM_ENVIRONMENT = (*pipeline.API_KEY_VARS, "OPENAI_API_KEY", "OPENAI_BASE_URL")


@pytest.fixture(scope="module", autouse=True)
def no_llm_keys() -> Iterator[None]:
    with pytest.MonkeyPatch.context() as mp:
        for var in LLM_ENVIRONMENT:
            mp.delenv(var, raising=False)
        yield


@pytest.fixture
def backgammon_unrecorded(monkeypatch) -> str:
    """Backgammon as a game cwm ships no recorded session for, so ``auto`` without a key has no LLM
    (every registered game may ship one; the refusal is what is under test)."""
    shipped, listed = recordings.recording_for, recordings._recordings
    monkeypatch.setattr(recordings, "recording_for",
                        lambda game, deck="open", *a, **k: None if game == "backgammon" else shipped(game, deck, *a, **k))
    monkeypatch.setattr(recordings, "_recordings", lambda: [p for p in listed() if p.stem != "backgammon"])
    return "backgammon"
