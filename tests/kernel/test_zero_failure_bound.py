"""What a perfect score bounds (``cwm.stats.zero_failure_bound``), tested on simulated checks with a known
error rate: a model whose error rate is at the bound scores perfectly in at most 5% of runs of N checks."""

from __future__ import annotations

import numpy as np
import pytest

from cwm.stats import perfect_score_note, zero_failure_bound


@pytest.mark.parametrize("n", [10, 300, 10_000])
def test_a_model_at_the_bound_rarely_scores_perfectly(n):
    rng = np.random.default_rng(n)
    bound = zero_failure_bound(n)
    perfect = (rng.binomial(n, bound, size=20_000) == 0).mean()
    assert perfect <= 0.05 + 0.005  # 0.05 at most, up to simulation noise
    # and the bound is not loose by much: a rate of half of it scores perfectly often
    assert (rng.binomial(n, bound / 2, size=20_000) == 0).mean() > 0.15


def test_more_checks_bound_more_tightly_and_none_bound_nothing():
    assert zero_failure_bound(0) == 1.0 and zero_failure_bound(1) == 1.0
    assert zero_failure_bound(10_000) < zero_failure_bound(1_000) < zero_failure_bound(100)
    assert zero_failure_bound(300, confidence=0.99) > zero_failure_bound(300)
    with pytest.raises(ValueError, match="confidence"):
        zero_failure_bound(10, confidence=1.0)


def test_the_note_appears_beside_a_perfect_score_only():
    assert perfect_score_note(4213, 4213) == " (0 of 4,213 wrong: error rate < 0.00071 at 95%)"
    assert perfect_score_note(4212, 4213) == "" and perfect_score_note(0, 0) == ""


def test_over_clustered_checks_only_the_per_game_bound_holds():
    # 65 games of 150 transitions each; a model wrong in some games at every transition of them (the error
    # recurs through the game that reaches it). Its transition error rate is the rate of such games.
    games, per_game, rng = 65, 150, np.random.default_rng(7)
    rate = zero_failure_bound(games) / 2  # within the per-game bound, far above the per-transition one
    assert rate > 10 * zero_failure_bound(games * per_game)
    perfect = (rng.binomial(games, rate, size=20_000) == 0).mean()
    assert perfect > 0.15  # the per-transition bound, claimed at 95%, is wrong in many of these runs
    at_bound = (rng.binomial(games, zero_failure_bound(games), size=20_000) == 0).mean()
    assert at_bound <= 0.05 + 0.005  # the per-game bound keeps its confidence


def test_the_note_gives_the_per_game_bound_where_the_games_are_counted():
    note = perfect_score_note(10_143, 10_143, games=65)
    assert note == (" (0 of 10,143 wrong: error rate < 0.0003 per check if checks fail independently; "
                    "0 of 65 games wrong: < 0.046 per game; at 95%)")
    assert perfect_score_note(10_143, 10_143, games=0) == perfect_score_note(10_143, 10_143)
