"""Paired comparisons in the arena's reports: pairs found by index and swapped seats, the edge of each pair,
the verdict in words (ahead, level by TOST, or nothing detected with the matches that would resolve it), and
what each agent was."""

from __future__ import annotations

import json

import numpy as np

from cwm.arena.compare import bound_for, comparisons, describe_agents, edge_pairs, margin_for
from cwm.arena.report import write_reports
from cwm.arena.types import MatchResult


def _pair(i: int, a_first: float, a_second: float, *, void: bool = False) -> list[MatchResult]:
    """Match i of seat orders (a, b) and (b, a), agent a scoring ``a_first`` then ``a_second`` (zero-sum)."""
    second = MatchResult(f"b|a#{i}", ("b", "a"), i, (-a_second, a_second), index=i,
                         forfeit_kind="crash" if void else "", deal=1000 + i)
    return [MatchResult(f"a|b#{i}", ("a", "b"), i, (a_first, -a_first), index=i, deal=1000 + i), second]


def test_a_pair_is_one_index_in_both_seat_orders_and_its_value_is_the_edge():
    results = [*_pair(0, 1.0, -1.0), *_pair(1, 1.0, 1.0), *_pair(2, 3.0, 1.0, void=True)]
    results.append(MatchResult("a|b#3", ("a", "b"), 3, (2.0, -2.0), index=3, deal=3))  # its twin was never played
    payoff, unpaired = edge_pairs(results, "a", "b", outcome="payoff")
    assert sorted(payoff) == [0.0, 1.0] and unpaired == 3
    wdl, _ = edge_pairs(results, "b", "a", outcome="win/draw/loss")
    assert sorted(wdl) == [-0.5, 0.0]  # b lost both of pair 1: score 0, edge -1/2; pair 0 one each


def test_matches_on_different_or_unrecorded_deals_are_not_paired():
    # rows from before deals were shared (no deal) or of two chance schemes mixed by a resume
    old = [MatchResult("a|b#0", ("a", "b"), 0, (1.0, -1.0), index=0), MatchResult("b|a#0", ("b", "a"), 1,
                                                                                  (1.0, -1.0), index=0)]
    mixed = [MatchResult("a|b#1", ("a", "b"), 2, (1.0, -1.0), index=1, deal=5),
             MatchResult("b|a#1", ("b", "a"), 3, (1.0, -1.0), index=1)]
    same = _pair(2, 1.0, -1.0)
    values, unpaired = edge_pairs(old + mixed + same, "a", "b", outcome="payoff")
    assert values == [0.0] and unpaired == 4
    (row,) = comparisons(old, outcome="payoff", margin=1.0, bound=1.0)
    assert row["pairs"] == 0 and row["unpaired"] == 2 and row["verdict"].startswith("no complete seat-swapped pair")


def test_a_tiny_payoff_run_says_it_resolves_nothing_and_how_many_matches_would():
    rng = np.random.default_rng(0)
    results = [m for i in range(10) for m in _pair(i, *rng.choice([-3.0, -1.0, 1.0, 5.0], size=2))]
    (row,) = comparisons(results, outcome="payoff", margin=margin_for("payoff", 26.0),
                         bound=bound_for("payoff", 26.0))
    assert row["matches"] == 20 and row["pairs"] == 10 and not row["significant"]
    assert row["lo"] < 0 < row["hi"] and row["mde"] > abs(row["mean"])
    assert row["needed_matches"] > 20 and row["equivalent"] is False
    assert f"about {row['needed_matches']} matches would resolve" in row["verdict"]
    assert "no difference detected" in row["verdict"] and "level" not in row["verdict"]


def test_a_clear_winner_is_named_and_parity_needs_the_equivalence_test():
    rng = np.random.default_rng(1)
    wins = [m for i in range(60) for m in _pair(i, 1.0, float(rng.choice([1.0, -1.0], p=[0.7, 0.3])))]
    (row,) = comparisons(wins, outcome="win/draw/loss", margin=margin_for("win/draw/loss", None),
                         bound=0.5)
    assert row["significant"] and row["verdict"].startswith("a ahead")
    even = [m for i in range(600) for m in _pair(i, *rng.choice([1.0, -1.0], size=2))]
    (level,) = comparisons(even, outcome="win/draw/loss", margin=0.05, bound=0.5)
    (few,) = comparisons(even[:40], outcome="win/draw/loss", margin=0.05, bound=0.5)
    assert level["equivalent"] and level["verdict"].startswith("level within ±0.05")
    assert not few["equivalent"] and "no difference detected" in few["verdict"]


def test_thirty_drawn_pairs_are_not_parity_and_five_won_pairs_are_no_difference():
    draws = [m for i in range(30) for m in _pair(i, 0.0, 0.0)]
    (row,) = comparisons(draws, outcome="win/draw/loss", margin=0.05, bound=0.5)
    assert not row["significant"] and row["equivalent"] is False and row["lo"] < -0.05 and row["hi"] > 0.05
    assert row["verdict"].startswith("no difference detected (could detect ±")
    wins = [m for i in range(5) for m in _pair(i, 1.0, 1.0)]
    (won,) = comparisons(wins, outcome="win/draw/loss", margin=0.05, bound=0.5)
    assert not won["significant"] and "5 pair(s) cannot show one" in won["verdict"]
    (more,) = comparisons(wins + [m for i in range(5, 8) for m in _pair(i, 1.0, 1.0)], outcome="win/draw/loss",
                          margin=0.05, bound=0.5)
    assert more["verdict"].startswith("a ahead")


def test_a_payoff_game_without_a_utility_range_is_not_tested():
    results = [m for i in range(30) for m in _pair(i, 1.0, 1.0)]
    (row,) = comparisons(results, outcome="payoff", margin=None, bound=bound_for("payoff", None))
    assert row["mean"] == 1.0 and not row["significant"] and row["verdict"].startswith("not tested")


def test_the_report_states_each_agents_settings_and_the_comparison(tmp_path):
    results = [m for i in range(5) for m in _pair(i, 1.0, -1.0)]
    settings = {"search": {"num_simulations": 25, "rollouts": 1}, "llm_retries": 3, "llm_examples": 2}
    write_reports(tmp_path, results, config={"game": "leduc_poker", "matches": 5, "settings": settings},
                  specs={"a": "cwm:/x/bundle", "b": "random"})
    data = json.loads((tmp_path / "results.json").read_text())
    assert data["agent_settings"]["a"].startswith("ISMCTS on the synthesized model, 25 simulations, 1 rollout")
    assert "inference: the bundle's synthesized inference function" in data["agent_settings"]["a"]
    (row,) = data["comparisons"]
    assert (row["agent"], row["opponent"], row["matches"], row["pairs"]) == ("a", "b", 10, 5)
    assert "/x/bundle" not in (tmp_path / "results.json").read_text()  # a report names no path
    md = (tmp_path / "results.md").read_text()
    assert "| a | b | 10 (5) | +0.000 [-10.546, +10.546] | - |" in md  # 5 pairs in a range of ±13 and "(5 matches per seat order" in md
    assert "- `a`: ISMCTS on the synthesized model, 25 simulations" in md


def test_an_llm_agent_is_described_by_its_model():
    found = describe_agents({"l": "llm:gemini-2.5-flash", "g": "gt-mcts"}, {"search": {"num_simulations": 1000,
                            "rollouts": 10}, "llm_retries": 2, "llm_examples": 0}, perfect=True)
    assert found["l"] == "LLM policy, model `gemini-2.5-flash`, 2 retries, 0 example trajectories"
    assert found["g"] == "MCTS on the true game, 1000 simulations, 10 rollouts per leaf"


def test_a_rollout_cut_off_is_said_in_what_was_run():
    found = describe_agents({"g": "gt-ismcts", "r": "random"}, {"search": {"num_simulations": 200, "rollouts": 4,
                            "max_rollout_steps": 10}}, perfect=False)
    assert found["g"].startswith("ISMCTS on the true game, 200 simulations, 4 rollouts per leaf, each rollout cut off "
                                 "after 10 moves;")
    assert found["r"] == "uniformly random legal moves"


def test_the_html_page_shows_the_comparisons_and_what_was_run(tmp_path):
    from cwm.agents import Settings
    from cwm.arena import tournament
    from cwm.arena.plan import TournamentPlan
    from cwm.arena.view import page
    from planners.config import SearchConfig

    plan = TournamentPlan(matches=3, settings=Settings(search=SearchConfig(num_simulations=7, rollouts=2)))
    tournament("tic_tac_toe", ["random", "gt-mcts"], plan, out_dir=tmp_path, executor="inline", progress=False)
    html = page(tmp_path)
    (row,) = json.loads((tmp_path / "results.json").read_text())["comparisons"]
    assert "<h2>Paired comparisons</h2>" in html and f"<td>{row['matches']} ({row['pairs']})</td>" in html
    assert row["pairs"] == 3 and row["verdict"].replace("'", "&#x27;") in html
    assert "<td>gt-mcts</td><td>MCTS on the true game, 7 simulations, 2 rollouts per leaf</td>" in html
