"""Fixtures of the LLM tests: the fake servers (shared with other areas through cwm.llm.testing)."""

from cwm.llm.testing import fake_gemini, fake_openai  # noqa: F401  (fixtures, found by name)
