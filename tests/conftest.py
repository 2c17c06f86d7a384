"""Fixtures that tests of several packages use; a package's own fixtures live in its folder's conftest.py.

- ``source`` and ``encode``: the hand-written reference files and encoders (the PPO, checks, agents and
  bundle tests);
- ``ttt_games``, ``leduc_games`` and ``leduc_source``: recorded games and the reference Leduc model (the
  checks and synthesis tests of the value and inference targets);
- ``data_dir``, ``fixture_model`` and ``mean_ci``: the planner fixtures and score intervals (the planners
  and agents tests);
- ``html_tags``: a piece of HTML read as a browser's parser reads it, its start tags and its text (the tests of
  the notebook displays).

They are fixtures (not importable helpers) because CI runs pytest with --import-mode=importlib, where test
folders are not on sys.path, and no test imports another folder's conftest.
"""

from __future__ import annotations

import importlib.util
from collections.abc import Callable
from html.parser import HTMLParser
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from cwm import games, model
from cwm.contract import ENCODER_API
from cwm.games import trajectories
from cwm.sandbox import load_source

DATA = Path(__file__).resolve().parent / "data"
BENCHMARKS = Path(__file__).resolve().parents[1] / "benchmarks"
REFERENCE = DATA / "reference"
PLANNERS = DATA / "planners"


def _reference_source(name: str) -> str:
    return (REFERENCE / name).read_text(encoding="utf-8")


def _encoder(game: str) -> Callable[[Any, int], Any]:
    return load_source(_reference_source(f"{game}_encoder.py"), name=f"{game}_encoder", api=ENCODER_API).encode


def _load(name: str, game: str = "tic_tac_toe") -> model.WorldModel:
    source = (PLANNERS / name).read_text(encoding="utf-8")
    module = load_source(source, name=Path(name).stem)
    return model.WorldModel(module, codec=model.ActionCodec.from_game(games.load_game(game)), name=Path(name).stem)


def _mean_ci(values: list[float]) -> tuple[float, float, float]:
    arr = np.asarray(values, dtype=float)
    half = 1.96 * arr.std(ddof=1) / np.sqrt(len(arr)) if len(arr) > 1 else 0.0
    return float(arr.mean()), float(arr.mean() - half), float(arr.mean() + half)


@pytest.fixture
def source() -> Callable[[str], str]:
    """The text of a file in tests/data/reference."""
    return _reference_source


@pytest.fixture
def encode() -> Callable[[str], Callable[[Any, int], Any]]:
    """The hand-written encoder of a game, loaded (gated) in this process."""
    return _encoder


@pytest.fixture(scope="session")
def ttt_games() -> list:
    return trajectories.collect("tic_tac_toe", 3, seed=0)


@pytest.fixture(scope="session")
def leduc_games():
    return trajectories.collect("leduc_poker", 4, seed=0)


@pytest.fixture(scope="session")
def leduc_source():
    return (REFERENCE / "leduc_poker_model.py").read_text()


@pytest.fixture
def data_dir() -> Path:
    """tests/data/planners."""
    return PLANNERS


@pytest.fixture
def fixture_model() -> Callable[..., model.WorldModel]:
    """Loads a model file from tests/data/planners as a WorldModel with the game's action ids."""
    return _load


@pytest.fixture
def mean_ci() -> Callable[[list[float]], tuple[float, float, float]]:
    """Mean and 95% normal interval of a list of scores."""
    return _mean_ci


class _Tags(HTMLParser):
    """The start tags of a piece of HTML (``tags``) and its text (``text``), as a browser's parser reads them."""

    def __init__(self, page: str) -> None:
        super().__init__(convert_charrefs=True)
        self.tags: list[str] = []
        self.text: list[str] = []
        self.feed(page)
        self.close()

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.tags.append(tag)

    def handle_data(self, data: str) -> None:
        self.text.append(data)


@pytest.fixture
def html_tags() -> type[_Tags]:
    """``html_tags(page).tags`` and ``.text``: what a browser would make of ``page``."""
    return _Tags


def _benchmark(name: str) -> Any:
    spec = importlib.util.spec_from_file_location(name, BENCHMARKS / f"{name}.py")
    assert spec is not None and spec.loader is not None, name
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@pytest.fixture(scope="session")
def benchmark_module() -> Callable[[str], Any]:
    """``benchmark_module(name)``: ``benchmarks/<name>.py`` loaded from its file (the benchmarks folder is not a
    package on the test path)."""
    return _benchmark
