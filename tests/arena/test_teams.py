"""Team scores of a cooperative game (cwm.arena.teams): the statistics on simulated scores with a known
truth, and tournaments of Hanabi and tiny Hanabi where every team plays the same deals and the reports
show team scores out of the game's best, never wins, draws or losses."""

from __future__ import annotations

import json
import re
from pathlib import Path

import numpy as np
import pytest

from cwm.agents import Settings
from cwm.arena import teams, tournament
from cwm.arena.plan import TournamentPlan, plan_jobs
from cwm.arena.standings import Standings
from cwm.arena.types import MatchResult
from cwm.cli import main
from cwm.llm.fakes import FakeOpenAI
from planners.config import SearchConfig

PLAN = TournamentPlan(matches=4, settings=Settings(search=SearchConfig(num_simulations=8, rollouts=1)))


def _results(scores: dict[str, list[float]]) -> list[MatchResult]:
    """Two-player matches of each team (``"a+b"``) on deals 0, 1, ...: one seat order per deal."""
    return [MatchResult(f"{team}#{d}", tuple(team.split("+")), d, (s, s), deal=d)
            for team, values in scores.items() for d, s in enumerate(values)]


def test_the_team_interval_covers_a_known_mean_score_as_often_as_it_says() -> None:
    """Scores 0..25 drawn from a skewed distribution with a known mean, 30 deals per tournament."""
    rng = np.random.default_rng(0)
    support = np.arange(26)
    weights = np.where(support < 5, 4.0, 1.0) * np.where(support > 20, 0.2, 1.0)
    p = weights / weights.sum()
    truth = float(support @ p)
    covered = 0
    for _ in range(400):
        row = teams.team_rows(_results({"a+a": list(rng.choice(support, size=30, p=p).astype(float))}),
                              max_score=25.0, min_score=0.0)[0]
        covered += row["score_lo"] <= truth <= row["score_hi"]
    assert 0.92 <= covered / 400 <= 0.98, covered


def test_a_real_difference_between_teams_is_detected_and_none_is_claimed_without_one() -> None:
    rng = np.random.default_rng(1)
    detected = false = 0
    for _ in range(200):
        deal = rng.integers(0, 20, size=40).astype(float)  # the deal's difficulty, shared by both teams
        strong = np.clip(deal + 3 + rng.normal(0, 3, 40), 0, 25)
        weak = np.clip(deal + rng.normal(0, 3, 40), 0, 25)
        same = np.clip(deal + rng.normal(0, 3, 40), 0, 25)
        rows = teams.team_comparisons(_results({"s+s": list(strong), "w+w": list(weak)}))
        detected += rows[0]["detected"] and rows[0]["team"] == "s+s"
        false += teams.team_comparisons(_results({"x+x": list(same), "w+w": list(weak)}))[0]["detected"]
    assert detected / 200 > 0.9  # paired on deals: the deal's spread does not hide a 3-point edge
    assert false / 200 < 0.1  # about 5% at 95%


def test_one_deal_gives_no_interval_and_equal_scores_say_so() -> None:
    [row] = teams.team_rows(_results({"a+a": [7.0]}), max_score=10.0)
    assert row["deals"] == 1 and np.isnan(row["score_lo"]) and not row["spread"]
    assert teams.score_cell(row) == "7.00 / 10 (no spread)"
    [row] = teams.team_rows(_results({"a+b": [0.0, 0.0, 0.0]}), max_score=25.0)
    assert teams.score_cell(row) == "0.00 / 25 (no spread)"
    [cmp] = teams.team_comparisons(_results({"a+a": [3.0], "b+b": [1.0]}))
    assert cmp["deals"] == 1 and not cmp["detected"]


def test_seat_orders_of_a_team_pool_into_one_deal_value() -> None:
    results = [MatchResult("k1", ("a", "b"), 1, (4.0, 4.0), deal=9), MatchResult("k2", ("b", "a"), 2, (8.0, 8.0), deal=9),
               MatchResult("k3", ("b", "a"), 3, (2.0, 2.0), deal=None)]  # no deal recorded: not paired, left out
    assert teams.deal_values(results) == {"a+b": {9: 6.0}}


def test_a_cooperative_game_is_found_from_its_ground_truth() -> None:
    assert teams.cooperative("hanabi") and teams.cooperative("tiny_hanabi") and teams.cooperative("hanabi(players=3)")
    assert not teams.cooperative("leduc_poker") and not teams.cooperative("tic_tac_toe")


def test_every_team_plays_the_same_deals() -> None:
    jobs = plan_jobs("tiny_hanabi", ["random", "gt-ismcts"], PLAN)
    tables = {teams.team_label(j.seats) for j in jobs}
    assert tables == {"random+random", "gt-ismcts+random", "gt-ismcts+gt-ismcts"}  # every team, own and mixed
    by_index: dict[int, set[int]] = {}
    for j in jobs:
        by_index.setdefault(j.index, set()).add(j.deal)
    assert all(len(deals) == 1 for deals in by_index.values()) and len({d for s in by_index.values() for d in s}) == 4
    # a competitive game keeps its deals per table
    jobs = plan_jobs("leduc_poker", ["random", "gt-ismcts", "gt-mcts-py"], PLAN.replace(matches=1))
    assert len({j.deal for j in jobs}) == 3


def test_a_tiny_hanabi_tournament_reports_team_scores_not_wins(tmp_path: Path) -> None:
    out = tmp_path / "arena"
    results = tournament("tiny_hanabi", ["random", "gt-ismcts"], PLAN, out_dir=out, executor="inline", progress=False)
    assert len(results) == 4 * (1 + 2 + 1)  # random+random, both seat orders of the mixed team, gt+gt
    data = json.loads((out / "results.json").read_text())
    assert data["outcome"] == "team" and "rows" not in data and "leaderboard" not in data
    assert {t["team"] for t in data["teams"]} == {"random+random", "gt-ismcts+random", "gt-ismcts+gt-ismcts"}
    for t in data["teams"]:
        mine = [r for r in results if teams.team_label(r.seats) == t["team"]]
        assert t["deals"] == 4 and t["matches"] == len(mine) and t["max_score"] == 10
        per_deal = {}
        for r in mine:
            per_deal.setdefault(r.deal, []).append(r.returns[0])
        assert t["mean_score"] == pytest.approx(np.mean([np.mean(v) for v in per_deal.values()]))
    assert len(data["team_comparisons"]) == 3 and data["reference"] == ""
    text = (out / "results.md").read_text()
    assert "/ 10" in text and not re.search(r"\bwin\b|\bdraw\b|\bloss\b|W/D/L", text), text
    assert (out / "results.png").stat().st_size > 0
    standings = Standings.read(out)  # a notebook's view of the folder: the same team table
    assert standings.markdown() == (out / "leaderboard.md").read_text()
    assert "team scores" in standings._repr_html_() and "leaderboard" not in standings._repr_html_()


def _first_legal_hint_else_play(body: dict) -> str:
    """A hand-written direct-LLM player for the test (not a model): the last legal move listed in the
    prompt, a hint while hint tokens last, then the last play."""
    listed = body["messages"][-1]["content"].split("## Your legal moves", 1)[1].strip().splitlines()[0]
    return f"ACTION: {listed.split(', ')[-1]}"


def test_hanabi_teams_with_a_direct_llm_team_on_a_fake_server(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                              capsys: pytest.CaptureFixture[str]) -> None:
    with FakeOpenAI(models=("hand-written-hanabi",)) as server:
        server.script_by(_first_legal_hint_else_play)
        monkeypatch.setenv("OPENAI_BASE_URL", server.base_url)
        monkeypatch.setenv("OPENAI_API_KEY", "fake-key")
        out = tmp_path / "hanabi"
        code = main(["arena", "hanabi", "--agents", "random,direct=llm+legal:openai:hand-written-hanabi", "--matches", "2",
                     "--out", str(out), "--yes", "--no-progress", "--executor", "inline"])
    captured = capsys.readouterr()
    printed = captured.out
    assert code == 0, captured.err[-2000:]
    assert server.request_count > 0
    rows = {t["team"]: t for t in json.loads((out / "results.json").read_text())["teams"]}
    assert set(rows) == {"direct+direct", "direct+random", "random+random"}
    assert all(r["max_score"] == 25 and r["deals"] == 2 for r in rows.values())
    assert all(r["forfeits_illegal"] == 0 for r in rows.values())  # every reply was a legal move
    assert "/ 25" in printed and "about 15 of 25" in printed and "above 20 of 25" in printed
    assert "Bradley-Terry" not in printed and not re.search(r"\| win|W/D/L", printed)


def test_a_forfeit_in_a_cooperative_game_scores_the_whole_team_the_minimum() -> None:
    """A seat that forfeits loses for its team: every seat of a cooperative game gets the minimum (not the
    others the maximum, which would raise a team's score whenever a seat other than the first forfeits); a
    zero-sum game keeps the worst for the forfeiter and the best for the others."""
    import pyspiel

    from cwm.arena.run import _forfeit

    hanabi = pyspiel.load_game("hanabi(players=3)")
    assert [_forfeit(hanabi, seat) for seat in range(3)] == [[hanabi.min_utility()] * 3] * 3
    kuhn = pyspiel.load_game("kuhn_poker")
    assert _forfeit(kuhn, 1) == [kuhn.max_utility(), kuhn.min_utility()]
