"""The Thompson sampler alone: choice frequencies against the numerical probability and against each other."""

from __future__ import annotations

import math

import numpy as np
import pytest

from cwm.synthesis import thompson

N = 20_000


@pytest.mark.parametrize("h", [-0.1, 1.5])
def test_rejects_rates_outside_unit_interval(h: float) -> None:
    with pytest.raises(ValueError, match="pass rate"):
        thompson.beta_params(h)


def test_win_probability_of_equal_beliefs_is_one_half() -> None:
    assert thompson.win_probability((3.0, 4.0), (3.0, 4.0)) == pytest.approx(0.5, abs=1e-4)


def _frequency(rates: list[float], seed: int, **kw: object) -> np.ndarray:
    rng = np.random.default_rng(seed)
    counts = np.zeros(len(rates))
    for _ in range(N):
        counts[thompson.choose(rates, rng, **kw)] += 1  # type: ignore[arg-type]
    return counts / N


@pytest.mark.parametrize("high,low", [(0.8, 0.4), (0.6, 0.5), (0.99, 0.2)])
def test_higher_rate_chosen_in_the_expected_proportion(high: float, low: float) -> None:
    p = thompson.win_probability(thompson.beta_params(high), thompson.beta_params(low))
    freq = _frequency([low, high], seed=0)[1]
    assert p > 0.5
    assert abs(freq - p) < 4 * math.sqrt(p * (1 - p) / N), (freq, p)


def test_refinement_count_shifts_choices_away_from_a_tried_node() -> None:
    plain = _frequency([0.7, 0.7], seed=1, refinements=[10, 0], count_refinements=False)[0]
    counted = _frequency([0.7, 0.7], seed=1, refinements=[10, 0], count_refinements=True)[0]
    p = thompson.win_probability(thompson.beta_params(0.7, refinements=10, count_refinements=True),
                                 thompson.beta_params(0.7))
    assert abs(plain - 0.5) < 4 * math.sqrt(0.25 / N)
    assert abs(counted - p) < 4 * math.sqrt(p * (1 - p) / N) and counted < 0.2


def test_without_concentration_every_node_is_chosen_equally_often() -> None:
    freq = _frequency([0.1, 0.5, 0.95], seed=2, c=0.0)
    assert np.all(np.abs(freq - 1 / 3) < 4 * math.sqrt(2 / 9 / N)), freq


def test_a_larger_concentration_favours_the_higher_rate_more() -> None:
    shares = [_frequency([0.4, 0.6], seed=3, c=c)[1] for c in (1.0, 5.0, 25.0)]
    assert 0.5 < shares[0] < shares[1] < shares[2], shares


def test_refinement_counts_are_ignored_in_the_papers_form() -> None:
    counted = _frequency([0.7, 0.7], seed=4, refinements=[10, 0], count_refinements=False)
    uncounted = _frequency([0.7, 0.7], seed=4)
    assert np.array_equal(counted, uncounted)


def test_same_seed_same_choices() -> None:
    a = [thompson.choose([0.2, 0.5, 0.9], np.random.default_rng(7)) for _ in range(3)]
    b = [thompson.choose([0.2, 0.5, 0.9], np.random.default_rng(7)) for _ in range(3)]
    assert a == b


def test_needs_a_node() -> None:
    with pytest.raises(ValueError, match="at least one node"):
        thompson.choose([], np.random.default_rng(0))
