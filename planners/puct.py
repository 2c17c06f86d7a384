"""PUCT: the one search loop (``planners.search.TreeSearch``) guided by a prior, AlphaZero's form.

At each decision node the search follows the action maximising ``Q(a) + c_puct * P(a) * sqrt(N) / (1 + N(a))``
(Silver et al. 2017), with ``P`` the evaluator's prior at the node, and values each new leaf by the evaluator
instead of a rollout; terminal states give their true returns; chance nodes are in the tree, their outcomes
drawn on every visit. The evaluator is any ``planners.evaluators.PriorValueEvaluator``: the PPO policy's
(``cwm.agents.ppo.ppo_evaluator``, with the policy head as the prior and the critic as the value), or a
hand-written one.

``cwm.agents.ppo.PUCTAgent`` plays the real game with it on a world model.
"""

from __future__ import annotations

import importlib
import random
import warnings
from typing import Any

import numpy as np

from cwm.types import UsageError
from planners.evaluators import Evaluator
from planners.search import TreeSearch, select_puct
from planners.settings import PUCTSettings
from planners.tree import Node

DEFAULT_PUCT = PUCTSettings()


class PUCT(TreeSearch):
    """AlphaZero-style search: PUCT selection, leaves valued by an evaluator that also gives the prior.

    Args:
      evaluator: gives each new leaf's values and its prior (``evaluator.priors`` must be true, as for a
        ``PriorValueEvaluator``); the root is evaluated first, for its prior.
      settings: simulations and ``c_puct`` (``PUCTSettings``).
      seed: an int, an ``np.random.Generator``, a ``random.Random`` or ``None`` for ``settings.seed``: the
        chance outcomes drawn in the tree and by the evaluator.

    Raises:
      UsageError: a setting out of range, or an evaluator that gives no priors.

    The former ``PUCT(params, config, encode, observe, num_simulations=100, c_puct=1.25, seed=None)`` of a PPO
    policy is now ``cwm.agents.ppo.ppo_puct`` with the same arguments (a policy network is not the planners'
    to evaluate: they import only cwm's kernel).

    The move is the most visited root child (ties to the first expanded); the final values are the mean
    returns of the root player. No solver.
    """

    def __init__(self, evaluator: Evaluator, settings: PUCTSettings = DEFAULT_PUCT, *,
                 seed: int | np.random.Generator | random.Random | None = None):
        settings.check("PUCT")
        if not getattr(evaluator, "priors", False):
            raise UsageError("PUCT: the evaluator gives no priors (a planners.PriorValueEvaluator does)")
        self.settings = settings
        super().__init__(select=select_puct(settings.c_puct), evaluator=evaluator, num_simulations=settings.num_simulations,
                         seed=settings.seed if seed is None else seed)

    def _choose(self, root: Node) -> Node:
        return max(root.kids, key=lambda kid: kid.visits)


def __getattr__(name: str) -> Any:
    """``PUCTAgent``, which plays a PPO policy's search in the real game, moved to ``cwm.agents.ppo``
    (deprecated here)."""
    if name == "PUCTAgent":
        warnings.warn("planners.puct.PUCTAgent moved to cwm.agents.ppo.PUCTAgent; the old name is deprecated and "
                      "will be removed", DeprecationWarning, stacklevel=2)
        return importlib.import_module("cwm.agents.ppo").PUCTAgent
    raise AttributeError(f"module 'planners.puct' has no attribute {name!r}")
