"""Interval estimates shared by every report cwm writes (arena results, eval accuracies)."""

from __future__ import annotations

import math
from collections.abc import Sequence

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
    """
    if not 0.0 < confidence < 1.0:
        raise ValueError(f"confidence must be in (0, 1) (got {confidence!r})")
    return 1.0 if n <= 0 else min(1.0, math.log(1.0 / (1.0 - confidence)) / n)


def perfect_score_note(passed: int, total: int, *, confidence: float = 0.95) -> str:
    """The text printed beside an accuracy of 1.0: ``" (0 of N wrong: error rate < B at 95%)"``; empty for
    any other score (its interval says more than a bound) or for no checks."""
    if total <= 0 or passed != total:
        return ""
    return f" (0 of {total:,} wrong: error rate < {zero_failure_bound(total, confidence=confidence):.2g} at {confidence:.0%})"
