"""Plots readable at a glance, checked on the drawn figure: the arena's stacked bars carry one error bar each
(the first agent's win-rate interval; two overlapped where few games were drawn), and Decrypto's end-condition
legend covers no bar."""

from __future__ import annotations

import matplotlib.pyplot as plt
from matplotlib.container import ErrorbarContainer

from cwm.arena import report as arena_report
from cwm.arena.types import MatchResult
from cwm.decrypto import report as decrypto_report
from cwm.decrypto.types import END_CONDITIONS


def _matches(a_wins: int, draws: int, b_wins: int, a: str = "a", b: str = "b") -> list[MatchResult]:
    outcomes = [(1.0, -1.0)] * a_wins + [(0.0, 0.0)] * draws + [(-1.0, 1.0)] * b_wins
    return [MatchResult(f"{a}|{b}#{i}", (a, b), i, r) for i, r in enumerate(outcomes)]


def test_each_arena_bar_has_one_error_bar_on_the_first_agents_wins() -> None:
    rows = arena_report.summarize(_matches(6, 1, 5) + _matches(9, 0, 3, "a", "c") + _matches(2, 8, 2, "b", "c"))
    fig = arena_report.figure(rows, outcome="win/draw/loss", title="no draws, one error bar")
    try:
        bars = arena_report.pairings(rows)
        errorbars = [c for c in fig.axes[0].containers if isinstance(c, ErrorbarContainer)]
        assert len(errorbars) == 1  # one set of bars: one interval per pairing
        (lines,) = errorbars[0].lines[2]  # the vertical segments, one per bar
        segments = lines.get_segments()
        assert len(segments) == len(bars) == 3
        for (x0, lo), (_, hi) in segments:  # each spans that pairing's Wilson interval of the win rate
            row = bars[round(x0)]
            assert (lo, hi) == (float(row["win_lo"]), float(row["win_hi"]))
    finally:
        plt.close(fig)


def _decrypto_row(eve: str, shares: tuple[float, ...]) -> dict:
    end = {c: {"rate": s, "low": None, "high": None, "successes": 0} for c, s in zip(END_CONDITIONS, shares)}
    return {"pairing": {"alice": "embed:k=8", "bob": "embed", "eve": eve}, "summary": {"end": end}}


def test_the_decrypto_legend_covers_no_bar() -> None:
    # every bar spans the whole width (the shares sum to 1), so a legend inside the axes always hides one
    rows = [_decrypto_row(f"eve{i}", shares) for i, shares in
            enumerate([(0.5, 0.1, 0.1, 0.3), (0.0, 0.0, 0.0, 1.0), (0.25, 0.25, 0.25, 0.25)])]
    fig = decrypto_report.end_conditions_figure(rows)
    try:
        fig.canvas.draw()
        renderer = fig.canvas.get_renderer()
        ax = fig.axes[0]
        legend = ax.get_legend().get_window_extent(renderer)
        patches = [p.get_window_extent(renderer) for p in ax.patches if p.get_width() > 0]
        assert len(patches) == 4 + 1 + 4  # the non-empty segments
        assert not any(legend.overlaps(p) for p in patches)
        width, height = fig.canvas.get_width_height()
        assert legend.x1 <= width and legend.y0 >= 0  # and it is on the page
    finally:
        plt.close(fig)
