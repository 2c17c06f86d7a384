"""Interval estimates and tests shared by every report cwm writes (arena results and comparisons, eval
accuracies)."""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Sequence
from statistics import NormalDist

Z95 = 1.959963984540054  # the two-sided 95% quantile of the standard normal


def wilson(successes: float, n: int, *, z: float = Z95) -> tuple[float, float]:
    """The Wilson score interval of a binomial proportion (``(0, 1)`` when ``n`` is 0)."""
    if n == 0:
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
      lo, hi: its two-sided ``1 - alpha`` Student t interval (the mean itself for fewer than two pairs, or
        when every pair gave the same value).
      sd: the sample standard deviation of the pair values (0.0 for fewer than two pairs).
      p_value: the two-sided paired t-test's (the exact sign test's when every pair gave the same value).
      significant: ``p_value < alpha``.
      mde: the minimum detectable difference at ``power`` from the observed spread (``None``: not estimable,
        fewer than two pairs or no spread).
      needed_pairs: the pairs at which a difference of the observed size would be detected at ``power``
        (``None``: already significant, nothing observed, or no spread to plan from).
      margin: the equivalence margin given (``None``: no equivalence test).
      equivalent: whether two one-sided tests (TOST) at ``alpha`` show ``|difference| < margin`` (``None``:
        no margin, or no spread to test with).
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

    def to_json(self) -> dict[str, float | int | bool | None]:
        return dataclasses.asdict(self)


def paired(values: Sequence[float], *, margin: float | None = None, alpha: float = ALPHA,
           power: float = POWER) -> PairedComparison:
    """The paired t analysis of per-pair values (Student 1908; the standard analysis of a matched-pairs
    design): the mean, its ``1 - alpha`` t interval, the two-sided p-value, the minimum detectable
    difference (MDE) at ``power`` and the pairs a difference of the observed size needs, and with a
    ``margin`` Schuirmann's (1987) two one-sided tests (TOST) for equivalence.

    The MDE is ``(t[1-alpha/2] + t[power]) * sd / sqrt(n)`` with Student t quantiles at ``n - 1`` degrees
    of freedom (the usual normal-approximation power formula, made exact in its quantiles for small
    samples); ``needed_pairs`` is the smallest ``n`` whose MDE at the observed ``sd`` is at most the
    observed ``|mean|``. TOST declares equivalence when the ``1 - 2 alpha`` interval lies inside
    ``(-margin, margin)``. When every pair gave the same value there is no spread to estimate: the interval
    is that value, the p-value is the exact sign test's (``2 * 0.5**n``, or 1 for a value of 0), and no
    MDE, plan or equivalence is given.

    Raises:
      ValueError: a value that is not finite, or a margin that is not positive.
    """
    n = len(values)
    if not all(math.isfinite(v) for v in values):
        raise ValueError("paired: every pair value must be a finite number")
    if margin is not None and not margin > 0:
        raise ValueError(f"paired: the equivalence margin must be positive, not {margin}")
    values = [float(v) for v in values]
    mean = sum(values) / n if n else 0.0
    sd = math.sqrt(sum((v - mean) ** 2 for v in values) / (n - 1)) if n > 1 else 0.0
    if n < 2 or sd == 0.0:
        p = 1.0 if n == 0 or mean == 0.0 else min(1.0, 2 * 0.5**n)
        return PairedComparison(n, mean, mean, mean, sd, p, p < alpha, None, None, margin, None)
    se = sd / math.sqrt(n)
    half = _t_quantile(n - 1, 1 - alpha / 2) * se
    p = 2 * _t_tail(n - 1, abs(mean) / se)
    mde = minimum_detectable(sd, n, alpha=alpha, power=power)
    needed = None if p < alpha or mean == 0.0 else pairs_needed(sd, abs(mean), alpha=alpha, power=power)
    equivalent = None
    if margin is not None:
        tost = _t_quantile(n - 1, 1 - alpha) * se
        equivalent = bool(-margin < mean - tost and mean + tost < margin)
    return PairedComparison(n, mean, mean - half, mean + half, sd, p, p < alpha, mde, needed, margin, equivalent)


def minimum_detectable(sd: float, n: int, *, alpha: float = ALPHA, power: float = POWER) -> float:
    """The smallest true mean difference a two-sided paired t-test at ``alpha`` detects with probability
    ``power`` from ``n`` pairs of standard deviation ``sd`` (``(t[1-alpha/2] + t[power]) * sd / sqrt(n)``,
    ``n - 1`` degrees of freedom).

    Raises:
      ValueError: fewer than two pairs.
    """
    if n < 2:
        raise ValueError(f"minimum_detectable: needs at least two pairs, not {n}")
    return (_t_quantile(n - 1, 1 - alpha / 2) + _t_quantile(n - 1, power)) * sd / math.sqrt(n)


def pairs_needed(sd: float, difference: float, *, alpha: float = ALPHA, power: float = POWER) -> int:
    """The fewest pairs whose minimum detectable difference (``minimum_detectable``) at spread ``sd`` is at
    most ``difference``.

    Raises:
      ValueError: a ``difference`` that is not positive.
    """
    if not difference > 0:
        raise ValueError(f"pairs_needed: the difference must be positive, not {difference}")
    z = NormalDist()
    n = max(2, math.ceil(((z.inv_cdf(1 - alpha / 2) + z.inv_cdf(power)) * sd / difference) ** 2))
    while minimum_detectable(sd, n, alpha=alpha, power=power) > difference:
        n += 1  # t quantiles exceed the normal ones: a few steps at small n, none at large n
    return n


def _t_quantile(df: int, q: float) -> float:
    from scipy.special import stdtrit  # scipy comes with choix (a core dependency); its import is slow

    return float(stdtrit(df, q))


def _t_tail(df: int, t: float) -> float:
    """``P(T > t)`` for Student's t with ``df`` degrees of freedom."""
    from scipy.special import stdtr

    return float(stdtr(df, -t))
