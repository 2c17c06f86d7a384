"""UCT Monte-Carlo tree search over anything shaped like ``pyspiel.State`` (ground truth or a CWM model): the
one search loop (``planners.search.TreeSearch``) with UCB1 selection and random-rollout or value-function
leaves, and the MCTS-Solver; for any number of players, max^n by default, paranoid as an option
(``MCTSSettings.backup``).

Reference: Kocsis & Szepesvari, "Bandit based Monte-Carlo Planning" (ECML 2006), UCB1 tree policy;
Winands, Bjornsson & Saito, "Monte-Carlo Tree Search Solver" (CG 2008); Luckhardt & Irani, "An algorithmic
solution of N-person games" (AAAI 1986), max^n; Sturtevant & Korf, "On pruning techniques for multi-player
games" (AAAI 2000), the paranoid search.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from planners.config import DEFAULT_SEARCH, SearchConfig
from planners.evaluators import ValueFn, leaf_evaluator
from planners.search import TreeSearch, select_uct
from planners.settings import MCTSSettings
from planners.tree import SearchResult

__all__ = ["MCTS", "SearchResult", "ValueFn"]


class MCTS(TreeSearch):
    """UCT search with random-rollout or value-function leaf evaluation.

    Args:
      config: the settings: ``MCTSSettings``, or the ``SearchConfig`` record (its ``mcts()``, every field of
        it checked): simulations, UCT constant, rollouts, rollout cap, leaf evaluation, solver, seed.
        ``solve`` backs up proven outcomes (MCTS-Solver, Winands et al. 2008, in OpenSpiel's max^n form, and
        its default): a proven child is valued at its outcome, a node is proven when one child reaches the
        game's maximum utility for the mover or every child is proven, the final move prefers proven wins,
        and the search stops early once the root is proven.
      value_fn: ``(state, player) -> float`` leaf evaluator: used instead of rollouts (``leaf="value"``)
        or to score the rollouts the cutoff stops (``leaf="rollout"``).
      max_utility: the game's best return, which lets the solver prove a node from one winning child;
        ``None`` takes it from ``state.get_game()`` where the state has one (OpenSpiel states), and
        otherwise proves a node only once all its children are proven.
      max_game_length: the game's longest possible play, the default rollout cap (``None``: taken from
        ``state.get_game()`` where there is one, else ``DEFAULT_MAX_ROLLOUT_STEPS``).
      seed: an int, an ``np.random.Generator`` (one integer is drawn from it), or ``None`` for the settings'
        ``seed`` (``None`` there too: fresh entropy).

    Raises:
      UsageError: a setting out of range (fewer than one simulation, no rollouts without a value function, ...).

    Randomness: expansion order, chance outcomes in the tree and rollouts all draw from one
    ``random.Random`` seeded from ``seed``; a seeded search is reproducible.
    """

    def __init__(
        self,
        config: MCTSSettings | SearchConfig = DEFAULT_SEARCH,
        *,
        value_fn: ValueFn | None = None,
        max_utility: float | None = None,
        max_game_length: int | None = None,
        seed: int | np.random.Generator | None = None,
    ):
        config.check("MCTS", value_fn=value_fn is not None)
        settings = config.mcts() if isinstance(config, SearchConfig) else config
        self.config = config
        self.settings = settings
        self.value_fn = value_fn
        self.max_game_length = max_game_length
        self.max_rollout_steps = settings.rollout_cap(max_game_length)
        super().__init__(select=select_uct(settings.uct_c, solver=settings.solve),
                         evaluator=leaf_evaluator(settings, value_fn, self.max_rollout_steps),
                         num_simulations=settings.num_simulations, solve=settings.solve, max_utility=max_utility,
                         backup=settings.backup, seed=settings.seed if seed is None else seed)

    def _prepare(self, state: Any) -> None:
        """OpenSpiel states know the game's maximum utility (for the solver) and length (the rollout cap)."""
        game = getattr(state, "get_game", None)
        if not callable(game):
            return
        if self.max_utility is None:
            self._max_utility = float(game().max_utility())
        if self.max_game_length is None:
            cap = self.settings.rollout_cap(int(game().max_game_length()))
            if cap != self.max_rollout_steps:
                self.max_rollout_steps = cap
                self.evaluator = leaf_evaluator(self.settings, self.value_fn, cap)
