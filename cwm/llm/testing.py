"""Pytest fixtures for the fake LLM servers; import them into a test module or conftest to use them.

    from cwm.llm.testing import fake_gemini  # noqa: F401  (pytest finds the fixture by name)

    def test_synthesis_end_to_end(fake_gemini):
        fake_gemini.script("```python\\n...\\n```", "second reply")
        client = fake_gemini.client()            # make_client("gemini:gemini-2.5-pro", base_url=...)
        ...
        assert fake_gemini.request_count == 2

Needs pytest (the `test` extra); the servers themselves live in :mod:`cwm.llm.fakes`.
"""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from cwm.llm.fakes import FakeGemini, FakeOpenAI


@pytest.fixture
def fake_gemini() -> Iterator[FakeGemini]:
    """A started :class:`cwm.llm.fakes.FakeGemini` on 127.0.0.1 (models gemini-2.5-pro, gemini-test)."""
    with FakeGemini() as server:
        yield server


@pytest.fixture
def fake_openai() -> Iterator[FakeOpenAI]:
    """A started :class:`cwm.llm.fakes.FakeOpenAI` on 127.0.0.1 (model local-model)."""
    with FakeOpenAI() as server:
        yield server
