"""Synthesis."""
