"""The paired comparison of cwm.stats, checked on simulated pairs whose true mean is known: the interval's
coverage, the power at the stated minimum detectable difference, and TOST refusing parity outside its margin."""

from __future__ import annotations

import numpy as np
import pytest

from cwm.stats import minimum_detectable, paired, pairs_needed

REPS = 2000
# Pair values of a win/draw/loss game (half the score difference over two seats) and a law with mean 0.1
SUPPORT = np.array([-1.0, -0.5, 0.0, 0.5, 1.0])
LAW = np.array([0.15, 0.15, 0.3, 0.2, 0.2])
TRUE_MEAN = float(SUPPORT @ LAW)


def _samples(rng: np.random.Generator, n: int) -> list[list[float]]:
    return [list(rng.choice(SUPPORT, size=n, p=LAW)) for _ in range(REPS)]


@pytest.mark.parametrize("n", [15, 40, 200])
def test_the_paired_interval_covers_the_true_mean_95_percent_of_the_time(n):
    rng = np.random.default_rng(n)
    hits = sum(c.lo <= TRUE_MEAN <= c.hi for c in map(paired, _samples(rng, n)))
    assert 0.93 <= hits / REPS <= 0.97  # binomial sd at 2000 draws is 0.005


def test_a_true_difference_of_the_stated_mde_is_detected_about_80_percent_of_the_time():
    rng = np.random.default_rng(1)
    n, sd = 30, 0.6
    truth = minimum_detectable(sd, n)
    found = [paired(list(rng.normal(truth, sd, size=n))).significant for _ in range(REPS)]
    assert 0.76 <= np.mean(found) <= 0.84
    nothing = [paired(list(rng.normal(0.0, sd, size=n))).significant for _ in range(REPS)]
    assert 0.035 <= np.mean(nothing) <= 0.065  # the test's level is its alpha


def test_the_observed_mde_shrinks_as_one_over_root_n():
    rng = np.random.default_rng(2)
    small = np.mean([paired(s).mde for s in _samples(rng, 50)])
    large = np.mean([paired(s).mde for s in _samples(rng, 200)])
    assert large < small
    assert abs(small / large - 2.0) < 0.1  # four times the pairs, half the detectable difference


def test_the_pairs_a_difference_needs_detect_it_at_the_stated_power():
    rng = np.random.default_rng(3)
    needed = pairs_needed(0.5, 0.15)
    hits = [paired(list(rng.normal(0.15, 0.5, size=needed))).significant for _ in range(REPS)]
    assert 0.77 <= np.mean(hits) <= 0.84
    fewer = [paired(list(rng.normal(0.15, 0.5, size=needed // 2))).significant for _ in range(REPS)]
    assert np.mean(fewer) < 0.6


def test_a_small_sample_that_resolves_nothing_says_how_many_pairs_would():
    rng = np.random.default_rng(4)
    c = paired(list(rng.normal(0.85, 4.0, size=10)))
    assert not c.significant
    assert c.lo < 0 < c.hi and c.mde is not None and c.mde > abs(c.mean)
    assert c.needed_pairs is not None and c.needed_pairs > 10
    again = [paired(list(rng.normal(c.mean, c.sd, size=c.needed_pairs))).significant for _ in range(500)]
    assert np.mean(again) > 0.7


@pytest.mark.parametrize("truth", [0.06, 0.05])
def test_tost_refuses_parity_when_the_truth_is_at_or_outside_the_margin(truth):
    rng = np.random.default_rng(5)
    claims = [paired(list(rng.normal(truth, 0.3, size=400)), margin=0.05).equivalent for _ in range(REPS)]
    assert np.mean(claims) <= 0.06  # at most alpha, plus sampling slack


def test_tost_shows_parity_of_equal_agents_given_enough_pairs_and_not_with_few():
    rng = np.random.default_rng(6)
    many = [paired(list(rng.normal(0.0, 0.3, size=400)), margin=0.05).equivalent for _ in range(500)]
    few = [paired(list(rng.normal(0.0, 0.3, size=20)), margin=0.05).equivalent for _ in range(500)]
    assert np.mean(many) > 0.9
    assert np.mean(few) < 0.05  # an interval containing zero is not parity


def test_pairs_without_spread_use_the_sign_test_and_claim_no_mde_or_parity():
    c = paired([0.5] * 8, margin=0.1)
    assert c.lo == c.hi == 0.5 and c.p_value == 2 * 0.5**8 and c.significant
    assert c.mde is None and c.equivalent is None
    assert not paired([0.5] * 5).significant  # 2 * 0.5**5 = 0.0625
    drawn = paired([0.0] * 30, margin=0.1)
    assert not drawn.significant and drawn.equivalent is None
    one = paired([1.0])
    assert one.pairs == 1 and not one.significant and one.mde is None


def test_bad_input_is_refused():
    with pytest.raises(ValueError, match="finite"):
        paired([0.0, float("nan")])
    with pytest.raises(ValueError, match="margin"):
        paired([0.0, 1.0], margin=0.0)
    with pytest.raises(ValueError, match="two pairs"):
        minimum_detectable(1.0, 1)
