"""PosteriorReport's rich display: the summary, the opponent model and one row per checked state with its
distance, interval and both distributions; values the game wrote are shown as text."""

from __future__ import annotations

import dataclasses
import re
from pathlib import Path

from cwm.checks.posterior import PosteriorSettings, posterior_check
from cwm.contract import INFERENCE_API
from cwm.sandbox import load_source

REFERENCE = (Path(__file__).resolve().parents[1] / "data" / "reference" / "leduc_poker_inference.py").read_text()


def test_the_display_shows_the_summary_and_every_state():
    own = load_source(REFERENCE, name="reference", api=INFERENCE_API).resample_history
    report = posterior_check("leduc_poker", own, PosteriorSettings(games_played=3, states=4, draws=60, seed=1))
    page = report._repr_html_()
    assert f"<p>{report.summary().replace(chr(39), '&#x27;')}</p>" in page
    assert f"opponent model: {report.opponent_model}" in page
    rows = re.findall(r"<tr><td>(\d+)</td><td>(\d+)</td><td>([01])</td><td>(\w+)</td><td>([\d.]+) \[", page)
    assert [(int(g), int(s), int(p), t, float(tv)) for g, s, p, t, tv in rows] == [
        (c.game, c.step, c.player, c.truth, round(c.tv, 3)) for c in report.states]
    top = max(report.states[0].p.items(), key=lambda kv: kv[1])
    assert f"{top[0]}: {top[1]:.2f}" in page


def test_a_value_the_game_wrote_renders_as_text():
    own = load_source(REFERENCE, name="reference", api=INFERENCE_API).resample_history
    report = posterior_check("leduc_poker", own, PosteriorSettings(games_played=1, states=1, draws=20, seed=0))
    state = dataclasses.replace(report.states[0], p={"<script>alert(1)</script>": 1.0},
                                error="<img src=x onerror=alert(1)>")
    page = dataclasses.replace(report, states=(state,))._repr_html_()
    assert "<script>" not in page and "<img" not in page
    assert "&lt;script&gt;alert(1)&lt;/script&gt;: 1.00" in page and "0: &lt;img src=x" in page


class Ran(Exception):
    """Raised by a hook of a value's class: the display ran the value's own code."""


class HookedText(str):
    """A str whose every formatting hook raises (what an f-string or a concatenation would call)."""

    def __format__(self, spec: str) -> str:
        raise Ran("__format__")

    def __str__(self) -> str:
        raise Ran("__str__")

    def __add__(self, other: object) -> str:
        raise Ran("__add__")

    def __radd__(self, other: object) -> str:
        raise Ran("__radd__")

    def __len__(self) -> int:
        raise Ran("__len__")


class HookedNumber(float):
    def __format__(self, spec: str) -> str:
        raise Ran("__format__")

    def __neg__(self) -> float:
        raise Ran("__neg__")

    def __repr__(self) -> str:
        raise Ran("__repr__")


def test_no_hook_of_a_value_runs_while_the_display_is_built():
    own = load_source(REFERENCE, name="reference", api=INFERENCE_API).resample_history
    report = posterior_check("leduc_poker", own, PosteriorSettings(games_played=1, states=1, draws=20, seed=0))
    state = dataclasses.replace(report.states[0], p={HookedText("card 3"): HookedNumber(0.75)},
                                q={HookedText("card 1"): 0.5, "card 2": HookedNumber(0.25)},
                                error=HookedText("no such card"), invalid=2, tv=HookedNumber(0.125))
    page = dataclasses.replace(report, states=(state,), opponent_model=HookedText("fixed"))._repr_html_()
    assert "card 3: 0.75" in page and "card 1: 0.50; card 2: 0.25" in page
    assert "2: no such card" in page and "0.125 [" in page and "opponent model: fixed;" in page
