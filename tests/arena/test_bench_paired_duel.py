"""benchmarks/bench_rollout_cutoff.py's ``paired_duel`` (shared by bench_native and bench_cwm_ismcts_level):
seat-swapped pairs on one deal, analysed by the arena's paired comparison. The benchmark is loaded from its
file: the benchmarks folder is not a package on the test path."""

from __future__ import annotations

import pytest

from cwm.agents import MCTSAgent, RandomAgent
from planners.config import SearchConfig


@pytest.fixture(scope="module")
def bench(benchmark_module):
    return benchmark_module("bench_rollout_cutoff")


def test_a_search_is_shown_ahead_of_random_play_over_pairs(bench):
    row = bench.paired_duel("tic_tac_toe", lambda i: MCTSAgent(SearchConfig(num_simulations=200), seed=i),
                            lambda i: RandomAgent(seed=i), 10, labels=("mcts", "random"))
    assert (row["agent"], row["opponent"], row["pairs"], row["matches"]) == ("mcts", "random", 10, 20)
    assert row["significant"] and row["mean"] > 0 and row["verdict"].startswith("mcts ahead")
    assert row["mde"] is not None and "±" in bench.shown(row)


def test_the_two_matches_of_a_pair_share_one_deal_with_the_seats_swapped(bench, monkeypatch):
    played = []
    real = bench.play_match

    def spy(game, agents, *, seed):
        played.append((seed, [type(a).__name__ for a in agents]))
        return real(game, agents, seed=seed)

    monkeypatch.setattr(bench, "play_match", spy)
    row = bench.paired_duel("leduc_poker", lambda i: RandomAgent(seed=i), lambda i: MCTSAgent(
        SearchConfig(num_simulations=5), seed=i), 4, labels=("random", "mcts"))
    assert row["pairs"] == 4 and len(played) == 8
    firsts, seconds = played[0::2], played[1::2]
    assert all(a[0] == b[0] for a, b in zip(firsts, seconds))  # one deal per pair
    assert len({a[0] for a in firsts}) == 4  # and another deal for each pair
    assert all(a[1] == b[1][::-1] for a, b in zip(firsts, seconds))  # seats swapped
