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
  Student t quantile on ``clusters - 1`` degrees of freedom (``cwm.stats.t_quantile``; Cameron & Miller 2015, "A practitioner's guide
  to cluster-robust inference"); no interval from a single cluster.
"""

from __future__ import annotations

import math
from collections.abc import Hashable, Iterable
from typing import Any

from cwm.stats import t_quantile, wilson


def _groups(pairs: Iterable[tuple[Hashable, float]]) -> list[list[float]]:
    groups: dict[Hashable, list[float]] = {}
    for key, value in pairs:
        groups.setdefault(key, []).append(float(value))
    return list(groups.values())


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
    low, high = wilson(p * (n / deff), n / deff)  # the Wilson interval at the effective sample size
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
    half = t_quantile(c - 1, 0.975) * math.sqrt(_robust_variance(groups, mean))
    return {"mean": mean, "low": mean - half, "high": mean + half, "n": n, "clusters": c}
