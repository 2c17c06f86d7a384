"""Intervals clustered by keyword set: episodes that replay the same keyword set are one unit, not several.

The runner replays the same game seeds under every agent seed, so each keyword set (and its codes) is played
once per seed. Outcomes on one keyword set are correlated (a hard set is hard at every seed; a deterministic
team plays it the same way every time), so treating the episodes as independent overstates the evidence: the
unit of an interval is the keyword set, and ``clusters`` says how many there were.

- :func:`cluster_rate`: a proportion with the **Wilson interval at the effective sample size** ``n / deff``,
  where the design effect ``deff`` is the cluster-robust (CR1) variance of the ratio estimator over its
  binomial variance (Kish's design effect; Korn & Graubard 1998, "Confidence intervals for proportions with
  small expected number of positive counts estimated from survey data"). ``deff`` is kept within
  ``[1, mean cluster size]``: never narrower than independent draws, never wider than one draw per cluster.
  When the rate is 0 or 1 the correlation cannot be estimated, and the worst case is taken (``deff`` is the
  mean cluster size, so the effective sample size is the number of clusters).
- :func:`cluster_mean`: a mean with the cluster-robust (CR1) standard error of the ratio estimator and a
  Student t quantile on ``clusters - 1`` degrees of freedom (Cameron & Miller 2015, "A practitioner's guide
  to cluster-robust inference"); no interval from a single cluster.
"""

from __future__ import annotations

import math
from collections.abc import Hashable, Iterable, Sequence
from typing import Any

from cwm.stats import Z95


def _groups(pairs: Iterable[tuple[Hashable, float]]) -> list[list[float]]:
    groups: dict[Hashable, list[float]] = {}
    for key, value in pairs:
        groups.setdefault(key, []).append(float(value))
    return list(groups.values())


def _wilson(p: float, n: float, z: float = Z95) -> tuple[float, float]:
    """The Wilson score interval of a proportion ``p`` observed on an effective sample of ``n`` (> 0)."""
    denom = 1 + z * z / n
    centre = (p + z * z / (2 * n)) / denom
    half = z * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n)) / denom
    return max(0.0, min(p, centre - half)), min(1.0, max(p, centre + half))


def _robust_variance(groups: list[list[float]], estimate: float) -> float:
    """CR1 variance of the ratio estimator ``sum(y) / n``: cluster residual sums, scaled by C/(C-1)."""
    c, n = len(groups), sum(len(g) for g in groups)
    residuals = [sum(g) - estimate * len(g) for g in groups]
    return c / (c - 1) * sum(r * r for r in residuals) / (n * n)


def cluster_rate(outcomes: Iterable[tuple[Hashable, bool]]) -> dict[str, Any]:
    """A proportion of ``(cluster key, success)`` pairs with its clustered 95% Wilson interval.

    Returns:
      ``successes``, ``n`` (observations), ``clusters``, ``rate`` (None when there are none), ``low``,
      ``high`` and ``n_effective`` (``n / deff``).
    """
    groups = _groups(outcomes)
    n, c = sum(len(g) for g in groups), len(groups)
    successes = int(sum(sum(g) for g in groups))
    if n == 0:
        return {"successes": 0, "n": 0, "clusters": 0, "rate": None, "low": 0.0, "high": 1.0, "n_effective": 0.0}
    p, largest = successes / n, n / c
    if c < 2 or p in (0.0, 1.0):
        deff = largest
    else:
        deff = min(largest, max(1.0, _robust_variance(groups, p) / (p * (1 - p) / n)))
    low, high = _wilson(p, n / deff)
    return {"successes": successes, "n": n, "clusters": c, "rate": p, "low": low, "high": high,
            "n_effective": n / deff}


def cluster_mean(values: Iterable[tuple[Hashable, float]]) -> dict[str, Any]:
    """The mean of ``(cluster key, value)`` pairs with its cluster-robust 95% t interval.

    Returns:
      ``mean``, ``low``, ``high`` (None throughout without values; ``low`` and ``high`` None from a single
      cluster), ``n`` (observations) and ``clusters``.
    """
    groups = _groups(values)
    n, c = sum(len(g) for g in groups), len(groups)
    if n == 0:
        return {"mean": None, "low": None, "high": None, "n": 0, "clusters": 0}
    mean = sum(sum(g) for g in groups) / n
    if c < 2:
        return {"mean": mean, "low": None, "high": None, "n": n, "clusters": c}
    half = t_quantile(c - 1) * math.sqrt(_robust_variance(groups, mean))
    return {"mean": mean, "low": mean - half, "high": mean + half, "n": n, "clusters": c}


def t_quantile(df: int) -> float:
    """The two-sided 95% quantile of Student's t with ``df`` degrees of freedom (0.975 one-sided).

    Exact for 1 and 2 degrees of freedom; from 3 on, the Cornish-Fisher expansion of t about the normal
    quantile to order 1/df^4 (Abramowitz & Stegun 26.7.5), within 0.005 of the exact value at df = 3 and
    closer as df grows.
    """
    if df < 1:
        raise ValueError(f"degrees of freedom must be >= 1, got {df}")
    if df == 1:
        return math.tan(math.pi * 0.475)
    if df == 2:
        return math.sqrt(2 / (4 * 0.975 * 0.025) - 2)
    z, v = Z95, float(df)
    terms: Sequence[float] = (
        (z**3 + z) / 4,
        (5 * z**5 + 16 * z**3 + 3 * z) / 96,
        (3 * z**7 + 19 * z**5 + 17 * z**3 - 15 * z) / 384,
        (79 * z**9 + 776 * z**7 + 1482 * z**5 - 1920 * z**3 - 945 * z) / 92160,
    )
    return z + sum(term / v ** (i + 1) for i, term in enumerate(terms))
