"""LLM clients."""
