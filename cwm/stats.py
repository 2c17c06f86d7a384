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
