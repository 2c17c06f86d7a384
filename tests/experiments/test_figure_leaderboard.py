"""experiments/figure_report.py's leaderboard across games: ranked head to head over the games each pair
shares, so an agent that loses head to head is not ranked above its winner by playing other games."""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np

from cwm.arena.ratings import ratings
from cwm.arena.types import MatchResult

ROOT = Path(__file__).resolve().parents[2]
if str(ROOT) not in sys.path:  # the experiments folder is not installed: the checkout's (cwm stays the installed one)
    sys.path.append(str(ROOT))
from experiments.figure_report import leaderboard, leaderboard_markdown  # noqa: E402


def _match(i, a, b, winner):
    returns = (0.0, 0.0) if winner is None else ((1.0, -1.0) if winner == a else (-1.0, 1.0))
    return MatchResult(f"{a}|{b}#{i}", (a, b), i, returns)


def _games_like_the_issues_case():
    """The issue's case: cwm beats random on four perfect-information games, where gt-ismcts does not play,
    and loses head to head to gt-ismcts (15-6-19 in all) on the one hidden-information game."""
    perfect = {f"p{k}": [_match(i, "cwm", "random", "cwm") for i in range(18)]
               + [_match(18 + i, "cwm", "random", "random") for i in range(2)] for k in range(4)}
    hidden = ([_match(i, "cwm", "gt-ismcts", "cwm") for i in range(15)]
              + [_match(15 + i, "cwm", "gt-ismcts", None) for i in range(6)]
              + [_match(21 + i, "cwm", "gt-ismcts", "gt-ismcts") for i in range(19)]
              + [_match(40 + i, "gt-ismcts", "random", "gt-ismcts") for i in range(16)]
              + [_match(56 + i, "gt-ismcts", "random", "random") for i in range(4)])
    return perfect | {"hidden": hidden}


def test_an_agent_that_loses_head_to_head_is_not_ranked_above_by_a_different_game_set():
    by_game = _games_like_the_issues_case()
    averaged = {label: np.mean([ratings(r, bootstrap=0)[label][0] for r in by_game.values()
                                if any(label in m.seats for m in r)]) for label in ("cwm", "gt-ismcts")}
    assert averaged["cwm"] > averaged["gt-ismcts"]  # the old mean over each agent's own games ranked cwm first
    rows = leaderboard(by_game, bootstrap=30, seed=0)
    order = [r["agent"] for r in rows]
    assert order.index("gt-ismcts") < order.index("cwm") < order.index("random")
    (pair,) = [p for p in next(r for r in rows if r["agent"] == "gt-ismcts")["head_to_head"] if p["opponent"] == "cwm"]
    assert pair["games"] == ["hidden"] and pair["difference"] > 0
    rated = {r["agent"]: r["rating"] for r in rows}
    assert rows[0]["rated_on"] == ["hidden"] and rated["gt-ismcts"] > rated["cwm"]  # the one game all three played
    md = "\n".join(leaderboard_markdown(rows))
    assert "over the games every agent played (hidden)" in md and "| gt-ismcts | cwm | hidden | +" in md
