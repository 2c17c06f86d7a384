"""Thompson sampling over a tree of programs: which node to refine next.

Each candidate node with pass rate ``h`` gets a Beta(1 + C·h, 1 + C·(1 − h)) belief about how promising
a refinement of it is; one draw per node, the largest draw wins. ``C`` (default 5, as in the paper)
sets how sharply the sampler prefers high pass rates. By default (``count_refinements=True``) the number
of refinements already asked of a node is added to β, as REx does, so a node that keeps failing to
improve is tried less often; ``count_refinements=False`` is the paper's form, without the count.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

import numpy as np

DEFAULT_C: float = 5.0


def beta_params(h: float, *, c: float = DEFAULT_C, refinements: int = 0, count_refinements: bool = True
                ) -> tuple[float, float]:
    """The (α, β) of a node's Beta belief.

    Args:
      h: the node's pass rate in [0, 1].
      c: the concentration C.
      refinements: refinements already requested of the node.
      count_refinements: add ``refinements`` to β (REx; the default). ``False``: the paper's form.

    Raises:
      ValueError: ``h`` outside [0, 1] or ``c`` negative.
    """
    if not 0.0 <= h <= 1.0:
        raise ValueError(f"pass rate must be in [0, 1], got {h}")
    if c < 0:
        raise ValueError(f"C must be >= 0, got {c}")
    beta = 1.0 + c * (1.0 - h) + (refinements if count_refinements else 0)
    return 1.0 + c * h, beta


def choose(
    rates: Sequence[float],
    rng: np.random.Generator,
    *,
    c: float = DEFAULT_C,
    refinements: Sequence[int] | None = None,
    count_refinements: bool = True,
) -> int:
    """Index of the node to refine: one Beta draw per node, the largest wins.

    Randomness: one ``rng.beta`` draw per node, in the given order (so a fixed seed and the same
    nodes in the same order give the same choice).

    Raises:
      ValueError: no nodes, or ``refinements`` of the wrong length.
    """
    if not rates:
        raise ValueError("Thompson sampling needs at least one node")
    counts = list(refinements) if refinements is not None else [0] * len(rates)
    if len(counts) != len(rates):
        raise ValueError(f"{len(rates)} pass rates but {len(counts)} refinement counts")
    draws = [
        rng.beta(*beta_params(h, c=c, refinements=n, count_refinements=count_refinements))
        for h, n in zip(rates, counts)
    ]
    return int(np.argmax(draws))


def win_probability(a: tuple[float, float], b: tuple[float, float], *, grid: int = 20_000) -> float:
    """P(X > Y) for independent X ~ Beta(*a), Y ~ Beta(*b), by numerical integration (midpoint rule).

    Used to check the sampler against theory; accurate to ~1e-6 for the parameters used here.
    """
    x = (np.arange(grid) + 0.5) / grid
    pdf_x = np.exp(_log_beta_pdf(x, *a))
    # P(Y < x) as a cumulative sum of Y's density on the same grid
    cdf_y = np.cumsum(np.exp(_log_beta_pdf(x, *b))) / grid
    return float(np.sum(pdf_x * cdf_y) / grid)


def _log_beta_pdf(x: np.ndarray, alpha: float, beta: float) -> np.ndarray:
    log_norm = math.lgamma(alpha + beta) - math.lgamma(alpha) - math.lgamma(beta)
    return log_norm + (alpha - 1) * np.log(x) + (beta - 1) * np.log1p(-x)


__all__ = ["DEFAULT_C", "beta_params", "choose", "win_probability"]
