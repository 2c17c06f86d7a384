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
