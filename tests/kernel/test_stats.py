"""The paired comparison of cwm.stats (the Clopper-Pearson method for a bounded mean), checked on simulated
pairs whose true mean is known: the interval's coverage, also at small n, the power at the stated minimum
detectable difference, verdicts that never flip the wrong way as the evidence grows, and TOST refusing parity
outside its margin. A win/draw/loss pair value is the first agent's edge averaged over two matches, so it lies
in [-0.5, 0.5] (bound 0.5) in steps of 0.25."""

from __future__ import annotations

import numpy as np
import pytest

from cwm.stats import minimum_detectable, paired, pairs_needed

REPS = 2000
SUPPORT = np.array([-0.5, -0.25, 0.0, 0.25, 0.5])
LAW = np.array([0.15, 0.15, 0.3, 0.2, 0.2])  # mean 0.05
TRUE_MEAN = float(SUPPORT @ LAW)
LEVEL = np.array([0.15, 0.15, 0.4, 0.15, 0.15])  # mean 0: equal agents


def _draw(rng: np.random.Generator, n: int, law: np.ndarray = LAW) -> list[float]:
    return [float(v) for v in rng.choice(SUPPORT, size=n, p=law)]


def _sd(law: np.ndarray) -> float:
    return float(np.sqrt(law @ (SUPPORT - SUPPORT @ law) ** 2))


@pytest.mark.parametrize("n", [3, 8, 15, 40, 200])
def test_the_interval_covers_the_true_mean_at_least_95_percent_of_the_time(n):
    rng = np.random.default_rng(n)
    hits = sum(c.lo <= TRUE_MEAN <= c.hi for c in (paired(_draw(rng, n), bound=0.5) for _ in range(REPS)))
    assert hits / REPS >= 0.94  # binomial sd at 2000 draws is 0.005; the method may be conservative


@pytest.mark.parametrize("n,truth", [(6, 0.3), (12, 0.3), (12, -0.1), (40, 0.2)])
def test_the_interval_covers_a_mean_of_pairs_that_are_all_extreme(n, truth):
    # the worst case of the method: every pair a win or a loss, as between agents that never draw
    rng = np.random.default_rng(int(100 * n + 10 * truth))
    won = 0.5 + truth
    hits = 0
    for _ in range(REPS):
        c = paired(list(np.where(rng.random(n) < won, 0.5, -0.5)), bound=0.5)
        hits += c.lo <= truth <= c.hi
    assert hits / REPS >= 0.94


def _law_at_its_mde(n: int) -> np.ndarray:
    """A law (equal agents plus a share of won pairs) whose mean is its own stated MDE at n pairs."""
    low, high = 0.0, 1.0
    for _ in range(40):
        w = (low + high) / 2
        law = (1 - w) * LEVEL + w * np.eye(5)[4]
        low, high = (w, high) if SUPPORT @ law < minimum_detectable(_sd(law), n, bound=0.5) else (low, w)
    return (1 - low) * LEVEL + low * np.eye(5)[4]


@pytest.mark.parametrize("n", [30, 100])
def test_a_true_difference_of_the_stated_mde_is_detected_about_80_percent_of_the_time(n):
    rng = np.random.default_rng(1)
    law = _law_at_its_mde(n)
    found = [paired(_draw(rng, n, law), bound=0.5).significant for _ in range(REPS)]
    assert 0.74 <= np.mean(found) <= 0.86
    nothing = [paired(_draw(rng, n, LEVEL), bound=0.5).significant for _ in range(REPS)]
    assert np.mean(nothing) <= 0.05  # the test's level is at most its alpha


def test_the_pairs_a_difference_needs_detect_it_at_the_stated_power():
    rng = np.random.default_rng(3)
    law = (1 - 0.3) * LEVEL + 0.3 * np.eye(5)[4]
    needed = pairs_needed(_sd(law), float(SUPPORT @ law), bound=0.5)
    assert needed is not None
    hits = [paired(_draw(rng, needed, law), bound=0.5).significant for _ in range(REPS)]
    assert 0.72 <= np.mean(hits) <= 0.88
    fewer = [paired(_draw(rng, needed // 2, law), bound=0.5).significant for _ in range(REPS)]
    assert np.mean(fewer) < 0.6


def test_the_mde_shrinks_as_the_pairs_grow_and_none_is_given_when_nothing_could_be_shown():
    assert minimum_detectable(0.3, 400, bound=0.5) < minimum_detectable(0.3, 100, bound=0.5)
    assert minimum_detectable(0.0, 5, bound=0.5) is None  # 5 won pairs: p = 0.0625
    assert paired([0.5] * 5, bound=0.5).mde is None


def test_adding_stronger_evidence_never_removes_a_difference_or_a_parity():
    rng = np.random.default_rng(7)
    for _ in range(300):
        law = rng.dirichlet(np.ones(5))
        values = _draw(rng, int(rng.integers(1, 60)), law)
        c = paired(values, bound=0.5, margin=0.1)
        ahead = c.significant and c.mean > 0
        i = int(rng.integers(len(values)))
        raised = values[:i] + [min(0.5, values[i] + 0.25)] + values[i + 1:]
        if ahead:
            assert paired(raised, bound=0.5).significant
            assert paired(values + [0.5], bound=0.5).significant
        if c.equivalent:
            assert paired(values + [0.0], bound=0.5, margin=0.1).equivalent


def test_the_reviewers_cases_order_the_evidence_the_right_way():
    # pairs all won are at least as strong as any sample short of that, and draws as level as any
    assert paired([0.5] * 5, bound=0.5).p_value <= paired([0.5] * 4 + [0.25], bound=0.5).p_value
    assert not paired([0.5, 0.5, 0.25], bound=0.5).significant
    assert paired([0.5] * 6, bound=0.5).p_value == 2 * 0.5**6  # only extreme values: the exact sign test
    level = paired([0.0] * 20 + [0.25], bound=0.5, margin=0.05)
    drawn = paired([0.0] * 21, bound=0.5, margin=0.05)
    assert not level.equivalent and not drawn.equivalent
    assert max(-drawn.lo, drawn.hi) <= max(-level.lo, level.hi)  # drawn pairs are nearer parity


@pytest.mark.parametrize("margin", [0.05, 0.1, 0.15, 0.2, 0.3])
def test_thirty_drawn_pairs_are_level_only_when_the_tost_interval_is_inside_the_margin(margin):
    drawn = paired([0.0] * 30, bound=0.5, margin=margin)
    inner = paired([0.0] * 30, bound=0.5, alpha=0.1)  # the 1 - 2 alpha interval of TOST
    assert inner.lo < 0 < inner.hi  # no spread is not certainty
    assert drawn.equivalent == (-margin < inner.lo and inner.hi < margin)
    if margin == 0.05:
        assert not drawn.equivalent


@pytest.mark.parametrize("truth", [0.06, 0.05])
def test_tost_refuses_parity_when_the_truth_is_at_or_outside_the_margin(truth):
    rng = np.random.default_rng(5)
    law = (1 - 2 * truth) * LEVEL + 2 * truth * np.eye(5)[4]  # mean = truth
    claims = [paired(_draw(rng, 1500, law), bound=0.5, margin=0.05).equivalent for _ in range(500)]
    assert np.mean(claims) <= 0.06  # at most alpha, plus sampling slack


def test_tost_shows_parity_of_equal_agents_given_enough_pairs_and_not_with_few():
    rng = np.random.default_rng(6)
    many = [paired(_draw(rng, 1500, LEVEL), bound=0.5, margin=0.05).equivalent for _ in range(300)]
    few = [paired(_draw(rng, 20, LEVEL), bound=0.5, margin=0.05).equivalent for _ in range(300)]
    assert np.mean(many) > 0.9
    assert not any(few)  # an interval containing zero is not parity


def test_bad_input_is_refused():
    with pytest.raises(ValueError, match="finite"):
        paired([0.0, float("nan")], bound=0.5)
    with pytest.raises(ValueError, match="outside"):
        paired([0.0, 0.75], bound=0.5)
    with pytest.raises(ValueError, match="margin"):
        paired([0.0, 0.5], bound=0.5, margin=0.0)
    with pytest.raises(ValueError, match="bound"):
        paired([0.0], bound=0.0)
    with pytest.raises(ValueError, match="positive"):
        pairs_needed(0.3, 0.0, bound=0.5)
