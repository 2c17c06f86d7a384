"""The leaderboard: Bradley-Terry ratings with bootstrap intervals, W/D/L, forfeits and LLM cost per win."""

import json
import math

import numpy as np
import pytest

from cwm.arena.ratings import ELO_PER_LOGIT, leaderboard, markdown, ratings
from cwm.arena.report import pairings, summarize, write_reports
from cwm.arena.types import MatchResult


def _match(i, a, b, winner, **fields):
    returns = (0.0, 0.0) if winner is None else ((1.0, -1.0) if winner == a else (-1.0, 1.0))
    return MatchResult(f"{a}|{b}#{i}", (a, b), i, returns, **fields)


def _simulated(strengths, n, seed):
    """Matches between every pair, won with Bradley-Terry probabilities from ``strengths`` (logits)."""
    rng = np.random.default_rng(seed)
    results, names = [], list(strengths)
    for x in range(len(names)):
        for y in range(x + 1, len(names)):
            a, b = names[x], names[y]
            p = 1 / (1 + math.exp(strengths[b] - strengths[a]))
            results += [_match(i, a, b, a if rng.random() < p else b) for i in range(n)]
    return results


def test_ratings_recover_known_strengths_within_their_intervals():
    strengths = {"weak": -1.0, "middle": 0.0, "strong": 1.0}
    rated = ratings(_simulated(strengths, 300, seed=1), bootstrap=100, seed=0)
    assert [a for a, _ in sorted(rated.items(), key=lambda kv: kv[1][0])] == ["weak", "middle", "strong"]
    gap = rated["strong"][0] - rated["weak"][0]
    assert abs(gap - 2 * ELO_PER_LOGIT) < 0.15 * 2 * ELO_PER_LOGIT
    for rating, lo, hi in rated.values():
        assert lo < rating < hi and hi - lo < 150
    assert math.isclose(sum(r for r, _, _ in rated.values()) / 3, 1000.0)


def test_draws_count_half_each_way_and_the_bootstrap_is_seeded():
    results = [_match(i, "a", "b", None) for i in range(10)]
    rated = ratings(results, bootstrap=20, seed=3)
    assert math.isclose(rated["a"][0], rated["b"][0])
    mixed = _simulated({"a": 0.5, "b": 0.0}, 40, seed=2)
    assert ratings(mixed, bootstrap=30, seed=7) == ratings(mixed, bootstrap=30, seed=7)
    assert ratings(mixed, bootstrap=30, seed=7) != ratings(mixed, bootstrap=30, seed=8)


def test_the_same_matches_in_another_order_give_the_same_ratings_bit_for_bit():
    """Rows of matches.jsonl are appended as matches end, in another order with each run on several workers."""
    mixed = _simulated({"a": 0.5, "b": 0.0, "c": -0.3}, 30, seed=4)
    shuffled = [mixed[i] for i in np.random.default_rng(9).permutation(len(mixed))]
    assert shuffled != mixed
    assert ratings(shuffled, bootstrap=40, seed=1) == ratings(mixed, bootstrap=40, seed=1)
    assert leaderboard(shuffled, bootstrap=40) == leaderboard(mixed, bootstrap=40)


def test_an_unbeaten_agent_gets_a_finite_rating():
    rated = ratings([_match(i, "a", "b", "a") for i in range(5)], bootstrap=10)
    assert all(math.isfinite(v) for triple in rated.values() for v in triple) and rated["a"][0] > rated["b"][0]


def test_the_leaderboard_counts_outcomes_forfeits_and_cost_per_win():
    llm = {"llm_calls": 3, "input_tokens": 100, "output_tokens": 20, "cost_usd": 0.01}
    results = [_match(0, "llm", "random", "llm", stats=(llm, {})),
               _match(1, "llm", "random", "llm", stats=(llm, {})),
               _match(2, "llm", "random", "random", forfeit_seat=0, forfeit_kind="illegal", stats=(llm, {})),
               _match(3, "llm", "random", None, stats=(llm, {})),
               MatchResult("llm|random#4", ("llm", "random"), 4, (0.0, 0.0), None, "crash", "died")]  # void
    rows = {r["agent"]: r for r in leaderboard(results, bootstrap=10)}
    assert (rows["llm"]["wins"], rows["llm"]["draws"], rows["llm"]["losses"], rows["llm"]["matches"]) == (2, 1, 1, 4)
    assert rows["llm"]["forfeits_illegal"] == 1 and rows["random"]["forfeits_illegal"] == 0
    assert rows["llm"]["input_tokens"] == 400 and math.isclose(rows["llm"]["cost_usd"], 0.04)
    assert math.isclose(rows["llm"]["cost_per_win"], 0.02)
    assert "cost_per_win" not in rows["random"]
    table = markdown(list(rows.values()))
    assert "| llm |" in table and "$0.0200 |" in table and table.splitlines()[0].endswith("cost per win |")


def test_a_match_with_no_listed_price_leaves_the_cost_unknown():
    priced = {"llm_calls": 1, "cost_usd": 0.5}
    unpriced = {"llm_calls": 1}
    results = [_match(0, "llm", "r", "llm", stats=(priced, {})), _match(1, "llm", "r", "llm", stats=(unpriced, {}))]
    (row,) = [r for r in leaderboard(results, bootstrap=0) if r["agent"] == "llm"]
    assert row["cost_usd"] is None and row["cost_per_win"] is None


def test_the_plot_shows_each_pairing_once(tmp_path):
    results = _simulated({"a": 0.0, "b": 0.3, "c": 0.6}, 4, seed=0)
    results += [MatchResult(f"b|a#{i}", ("b", "a"), i, (1.0, -1.0)) for i in range(4)]  # the other seat order
    shown = pairings(summarize(results))
    assert sorted(frozenset((r["agent"], r["opponent"])) for r in shown) == sorted(
        frozenset(p) for p in (("a", "b"), ("a", "c"), ("b", "c")))
    assert next(r for r in shown if {r["agent"], r["opponent"]} == {"a", "b"})["matches"] == 8
    write_reports(tmp_path, results, config={"game": "tic_tac_toe"})
    data = json.loads((tmp_path / "results.json").read_text())
    assert [r["agent"] for r in data["leaderboard"]][0] == "c"
    assert (tmp_path / "leaderboard.md").read_text().count("\n") == 2 + 3


@pytest.mark.parametrize("bootstrap", [0, 5])
def test_no_matches_gives_an_empty_leaderboard(bootstrap):
    assert leaderboard([], bootstrap=bootstrap) == []


def test_across_games_each_game_weighs_the_same():
    from cwm.arena.ratings import ratings_across

    # b beats a in a short game and loses to it as clearly in a game with ten times the matches
    short = [_match(i, "a", "b", "b") for i in range(8)] + [_match(8 + i, "a", "b", "a") for i in range(2)]
    long = [_match(i, "a", "b", "a") for i in range(80)] + [_match(80 + i, "a", "b", "b") for i in range(20)]
    across = ratings_across({"short": short, "long": long}, bootstrap=50, seed=1)
    # equal weight: they cancel out (up to the regularisation, which pulls the short game a little more)
    assert math.isclose(across["a"][0], across["b"][0], abs_tol=2.0)
    pooled = ratings(short + long, bootstrap=0)
    assert pooled["a"][0] > pooled["b"][0] + 100  # pooled matches: the long game dominates
    assert all(lo <= r <= hi for r, lo, hi in across.values())


def test_agents_with_no_shared_game_are_not_ranked_against_each_other():
    from cwm.arena.ratings import head_to_head, ratings_across

    by_game = {"g1": [_match(i, "a", "b", "a") for i in range(10)], "g2": [_match(i, "c", "d", "c") for i in range(10)]}
    pairs = {(p["agent"], p["opponent"]): p for p in head_to_head(by_game, bootstrap=20)}
    assert pairs[("a", "c")]["games"] == [] and pairs[("a", "c")]["difference"] is None
    assert pairs[("a", "b")]["games"] == ["g1"] and pairs[("a", "b")]["difference"] > 0
    with pytest.raises(ValueError, match="no game that every agent played"):
        ratings_across(by_game, bootstrap=0)


def test_head_to_head_survives_a_resample_that_draws_none_of_an_agents_matches():
    from cwm.arena.ratings import head_to_head

    # c plays one match in g1: most resamples of g1 leave it out, and the pair is then judged on g2 alone
    by_game = {"g1": [_match(i, "a", "b", "a") for i in range(12)] + [_match(12, "a", "c", "c")],
               "g2": [_match(i, "a", "c", "a" if i % 3 else "c") for i in range(12)]}
    pairs = {(p["agent"], p["opponent"]): p for p in head_to_head(by_game, bootstrap=60, seed=3)}
    ac = pairs[("a", "c")]
    assert ac["games"] == ["g1", "g2"] and ac["difference_lo"] <= ac["difference"] <= ac["difference_hi"]


def _swapped(i, a, b, first, second, deal):
    """Match i of seat orders (a, b) and (b, a) on one deal; ``first``/``second``: who won each."""
    return [_match(i, a, b, first, index=i, deal=deal), _match(i, b, a, second, index=i, deal=deal)]


def test_a_bootstrap_resamples_seat_swapped_pairs_whole_and_in_an_order_of_content():
    from cwm.arena.ratings import head_to_head, ratings_across, resample, resampling_units

    rng = np.random.default_rng(5)
    paired = [m for i in range(20) for m in _swapped(i, "a", "b", *rng.choice(["a", "b"], size=2), deal=100 + i)]
    units = resampling_units(paired + [_match(99, "a", "b", "a", index=99)])  # one match without a deal: its own unit
    assert len(units) == 21 and sorted(len(u) for u in units) == [1] + [2] * 20
    assert all({r.seats for r in u} == {("a", "b"), ("b", "a")} for u in units if len(u) == 2)
    drawn = resample(units, np.random.default_rng(0))
    by_index = {}
    for r in drawn:
        by_index.setdefault(r.index, []).append(r.seats)
    assert all(seats.count(("a", "b")) == seats.count(("b", "a")) for i, seats in by_index.items() if i != 99)
    shuffled = [paired[i] for i in np.random.default_rng(9).permutation(len(paired))]
    other = _simulated({"a": 0.3, "b": 0.0}, 20, seed=6)
    assert head_to_head({"g": shuffled, "h": other}, bootstrap=30) == head_to_head({"g": paired, "h": other}, bootstrap=30)
    assert ratings_across({"g": shuffled, "h": other}, bootstrap=30) == ratings_across({"g": paired, "h": other},
                                                                                       bootstrap=30)
