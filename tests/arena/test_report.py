"""Arena statistics: Wilson and mean intervals, per-seat summaries, and the files a report writes."""

from __future__ import annotations

import csv
import json
import math

import pytest

from cwm import arena
from cwm.arena import MatchResult
from cwm.arena import types as arena_types
from cwm.arena.report import finite_json, mean_interval, summarize, wilson, write_reports
from cwm.arena.view import embedded_json


@pytest.mark.parametrize("k,n,lo,hi", [
    (0, 10, 0.0, 0.2775), (5, 10, 0.2366, 0.7634), (10, 10, 0.7225, 1.0), (81, 100, 0.7222, 0.8749),
])
def test_wilson_matches_known_values(k, n, lo, hi):
    got = wilson(k, n)
    assert got[0] == pytest.approx(lo, abs=1e-4) and got[1] == pytest.approx(hi, abs=1e-4)


def test_wilson_of_nothing_is_uninformative():
    assert wilson(0, 0) == (0.0, 1.0)


def test_mean_interval():
    mean, lo, hi = mean_interval([1.0, -1.0, 1.0, -1.0])
    assert mean == 0.0 and hi == pytest.approx(1.959964 * math.sqrt(4 / 3) / 2)
    assert lo == -hi
    assert mean_interval([2.0]) == (2.0, 2.0, 2.0)


def _results():
    return [
        MatchResult("a|b#0", ("a", "b"), 1, (1.0, -1.0)),
        MatchResult("a|b#1", ("a", "b"), 2, (0.0, 0.0)),
        MatchResult("b|a#0", ("b", "a"), 3, (-1.0, 1.0), forfeit_seat=0, forfeit_kind="illegal", reason="bad move"),
        MatchResult("b|a#1", ("b", "a"), 4, (1.0, -1.0), forfeit_seat=1, forfeit_kind="timeout", reason="slow"),
    ]


def test_summarize_counts_per_seat_and_pooled():
    rows = {(r["agent"], r["seat"]): r for r in summarize(_results())}
    a0, a1, a_all = rows[("a", "0")], rows[("a", "1")], rows[("a", "all")]
    assert (a0["wins"], a0["draws"], a0["losses"]) == (1, 1, 0)
    assert (a1["wins"], a1["losses"], a1["forfeits_timeout"], a1["opponent_forfeits"]) == (1, 1, 1, 1)
    assert a1["forfeit_reasons"] == ["slow"]
    assert a_all["matches"] == 4 and a_all["win_rate"] == 0.5 and a_all["forfeit_rate"] == 0.25
    b_all = rows[("b", "all")]
    assert b_all["forfeits_illegal"] == 1 and b_all["opponent"] == "a"
    assert a_all["mean_payoff"] == pytest.approx(0.25)


@pytest.mark.parametrize("game", ["tic_tac_toe", "leduc_poker"])
def test_write_reports_files(tmp_path, game):
    rows = write_reports(tmp_path, _results(), config={"game": game})
    data = json.loads((tmp_path / "results.json").read_text())
    assert data["rows"] == rows and data["outcome"] == ("payoff" if game == "leduc_poker" else "win/draw/loss")
    with (tmp_path / "results.csv").open() as f:
        assert len(list(csv.DictReader(f))) == len(rows) == 6
    table = (tmp_path / "results.md").read_text()
    assert table.split("\n\n")[0].count("\n") == 1 + len(rows)  # the table, then the paired comparisons
    assert ("mean payoff" in table) == (game == "leduc_poker")
    assert (tmp_path / "results.png").read_bytes()[:4] == b"\x89PNG"


def test_match_records_live_in_their_own_module_and_round_trip():
    assert arena.MatchResult is arena_types.MatchResult and arena.MatchOutcome is arena_types.MatchOutcome
    result = arena_types.MatchResult("a|b#0", ("a", "b"), 1, (1.0, -1.0), 1, "illegal", "bad move", 5, 0.5)
    assert arena_types.MatchResult.from_json(json.loads(json.dumps(result.to_json()))) == result


def _sampled(key, seats, stats):
    return MatchResult(key, seats, 0, (1.0, -1.0), stats=stats)


def test_an_ismcts_agents_rejected_draws_and_fallback_moves_are_summed_per_row(tmp_path):
    ismcts = {"moves": 4, "draws": 30, "rejected_draws": 10, "fallback_moves": 1}
    results = [_sampled("i|r#0", ("i", "r"), (ismcts, {})), _sampled("r|i#0", ("r", "i"), ({}, ismcts)),
               # a worker's record is untrusted: a bool, a negative or a float count is ignored, not summed
               _sampled("i|r#1", ("i", "r"), ({"moves": True, "draws": -5, "rejected_draws": 2.5}, {}))]
    rows = {(r["agent"], r["seat"]): r for r in summarize(results)}
    pooled = rows[("i", "all")]
    assert (pooled["searched_moves"], pooled["sampled_worlds"], pooled["rejected_worlds"],
            pooled["fallback_moves"]) == (8, 60, 20, 2)
    assert pooled["rejected_draw_rate"] == 0.25 and pooled["fallback_rate"] == 0.25
    assert pooled["draws"] == 0  # drawn games (none here), not the 60 worlds sampled
    assert "searched_moves" not in rows[("r", "all")]  # random play keeps no sampling record
    write_reports(tmp_path, results, config={"game": "leduc_poker"})
    table = (tmp_path / "results.md").read_text().splitlines()
    assert table[0].endswith("draws rejected / moves fell back |")
    line = next(t for t in table if t.startswith("| i | r | all |"))
    assert line.endswith(" 25.0% / 25.0% |") and next(t for t in table if t.startswith("| r |")).endswith(" - / - |")
    with (tmp_path / "results.csv").open() as f:
        assert {r["agent"]: r["fallback_rate"] for r in csv.DictReader(f) if r["seat"] == "all"} == {
            "i": "0.25", "r": ""}


@pytest.mark.parametrize("actions", [[1, "2"], [1, True], "12", [1.0]])
def test_a_match_record_with_damaged_actions_is_refused(actions):
    data = MatchResult("a|b#0", ("a", "b"), 1, (1.0, -1.0), actions=(1, 2)).to_json()
    assert MatchResult.from_json(data).actions == (1, 2)
    with pytest.raises(ValueError, match="'actions' of a match result must be a list of integers"):
        MatchResult.from_json(data | {"actions": actions})


def test_pages_and_reports_make_every_non_finite_number_null_at_any_depth(tmp_path):
    """One rule for both: results.json and a page's embedded JSON hold no NaN or infinity, however deep."""
    value = {"a": math.nan, "b": [1.5, (math.inf, {"c": -math.inf})], "d": "NaN", "e": 2}
    expected = {"a": None, "b": [1.5, [None, {"c": None}]], "d": "NaN", "e": 2}
    assert finite_json(value) == expected
    assert json.loads(embedded_json(value)) == expected
