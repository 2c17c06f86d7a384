"""Fixtures of the agents tests: the reference Leduc model and its hand-written inference function, as a
contained agent's files. The planner fixtures and score intervals the agents tests share with the planners
tests (``data_dir``, ``fixture_model``, ``mean_ci``) and the reference encoders (``source``, ``encode``) are in
tests/conftest.py."""

from __future__ import annotations

from pathlib import Path

DATA = Path(__file__).resolve().parents[1] / "data"
LEDUC = (DATA / "reference" / "leduc_poker_model.py").read_text()
LEDUC_INFERENCE = (DATA / "selection" / "leduc_inference.py").read_text()
