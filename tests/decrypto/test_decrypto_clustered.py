"""Intervals clustered by keyword set, on simulated runs with a known truth: seeds that replay the same
keyword sets are correlated, so the naive interval (episodes as independent) undercovers; the clustered one
holds its 95%, and costs almost nothing when the seeds are in fact independent."""

from __future__ import annotations

import numpy as np
import pytest

from cwm.decrypto import Episode, summarize
from cwm.decrypto.clustered import cluster_mean, cluster_rate
from cwm.decrypto.types import Turn
from cwm.stats import mean_interval, wilson

SETS, SEEDS, REPS = 32, 3, 1000  # a run's shape: 32 keyword sets x 3 seeds


def simulate_rates(set_rates, truth, seed):
    """Coverage and mean width of the clustered and the naive (Wilson on every episode) intervals."""
    rng = np.random.default_rng(seed)
    covered, widths = np.zeros(2), np.zeros(2)
    for _ in range(REPS):
        q = set_rates(rng)
        wins = rng.random((SETS, SEEDS)) < q[:, None]
        clustered = cluster_rate((s, bool(wins[s, j])) for s in range(SETS) for j in range(SEEDS))
        naive = wilson(int(wins.sum()), wins.size)
        for i, (low, high) in enumerate([(clustered["low"], clustered["high"]), naive]):
            covered[i] += low <= truth <= high
            widths[i] += high - low
    return covered / REPS, widths / REPS


CORRELATED = [  # name, each keyword set's success rate, the true rate
    ("hard-and-easy-sets", lambda rng: np.where(rng.random(SETS) < 0.3, 0.9, 0.1), 0.34),
    ("deterministic-team", lambda rng: (rng.random(SETS) < 0.3).astype(float), 0.3),
    ("rare-event", lambda rng: np.where(rng.random(SETS) < 0.1, 0.5, 0.0), 0.05),
]


@pytest.mark.parametrize("name,set_rates,truth", CORRELATED, ids=[c[0] for c in CORRELATED])
def test_the_naive_interval_undercovers_replayed_sets_and_the_clustered_one_does_not(name, set_rates, truth):
    (clustered, naive), _ = simulate_rates(set_rates, truth, seed=11)
    assert naive < 0.87, f"the naive interval covered {naive:.3f}: the simulation is not correlated enough"
    assert clustered >= 0.93


def test_independent_seeds_lose_little_width():
    (clustered, naive), (width, naive_width) = simulate_rates(lambda rng: np.full(SETS, 0.3), 0.3, seed=12)
    assert clustered >= 0.93 and naive >= 0.93
    assert width <= 1.1 * naive_width


def test_the_clustered_mean_covers_where_the_naive_one_does_not():
    rng = np.random.default_rng(13)
    covered = np.zeros(2)
    for _ in range(REPS):
        values = rng.normal(5.0, 1.5, SETS)[:, None] + rng.normal(0.0, 0.5, (SETS, SEEDS))  # set effect + noise
        clustered = cluster_mean((s, float(values[s, j])) for s in range(SETS) for j in range(SEEDS))
        _, low, high = mean_interval(list(values.ravel()))
        covered += [clustered["low"] <= 5.0 <= clustered["high"], low <= 5.0 <= high]
    assert covered[1] / REPS < 0.85 and covered[0] / REPS >= 0.93


def test_one_keyword_set_is_one_observation():
    repeated = cluster_rate(("set", True) for _ in range(96))
    assert (repeated["clusters"], repeated["n"], repeated["n_effective"]) == (1, 96, 1.0)
    assert repeated["low"] < 0.3  # one set won 96 times is one win, not 96
    one = cluster_mean(("set", v) for v in (3.0, 4.0, 5.0))
    assert one["mean"] == 4.0 and one["low"] is None and one["high"] is None and one["clusters"] == 1
    assert cluster_rate([])["rate"] is None and cluster_mean([])["mean"] is None


def test_summaries_count_keyword_sets_not_episodes():
    def episode(seed, game, won):
        turns = tuple(Turn(n, (1, 2, 3), ("a", "b", "c"), (1, 2, 3), (3, 2, 1)) for n in range(1, 9 if won else 3))
        words = ("lion", "piano", "hammer", f"apple{game}")
        return Episode(f"p/s{seed}/e{game}", game, seed, {"alice": "a", "bob": "b", "eve": "e"}, words, turns,
                       "survived" if won else "miscommunicated")

    episodes = [episode(s, g, g % 2 == 0) for s in range(3) for g in range(8)]
    summary = summarize(episodes)
    win = summary["alice_bob_win"]
    assert (win["n"], win["clusters"], win["rate"]) == (24, 8, 0.5)
    assert win["n_effective"] == pytest.approx(8.0)  # every seed replays its set's outcome
    assert summary["turns"]["clusters"] == 8 and summary["turns"]["mean"] == 5.0
