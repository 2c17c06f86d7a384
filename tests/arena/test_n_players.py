"""The arena with more than two players: tables of N agents in their seat rotations (or permutations) on one
deal, transcripts, replay and the viewer with N seats, reports and paired comparisons by table, and ratings
from N-player results by pairwise decomposition."""

from __future__ import annotations

import collections
import json
import math
from pathlib import Path

import numpy as np
import pytest

from cwm.agents import Settings
from cwm.arena import ArenaError, plan_jobs, tournament
from cwm.arena import replay as arena_replay
from cwm.arena import view as arena_view
from cwm.arena.compare import balanced, comparisons, edge_units
from cwm.arena.plan import TournamentPlan, seat_orders
from cwm.arena.ratings import ratings, resampling_units
from cwm.arena.report import summarize
from cwm.arena.types import MatchResult
from cwm.stats import paired
from planners.config import SearchConfig

PIG3 = "pig(players=3,winscore=12)"
PIG3_MODEL = Path(__file__).resolve().parents[1] / "data" / "reference" / "pig3_model.py"  # hand-written
FAST = Settings(search=SearchConfig(num_simulations=20, rollouts=1))


def test_rotations_seat_every_agent_in_every_seat_once_and_permutations_balance_who_follows_whom():
    rotations = seat_orders(("a", "b", "c", "d"))
    assert len(rotations) == 4
    for seat in range(4):
        assert sorted(o[seat] for o in rotations) == ["a", "b", "c", "d"]
    everything = seat_orders(("a", "b", "c"), "permutations")
    assert len(everything) == 6 and set(seat_orders(("a", "b", "c"))) <= set(everything)
    follows = collections.Counter((o[i], o[(i + 1) % 3]) for o in everything for i in range(3))
    assert set(follows.values()) == {3}  # each ordered pair of agents is neighbours in turn equally often
    # two players: both ways are the two seat orders, in the same order
    assert seat_orders(("a", "b")) == seat_orders(("a", "b"), "permutations") == [("a", "b"), ("b", "a")]
    assert seat_orders(("a", "a", "b")) == [("a", "a", "b"), ("a", "b", "a"), ("b", "a", "a")]
    with pytest.raises(ArenaError, match="seat orders must be one of"):
        seat_orders(("a", "b"), "shuffled")


def test_a_three_player_plan_seats_tables_of_three_in_rotations_on_one_deal():
    jobs = plan_jobs(PIG3, ["random", "gt-mcts", "gt-mcts-py", "gt-ismcts-py"], TournamentPlan(matches=2))
    tables = {frozenset(j.seats) for j in jobs}
    assert len(tables) == 4 and all(len(t) == 3 for t in tables)  # every set of three of the four agents
    assert len(jobs) == 4 * 3 * 2
    by_deal = collections.defaultdict(list)
    for j in jobs:
        by_deal[j.deal].append(j)
    assert len(by_deal) == 4 * 2
    for group in by_deal.values():  # one table and index a deal, in its three rotations, played side by side
        assert len({frozenset(j.seats) for j in group}) == 1 and len({j.index for j in group}) == 1
        assert [sorted(j.seats[s] for j in group) for s in range(3)] == [sorted(group[0].seats)] * 3
    first = list(jobs)[:3]
    assert first[0].deal == first[1].deal == first[2].deal and len({j.key for j in first}) == 3
    assert [jobs[i] for i in range(len(jobs))] == list(jobs)  # by index as in order


def test_permutations_hold_the_rotations_matches_and_two_player_plans_do_not_change():
    rotations = plan_jobs(PIG3, ["random", "gt-mcts", "gt-mcts-py"], TournamentPlan(matches=2))
    everything = plan_jobs(PIG3, ["random", "gt-mcts", "gt-mcts-py"], TournamentPlan(matches=2, seat_orders="permutations"))
    assert len(everything) == 2 * len(rotations)
    assert {j.key for j in rotations} < {j.key for j in everything}
    done = {j.key: MatchResult(j.key, j.seats, j.seed, (0.0,) * 3, fingerprints=j.fingerprints, index=j.index)
            for j in rotations}
    assert everything.count_done(done) == len(rotations)  # switching to permutations replays nothing played
    two = [plan_jobs("tic_tac_toe", ["random", "gt-mcts", "gt-ismcts"], TournamentPlan(matches=2, seat_orders=how))
           for how in ("rotations", "permutations")]
    assert list(two[0]) == list(two[1])


def test_a_table_of_the_wrong_size_or_too_few_agents_is_refused_in_one_line():
    with pytest.raises(ArenaError, match="3-player game needs at least three agents .*got 2"):
        plan_jobs(PIG3, ["random", "gt-mcts"], TournamentPlan(matches=1))
    with pytest.raises(ArenaError, match=r"pairing \['random', 'gt-mcts'\] seats 2 agent\(s\); .* 3-player game"):
        plan_jobs(PIG3, ["random", "gt-mcts"], TournamentPlan(matches=1, pairings=[("random", "gt-mcts")]))
    with pytest.raises(ArenaError, match="seat orders must be one of"):
        plan_jobs(PIG3, ["random", "gt-mcts", "gt-mcts-py"], TournamentPlan(matches=1, seat_orders="random"))
    self_play = plan_jobs(PIG3, ["random", "gt-mcts"], TournamentPlan(matches=1, pairings=[("gt-mcts", "random", "random")]))
    assert sorted(j.seats for j in self_play) == sorted(seat_orders(("gt-mcts", "random", "random")))


def test_a_tournament_too_small_for_its_tables_names_an_agent_that_cannot_play_first_and_writes_nothing(tmp_path):
    kuhn3 = "kuhn_poker(players=3)"  # the ground truth of the registered kuhn_poker_3p, so named by that name
    with pytest.raises(ArenaError, match=r"agent gt-mcts cannot play kuhn_poker_3p: gt-mcts needs perfect"):
        tournament(kuhn3, ["random", "gt-mcts"], TournamentPlan(matches=1, settings=FAST), out_dir=tmp_path / "a",
                   executor="inline", progress=False)
    with pytest.raises(ArenaError, match="3-player game needs at least three agents"):
        tournament(kuhn3, ["random", "gt-ismcts"], TournamentPlan(matches=1, settings=FAST), out_dir=tmp_path / "b",
                   executor="inline", progress=False)
    assert not (tmp_path / "a").exists() and not (tmp_path / "b").exists()


@pytest.fixture(scope="module")
def pig_folder(tmp_path_factory):
    out = tmp_path_factory.mktemp("pig3")
    results = tournament(PIG3, ["random", "gt-mcts-py", "m2=gt-mcts"], TournamentPlan(matches=2, settings=FAST, seed=4,
                                                                                      move_time_limit=None),
                         out_dir=out, executor="inline", progress=False)
    return out, results


def test_a_three_player_tournament_records_three_seats_and_resumes_without_replaying(pig_folder):
    out, results = pig_folder
    assert len(results) == 6
    rows = [json.loads(line) for line in (out / "matches.jsonl").read_text().splitlines()]
    assert len(rows) == 6 and all(len(r["seats"]) == len(r["returns"]) == 3 for r in rows)
    assert all(math.isclose(sum(r["returns"]), 0.0, abs_tol=1e-9) for r in rows)  # Pig is zero-sum
    again = tournament(PIG3, ["random", "gt-mcts-py", "m2=gt-mcts"], TournamentPlan(matches=2, settings=FAST, seed=4,
                                                                                    move_time_limit=None),
                       out_dir=out, executor="inline", progress=False)
    assert [r.to_json() for r in again] == [r.to_json() for r in results]
    assert len((out / "matches.jsonl").read_text().splitlines()) == 6


def test_transcripts_replay_and_the_viewer_show_every_seat(pig_folder):
    out, results = pig_folder
    r = results[0]
    transcript = arena_replay.load(out, r)
    assert [s["label"] for s in transcript["seats"]] == list(r.seats) and len(transcript["returns"]) == 3
    movers = {s["player"] for s in transcript["steps"] if s["player"] >= 0}
    text = arena_replay.render(transcript)
    assert "seats: 0 = " + r.seats[0] + ", 1 = " + r.seats[1] + ", 2 = " + r.seats[2] in text
    for seat in movers:
        assert f"seat {seat} ({r.seats[seat]})" in text
    page = arena_view.page(out)
    assert f"{r.seats[0]} vs {r.seats[1]} vs {r.seats[2]}" in page
    shown = json.loads(page.split('<script type="application/json" id="matches">')[1].split("</script>")[0])
    assert all(len(t["seats"]) == 3 and len(t["returns"]) == 3 for t in shown)


def test_reports_pool_a_tables_rotations_and_compare_every_two_agents_at_it(pig_folder):
    out, results = pig_folder
    saved = json.loads((out / "results.json").read_text())
    pooled = [r for r in saved["rows"] if r["seat"] == "all"]
    assert sorted((r["agent"], r["opponent"]) for r in pooled) == [
        ("gt-mcts-py", "m2+random"), ("m2", "gt-mcts-py+random"), ("random", "gt-mcts-py+m2")]
    assert all(r["matches"] == 6 for r in pooled)
    assert sum(r["wins"] for r in pooled) == 6  # Pig has one winner a match
    compared = saved["comparisons"]
    assert len(compared) == 3 and all(c["players"] == 3 and c["matches"] == 6 and c["pairs"] == 2 for c in compared)
    assert "rotations of a table on one deal" in (out / "results.md").read_text()
    assert [r["agent"] for r in saved["leaderboard"]] and len(saved["leaderboard"]) == 3


def test_a_model_file_of_a_three_player_game_passes_the_sandboxed_checks(capsys):
    from cwm.cli import main

    assert main(["sandbox", "check", str(PIG3_MODEL), "--game", PIG3, "--n", "20", "--isolation", "process",
                 "--per-call-s", "0.3", "--wall-s", "60"]) == 0
    out = capsys.readouterr().out
    assert "checks passed (100.0%)" in out and "termination 20/20" in out


def test_a_contained_cwm_agent_plays_a_three_player_tournament_from_every_seat(tmp_path):
    # the model file is planned on as an LLM's would be: in a hardened planning worker, per match
    results = tournament(PIG3, [f"mine=cwm:{PIG3_MODEL}", "random", "gt-mcts-py"],
                         TournamentPlan(matches=2, settings=FAST, seed=2), out_dir=tmp_path, executor="inline",
                         progress=False)
    assert len(results) == 6 and all(r.forfeit_seat is None for r in results)
    planned = {r.seats.index("mine") for r in results if r.stats[r.seats.index("mine")].get("searches", 0) > 0}
    assert planned == {0, 1, 2}


# -- the statistics on simulated three-player results with a known truth ------------------------------


def _table_results(n: int, win: dict[str, float], seed: int, *, drop: int | None = None) -> list[MatchResult]:
    """``n`` deals of the table (a, b, c) in its three rotations; each match is won by one agent, drawn with
    the probabilities ``win`` (the seat does not matter), the winner +2, the others -1. ``drop``: leave the
    last rotation of that deal out."""
    rng = np.random.default_rng(seed)
    names = list(win)
    found = []
    for i in range(n):
        for k, order in enumerate(seat_orders(tuple(names))):
            if i == drop and k == 2:
                continue
            winner = names[rng.choice(3, p=list(win.values()))]
            returns = tuple(2.0 if s == winner else -1.0 for s in order)
            found.append(MatchResult(f"{'|'.join(order)}#{i}", order, i, returns, index=i, deal=1000 + i))
    return found


def test_a_tables_edge_is_the_pairwise_score_over_its_rotations_and_an_incomplete_table_is_left_out():
    results = _table_results(40, {"a": 0.6, "b": 0.2, "c": 0.2}, seed=1, drop=5)
    values, unpaired, matches = edge_units(results, "a", "b", outcome="win/draw/loss")
    assert len(values) == 39 and unpaired == 2 and matches == 117
    assert all(-0.5 <= v <= 0.5 for v in values)
    rows = {(r["agent"], r["opponent"]): r for r in comparisons(results, outcome="win/draw/loss", margin=0.05,
                                                                 bound=0.5)}
    ab = rows[("a", "b")]
    # a beats b in a match a wins (0.6) and loses to b where b wins (0.2); c's wins leave them level:
    # a's score against b is 0.6 + 0.2 / 2 = 0.7, an edge of 0.2
    assert ab["lo"] < 0.2 < ab["hi"] and ab["significant"] and ab["mean"] > 0
    bc = rows[("b", "c")]
    assert bc["lo"] < 0 < bc["hi"] and not bc["significant"]  # equally strong: nothing detected


def test_a_table_whose_seat_orders_are_unbalanced_is_no_pair():
    (one, two, three) = _table_results(1, {"a": 1.0, "b": 0.0, "c": 0.0}, seed=0)
    assert balanced([one, two, three]) and not balanced([one, two]) and not balanced([one, one, two])
    other_table = MatchResult("x", ("a", "b", "d"), 0, (0.0, 0.0, 0.0), deal=1000)
    assert not balanced([one, two, other_table])


def _against_copies(n: int, p_win: float, seed: int) -> list[MatchResult]:
    """``n`` deals of the table (x, r, r), the agent ``x`` against two copies of ``r``, in its rotations:
    ``x`` wins with probability ``p_win`` (+2, the others -1), else one of the copies does."""
    rng = np.random.default_rng(seed)
    found = []
    for i in range(n):
        for order in seat_orders(("x", "r", "r")):
            copies = [k for k, s in enumerate(order) if s == "r"]
            winner = order.index("x") if rng.random() < p_win else copies[int(rng.integers(2))]
            returns = tuple(2.0 if k == winner else -1.0 for k in range(3))
            found.append(MatchResult(f"{'|'.join(order)}#{i}", order, i, returns, index=i, deal=2000 + i))
    return found


def test_an_agent_against_copies_of_one_opponent_is_compared_with_each_copys_seat():
    # x wins 60%: against each copy it scores 0.6 + (a loss to the copy that won, a tie with the other):
    # 0.6 + 0.4 * (1/2 * 0 + 1/2 * 1/2) = 0.7, an edge of 0.2
    results = _against_copies(150, 0.6, seed=4)
    assert all(balanced(results[3 * i:3 * i + 3]) for i in range(150))
    rows = comparisons(results, outcome="win/draw/loss", margin=0.05, bound=0.5)
    assert [(r["agent"], r["opponent"]) for r in rows] == [("x", "r")]
    assert rows[0]["pairs"] == 150 and rows[0]["matches"] == 450 and rows[0]["players"] == 3
    assert rows[0]["lo"] < 0.2 < rows[0]["hi"] and rows[0]["significant"]
    even = comparisons(_against_copies(150, 1 / 3, seed=5), outcome="win/draw/loss", margin=0.05, bound=0.5)[0]
    assert even["lo"] < 0 < even["hi"] and not even["significant"]  # a third of the wins: level with each copy


def test_paired_comparisons_detect_a_stronger_agent_at_the_rate_the_method_promises():
    # coverage on simulated tables: the 95% interval of a's edge over b holds the true edge (0.2) in at
    # least ~95% of 200 simulated tournaments (Clopper-Pearson over units is conservative)
    covered = 0
    for seed in range(200):
        values, _, _ = edge_units(_table_results(30, {"a": 0.6, "b": 0.2, "c": 0.2}, seed=seed), "a", "b",
                                  outcome="win/draw/loss")
        c = paired(values, bound=0.5)
        covered += c.lo <= 0.2 <= c.hi
    assert covered >= 186  # 93%: 95% less three binomial standard errors of 200 trials


def test_ratings_from_three_player_results_order_agents_by_strength_and_resample_whole_tables():
    results = _table_results(150, {"strong": 0.6, "middle": 0.3, "weak": 0.1}, seed=2)
    rated = ratings(results, bootstrap=60, seed=0)
    assert [a for a, _ in sorted(rated.items(), key=lambda kv: -kv[1][0])] == ["strong", "middle", "weak"]
    assert rated["strong"][1] > rated["middle"][2]  # intervals apart: the data show the order
    units = resampling_units(results)
    assert len(units) == 150 and all(len(u) == 3 and len({m.deal for m in u}) == 1 for u in units)


def test_summaries_pool_the_rotations_of_a_table_into_one_row_per_seat():
    rows = summarize(_table_results(10, {"a": 0.5, "b": 0.3, "c": 0.2}, seed=3))
    a_rows = [r for r in rows if r["agent"] == "a"]
    assert sorted(r["seat"] for r in a_rows) == ["0", "1", "2", "all"]
    assert {r["opponent"] for r in a_rows} == {"b+c"}
    assert [r["matches"] for r in a_rows if r["seat"] == "all"] == [30]


def _cli(out, *extra):
    from cwm.cli import main

    return main(["arena", PIG3, "--matches", "1", "--sims", "5", "--rollouts", "1", "--out", str(out), "--executor",
                 "inline", "--no-progress", "--yes", *extra])


@pytest.mark.parametrize("orders, played", [("rotations", 3), ("permutations", 6)])
def test_the_arena_command_plays_a_table_of_three_in_the_seat_orders_asked(tmp_path, capsys, orders, played):
    assert _cli(tmp_path / "a", "--agents", "random,gt-mcts-py,gt-mcts", "--seat-orders", orders) == 0
    rows = [json.loads(line) for line in (tmp_path / "a" / "matches.jsonl").read_text().splitlines()]
    assert len(rows) == played and len({tuple(r["seats"]) for r in rows}) == played
    assert len({r["deal"] for r in rows}) == 1


def test_the_arena_commands_self_play_seats_every_table_of_three_with_agents_repeated(tmp_path, capsys):
    assert _cli(tmp_path / "s", "--agents", "random,gt-mcts-py", "--self-play") == 0
    rows = [json.loads(line) for line in (tmp_path / "s" / "matches.jsonl").read_text().splitlines()]
    tables = collections.Counter(tuple(sorted(r["seats"])) for r in rows)
    # every table of three from two agents, repeats allowed, each in its distinct seat orders
    assert dict(tables) == {("gt-mcts-py",) * 3: 1, ("random",) * 3: 1,
                            ("gt-mcts-py", "gt-mcts-py", "random"): 3, ("gt-mcts-py", "random", "random"): 3}
