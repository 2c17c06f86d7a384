"""Interval estimates and tests shared by every report cwm writes (arena results and comparisons, eval
accuracies)."""

from __future__ import annotations

import dataclasses
import functools
import math
from collections.abc import Sequence
from statistics import NormalDist

Z95 = 1.959963984540054  # the two-sided 95% quantile of the standard normal


def wilson(successes: float, n: float, *, z: float = Z95) -> tuple[float, float]:
    """The Wilson score interval of a binomial proportion (``(0, 1)`` when ``n`` is 0). ``n`` may be an
    effective sample size (a float, as in a design-effect correction)."""
    if n <= 0:
        return 0.0, 1.0
    p = successes / n
    denom = 1 + z * z / n
    centre = (p + z * z / (2 * n)) / denom
    half = z * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n)) / denom
    # at p = 0 or 1 the bound equals p up to rounding; keep p inside its own interval
    return max(0.0, min(p, centre - half)), min(1.0, max(p, centre + half))


def mean_interval(values: Sequence[float], *, z: float = Z95) -> tuple[float, float, float]:
    """Mean and its normal-approximation 95% interval (the interval is the mean itself for n < 2)."""
    n = len(values)
    if n == 0:
        return math.nan, math.nan, math.nan
    mean = sum(values) / n
    if n < 2:
        return mean, mean, mean
    sd = math.sqrt(sum((v - mean) ** 2 for v in values) / (n - 1))
    half = z * sd / math.sqrt(n)
    return mean, mean - half, mean + half


def zero_failure_bound(n: int, *, confidence: float = 0.95) -> float:
    """What a perfect score over ``n`` independent checks bounds: with none of ``n`` failing, the rate of
    errors the checks would catch is below ``ln(1/delta)/n`` at confidence ``1 - delta`` (``delta = 1 -
    confidence``; the "rule of three" at 95%). It is the exact one-sided binomial bound ``1 - delta^(1/n)``
    rounded up to its first-order form, so it holds as stated; ``1.0`` when ``n`` is 0 (nothing was shown).

    The unit is the check, and the bound assumes the checks fail independently. Transitions of one game do
    not: a model's error tends to recur through the game that reaches it, or not to show at all. Over ``n``
    transitions it is a per-transition rate under that assumption; over ``n`` games (none with a wrong
    transition) it is a per-game rate, which needs only the games to be independent (``perfect_score_note``
    prints both where the games are counted).
    """
    if not 0.0 < confidence < 1.0:
        raise ValueError(f"confidence must be in (0, 1) (got {confidence!r})")
    return 1.0 if n <= 0 else min(1.0, math.log(1.0 / (1.0 - confidence)) / n)


def perfect_score_note(passed: int, total: int, *, games: int | None = None, confidence: float = 0.95) -> str:
    """The text printed beside an accuracy of 1.0: ``" (0 of N wrong: error rate < B at 95%)"``; with the
    count of ``games`` the checks came from, the per-game bound too, and the per-check one named as resting
    on independent checks: ``" (0 of N wrong: error rate < B per check if checks fail independently; 0 of G
    games wrong: < C per game; at 95%)"``. Empty for any other score (its interval says more than a bound)
    or for no checks."""
    if total <= 0 or passed != total:
        return ""
    bound = f"0 of {total:,} wrong: error rate < {zero_failure_bound(total, confidence=confidence):.2g}"
    if games is None or games <= 0:
        return f" ({bound} at {confidence:.0%})"
    return (f" ({bound} per check if checks fail independently; 0 of {games:,} games wrong: < "
            f"{zero_failure_bound(games, confidence=confidence):.2g} per game; at {confidence:.0%})")


# ---------------------------------------------------------------------------------------------------
# Paired comparisons: the unit is a pair of matches on one deal with the seats swapped

ALPHA = 0.05  # two-sided significance level of every comparison
POWER = 0.8  # the power at which the minimum detectable difference is stated


@dataclasses.dataclass(frozen=True)
class PairedComparison:
    """A paired comparison of two agents, one value per pair of seat-swapped matches.

    Attributes:
      pairs: how many pairs (twice as many matches).
      mean: the mean pair value (the observed difference).
      lo, hi: its two-sided ``1 - alpha`` bounded-mean Clopper-Pearson interval (``paired``); never a
        single point, also when every pair gave the same value.
      sd: the sample standard deviation of the pair values (0.0 for fewer than two pairs); it enters only
        the minimum detectable difference and the plan, never the verdict.
      p_value: the two-sided exact binomial test's of a zero mean, on the pairs rescaled to ``[0, 1]``.
      significant: ``p_value < alpha``.
      mde: the minimum detectable difference at ``power`` (``None``: too few pairs for any difference to
        be significant).
      needed_pairs: the pairs at which a difference of the observed size would be detected at ``power``
        (``None``: already significant, or nothing observed).
      margin: the equivalence margin given (``None``: no equivalence test).
      equivalent: whether two one-sided tests (TOST) at ``alpha`` show ``|difference| < margin``: the
        ``1 - 2 alpha`` interval lies inside ``(-margin, margin)`` (``None``: no margin).
      bound: pair values lie in ``[-bound, bound]``.
    """

    pairs: int
    mean: float
    lo: float
    hi: float
    sd: float
    p_value: float
    significant: bool
    mde: float | None
    needed_pairs: int | None
    margin: float | None = None
    equivalent: bool | None = None
    bound: float = 0.5

    def to_json(self) -> dict[str, float | int | bool | None]:
        return dataclasses.asdict(self)


def paired(values: Sequence[float], *, bound: float, margin: float | None = None, alpha: float = ALPHA,
           power: float = POWER) -> PairedComparison:
    """The paired analysis of per-pair values that lie in ``[-bound, bound]``, by the **Clopper-Pearson
    method for a bounded mean**: each value is rescaled to ``u = (v + bound) / (2 bound)`` in ``[0, 1]``,
    and their sum ``s`` over ``n`` pairs is treated as a binomial count of ``n`` trials (Clopper & Pearson
    1934, with the beta-quantile form extended to a fractional count). A Bernoulli variable has the largest
    variance of any variable on ``[0, 1]`` with its mean, so the interval is exact when pairs take only the
    two extreme values and conservative otherwise (checked on simulated pairs in tests/kernel/test_stats.py).

    Nothing in the verdict uses the observed spread, so it cannot flip the wrong way as data get stronger:
    raising any pair value, or adding a pair at the top of the range, never removes "ahead"; adding a drawn
    pair (value 0) to a sample shown level keeps it level; and when every pair gave the same value the
    interval still has the width ``n`` pairs allow (30 drawn pairs give about ±0.16 at 90%, so no parity
    within ±0.05). With ``bound`` values only, it is the exact sign test (5 won pairs: p = 0.0625).

    Returns the mean, its ``1 - alpha`` interval, the two-sided exact binomial p-value of a zero mean
    (``u`` at one half), the minimum detectable difference at ``power`` (``minimum_detectable``) and the
    pairs a difference of the observed size needs (``pairs_needed``), and with a ``margin`` Schuirmann's
    (1987) two one-sided tests (TOST): equivalence when the ``1 - 2 alpha`` interval lies inside
    ``(-margin, margin)``.

    Raises:
      ValueError: a value that is not finite or lies outside ``[-bound, bound]``, a bound or margin that is
        not positive.
    """
    n = len(values)
    if not bound > 0 or not math.isfinite(bound):
        raise ValueError(f"paired: the bound of pair values must be a positive number, not {bound}")
    if not all(math.isfinite(v) for v in values):
        raise ValueError("paired: every pair value must be a finite number")
    if any(abs(v) > bound * (1 + 1e-12) for v in values):
        raise ValueError(f"paired: a pair value lies outside [-{bound:g}, {bound:g}]")
    if margin is not None and not margin > 0:
        raise ValueError(f"paired: the equivalence margin must be positive, not {margin}")
    values = [float(v) for v in values]
    mean = sum(values) / n if n else 0.0
    sd = math.sqrt(sum((v - mean) ** 2 for v in values) / (n - 1)) if n > 1 else 0.0
    s = min(float(n), max(0.0, sum((v + bound) / (2 * bound) for v in values)))
    lo, hi = (2 * bound * u - bound for u in _cp_interval(s, n, alpha / 2))
    p = _binomial_p(s, n)
    mde = minimum_detectable(sd, n, bound=bound, alpha=alpha, power=power)
    needed = None if p < alpha or mean == 0.0 else pairs_needed(sd, abs(mean), bound=bound, alpha=alpha, power=power)
    equivalent = None
    if margin is not None:
        low, high = (2 * bound * u - bound for u in _cp_interval(s, n, alpha))
        equivalent = bool(-margin < low and high < margin)
    return PairedComparison(n, mean, lo, hi, sd, p, p < alpha, mde, needed, margin, equivalent, bound)


def minimum_detectable(sd: float, n: int, *, bound: float, alpha: float = ALPHA,
                       power: float = POWER) -> float | None:
    """The smallest true mean difference that ``paired`` detects with probability about ``power`` from ``n``
    pairs of standard deviation ``sd`` in ``[-bound, bound]``: the smallest observed mean the test calls
    significant at ``n``, plus ``z[power] * sd / sqrt(n)`` (the normal approximation of the sample mean
    about it). ``None`` when no result of ``n`` pairs can be significant (``n`` below 6 at 5%)."""
    crit = _critical_share(n, alpha)
    if crit is None:
        return None
    return (2 * crit - 1) * bound + NormalDist().inv_cdf(power) * sd / math.sqrt(n)


def pairs_needed(sd: float, difference: float, *, bound: float, alpha: float = ALPHA,
                 power: float = POWER) -> int | None:
    """The fewest pairs whose minimum detectable difference (``minimum_detectable``) at spread ``sd`` is at
    most ``difference`` (``None`` beyond ten million pairs).

    Raises:
      ValueError: a ``difference`` that is not positive.
    """
    if not difference > 0:
        raise ValueError(f"pairs_needed: the difference must be positive, not {difference}")

    def enough(m: int) -> bool:
        mde = minimum_detectable(sd, m, bound=bound, alpha=alpha, power=power)
        return mde is not None and mde <= difference

    high = 2
    while not enough(high):
        if high > 10**7:
            return None
        high *= 2
    low = high // 2  # not enough (or 1); both terms of the MDE fall as n grows, so bisect
    while high - low > 1:
        mid = (low + high) // 2
        low, high = (low, mid) if enough(mid) else (mid, high)
    return high


def _cp_interval(s: float, n: int, tail: float) -> tuple[float, float]:
    """The Clopper-Pearson bounds of a (fractional) count ``s`` of ``n`` at ``tail`` on each side."""
    from scipy.special import betaincinv  # scipy comes with choix (a core dependency); its import is slow

    if n == 0:
        return 0.0, 1.0
    lo = 0.0 if s <= 0 else float(betaincinv(s, n - s + 1, tail))
    hi = 1.0 if s >= n else float(betaincinv(s + 1, n - s, 1 - tail))
    return lo, hi


def _binomial_p(s: float, n: int) -> float:
    """The two-sided exact binomial p-value of a (fractional) count ``s`` of ``n`` at one half: twice the
    smaller tail, ``P(X >= s) = I(1/2; s, n - s + 1)`` and ``P(X <= s) = I(1/2; n - s, s + 1)``."""
    from scipy.special import betainc

    if n == 0:
        return 1.0
    upper = 1.0 if s <= 0 else float(betainc(s, n - s + 1, 0.5))
    lower = 1.0 if s >= n else float(betainc(n - s, s + 1, 0.5))
    return min(1.0, 2 * min(upper, lower))


@functools.lru_cache(maxsize=4096)
def _critical_share(n: int, alpha: float) -> float | None:
    """The smallest rescaled mean ``s / n`` above one half that ``_binomial_p`` calls significant."""
    from scipy.optimize import brentq

    if n < 1 or _binomial_p(float(n), n) >= alpha:
        return None
    return float(brentq(lambda s: _binomial_p(s, n) - alpha, n / 2, n, xtol=1e-10)) / n


def t_quantile(df: float, q: float) -> float:
    """The ``q`` quantile of Student's t with ``df`` degrees of freedom (scipy's ``stdtrit``)."""
    from scipy.special import stdtrit

    return float(stdtrit(df, q))
