"""UCT Monte-Carlo tree search over anything shaped like ``pyspiel.State`` (ground truth or a CWM model).

The search keeps each node's state in the tree, so a simulation walks down without re-applying moves;
it creates exactly one new state per simulation (the expanded child) plus the rollout states. OpenSpiel
states are copied only where they must be (``child`` at expansion, one ``clone`` per rollout); model
states (``cwm.model.ModelState``) are never copied, since ``child`` shares the immutable JSON state.

Reference: Kocsis & Szepesvari, "Bandit based Monte-Carlo Planning" (ECML 2006), UCB1 tree policy.
"""

from __future__ import annotations

import dataclasses
import math
import random
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from planners.config import DEFAULT_SEARCH, SearchConfig
from planners.rollout import leaf_returns, rng_from, sample_outcome

# A value function estimates ``player``'s final return from a non-terminal ``state``.
ValueFn = Callable[[Any, int], float]


@dataclasses.dataclass(frozen=True)
class SearchResult:
    """What one search found at the root.

    Attributes:
      action: the chosen action id (most visited root child, ties to the higher mean value; with the
        solver a proven win comes first and a proven loss last).
      visits: visit count per root action id.
      values: mean return of the root player per root action id.
      simulations: simulations run (fewer than asked when the solver proved the root).
      fallback: the action is the documented fallback (ISMCTS drew no consistent state: uniform random).
    """

    action: int
    visits: dict[int, int]
    values: dict[int, float]
    simulations: int
    fallback: bool = False


class _Node:
    """A tree node: its state, who moved into it (``mover``), and that player's summed return here."""

    __slots__ = ("state", "player", "mover", "action", "visits", "total", "mean", "inv_sqrt_n", "kids",
                 "by_action", "untried", "chance", "outcome")

    def __init__(self, state: Any, mover: int, action: int):
        self.state = state
        self.mover = mover
        self.action = action
        self.visits = 0
        self.total = 0.0
        self.mean = 0.0  # total / visits, and 1 / sqrt(visits): kept at backup so selection is a multiply-add
        self.inv_sqrt_n = 0.0
        self.kids: list[_Node] = []
        self.by_action: dict[int, _Node] = {}
        self.chance: list[tuple[int, float]] | None = None
        self.untried: list[int] = []
        self.outcome: list[float] | None = None  # proven returns (terminal, or solved by the MCTS-Solver)
        self.player = state.current_player()
        if self.player == -4:
            self.outcome = list(state.returns())
        elif self.player == -1:
            self.chance = list(state.chance_outcomes())
        elif self.player >= 0:
            self.untried = state.legal_actions()  # a fresh list (OpenSpiel and ModelState alike)


class MCTS:
    """UCT search with random-rollout or value-function leaf evaluation.

    Args:
      config: the search settings (``SearchConfig``: simulations, UCT constant, rollouts, rollout cap,
        solver, seed); ``solve`` backs up proven outcomes (MCTS-Solver, Winands et al. 2008, in OpenSpiel's
        max^n form, and its default): a proven child is valued at its outcome, a node is proven when one
        child reaches the game's maximum utility for the mover or every child is proven, the final move
        prefers proven wins, and the search stops early once the root is proven.
      value_fn: ``(state, player) -> float`` leaf evaluator: used instead of rollouts (``config.leaf="value"``)
        or to score the rollouts the cutoff stops (``config.leaf="rollout"``).
      max_utility: the game's best return, which lets the solver prove a node from one winning child;
        ``None`` takes it from ``state.get_game()`` where the state has one (OpenSpiel states), and
        otherwise proves a node only once all its children are proven.
      max_game_length: the game's longest possible play, the default rollout cap (``None``: taken from
        ``state.get_game()`` where there is one, else ``DEFAULT_MAX_ROLLOUT_STEPS``).
      seed: an int, an ``np.random.Generator`` (one integer is drawn from it), or ``None`` for
        ``config.seed`` (``None`` there too: fresh entropy).

    Raises:
      UsageError: a setting out of range (fewer than one simulation, no rollouts without a value function, ...).

    Randomness: expansion order, chance outcomes in the tree and rollouts all draw from one
    ``random.Random`` seeded from ``seed``; a seeded search is reproducible.
    """

    def __init__(
        self,
        config: SearchConfig = DEFAULT_SEARCH,
        *,
        value_fn: ValueFn | None = None,
        max_utility: float | None = None,
        max_game_length: int | None = None,
        seed: int | np.random.Generator | None = None,
    ):
        config.check("MCTS", value_fn=value_fn is not None)
        self.config = config
        self.num_simulations = config.num_simulations
        self.uct_c = config.uct_c
        self.rollouts = config.rollouts
        self.value_fn = value_fn
        self.solve = config.solve
        self.rng = rng_from(config.seed if seed is None else seed)
        self.max_utility = max_utility
        self._max_utility: float | None = max_utility
        self.searches = 0  # over this searcher's life: the moves searched and the simulations run (fewer than
        self.simulations = 0  # asked where the solver proved a root)
        self.max_game_length = max_game_length
        self.max_rollout_steps = config.rollout_cap(max_game_length)

    def search(self, state: Any) -> SearchResult:
        """Runs ``num_simulations`` simulations from ``state`` (left unchanged) and picks the most visited move.

        Raises:
          ValueError: ``state`` is terminal or a chance node (there is no decision to make).
        """
        if state.is_terminal() or state.is_chance_node():
            raise ValueError("MCTS.search needs a decision node; got a terminal or chance state")
        root = _Node(state, -1, -1)
        game = getattr(state, "get_game", None)  # OpenSpiel states know the game's maximum utility and length
        if callable(game):
            if self.max_utility is None:
                self._max_utility = float(game().max_utility())
            if self.max_game_length is None:
                self.max_rollout_steps = self.config.rollout_cap(int(game().max_game_length()))
        done = 0
        while done < self.num_simulations and not (self.solve and root.outcome is not None):
            self._simulate(root)
            done += 1
        self.searches += 1
        self.simulations += done
        return _result(root, done, self.solve)

    def step(self, state: Any) -> int:
        """The chosen action id at ``state``."""
        return self.search(state).action

    # -- one simulation -----------------------------------------------------------------------------
    def _simulate(self, root: _Node) -> None:
        node = root
        path = [root]
        solve = self.solve
        while True:
            if node.outcome is not None and (solve or node.player == -4):
                returns: Sequence[float] = node.outcome
                break
            if node.chance is not None:
                a = sample_outcome(node.chance, self.rng)
                child = node.by_action.get(a)
                if child is None:
                    child = self._expand(node, a)
                    path.append(child)
                    returns = self._evaluate(child)
                    break
            elif node.untried:
                child = self._expand(node, _pop_random(node.untried, self.rng))
                path.append(child)
                returns = self._evaluate(child)
                break
            else:
                child = self._select_solved(node) if solve else self._select(node)
            node = child
            path.append(node)
        solved = solve and path[-1].outcome is not None
        for n in reversed(path):
            n.visits += 1
            if n.mover >= 0:
                n.total += returns[n.mover]
            n.mean = n.total / n.visits
            n.inv_sqrt_n = 1.0 / math.sqrt(n.visits)
            if solved and n.outcome is None:
                solved = self._prove(n)

    def _expand(self, node: _Node, action: int) -> _Node:
        child = _Node(node.state.child(action), node.player, action)
        node.kids.append(child)
        node.by_action[action] = child
        return child

    def _select(self, node: _Node) -> _Node:
        # UCB1: mean + c * sqrt(ln N / n), with sqrt(ln N) hoisted out of the loop.
        c = self.uct_c * math.sqrt(math.log(node.visits))
        best = node.kids[0]
        best_v = -math.inf
        for kid in node.kids:
            v = kid.mean + c * kid.inv_sqrt_n
            if v > best_v:
                best, best_v = kid, v
        return best

    def _select_solved(self, node: _Node) -> _Node:
        """UCB1 where a proven child counts at its proven value for the mover, without a bonus."""
        c = self.uct_c * math.sqrt(math.log(node.visits))
        p = node.player
        best = node.kids[0]
        best_v = -math.inf
        for kid in node.kids:
            v = kid.outcome[p] if kid.outcome is not None else kid.mean + c * kid.inv_sqrt_n
            if v > best_v:
                best, best_v = kid, v
        return best

    def _prove(self, node: _Node) -> bool:
        """Marks ``node`` proven when its children allow it; returns whether it is proven."""
        if node.chance is not None:  # a chance node is proven only if every outcome leads to the same result
            first = node.kids[0].outcome
            if len(node.kids) == len(node.chance) and first is not None and all(
                    k.outcome == first for k in node.kids):
                node.outcome = first
            return node.outcome is not None
        p = node.player
        best: list[float] | None = None
        all_proven = not node.untried
        for kid in node.kids:
            if kid.outcome is None:
                all_proven = False
            elif best is None or kid.outcome[p] > best[p]:
                best = kid.outcome
        if best is not None and (all_proven or (self._max_utility is not None and best[p] >= self._max_utility)):
            node.outcome = best
        return node.outcome is not None

    def _evaluate(self, leaf: _Node) -> Sequence[float]:
        state = leaf.state
        if leaf.outcome is not None:
            return leaf.outcome
        return leaf_returns(state, value_fn=self.value_fn, leaf=self.config.leaf, rollouts=self.rollouts,
                            rng=self.rng, max_steps=self.max_rollout_steps)


def _pop_random(items: list[int], rng: random.Random) -> int:
    """Removes and returns a uniformly random element (random expansion order, O(1))."""
    i = int(rng.random() * len(items))
    items[i], items[-1] = items[-1], items[i]
    return items.pop()


def _result(root: _Node, simulations: int, solve: bool) -> SearchResult:
    visits = {k.action: k.visits for k in root.kids}
    values = {k.action: k.total / k.visits for k in root.kids if k.visits}
    p = root.player

    def key(k: _Node) -> tuple[float, int, float]:
        # With the solver (as OpenSpiel orders it): a proven win first, a proven loss last, else most visits.
        proven = k.outcome[p] if solve and k.outcome is not None else 0.0
        return proven, k.visits, k.total / k.visits if k.visits else -math.inf

    best = max(root.kids, key=key)
    return SearchResult(action=int(best.action), visits=visits, values=values, simulations=simulations)
