"""The one tree search: simulations from a root over anything shaped like ``pyspiel.State``, with the
child-selection function (``select_uct``, ``select_puct``) and the leaf evaluator (``planners.evaluators``)
passed in; its tree and result are in ``planners.tree``.
``planners.MCTS`` is this loop with UCT and rollouts or value leaves, ``planners.PUCT`` with PUCT and a prior
with a value.

The tree keeps each node's state, so a simulation walks down without re-applying moves; it creates exactly
one new state per simulation (the expanded child) plus what the evaluator makes. OpenSpiel states are copied
only where they must be (``child`` at expansion); model states (``cwm.model.ModelState``) are never copied,
since ``child`` shares the immutable JSON state. Chance nodes are in the tree and sampled on every visit. A
new leaf asks its state who acts (and, at the end of the game, the returns) at once, and its legal actions
only when a later simulation goes through it (``Node.fetch_legal``): most leaves are valued once and never
reached again. Asking later draws nothing from the search's generator, so a seeded search is the same.

Any number of players: each node keeps the mover's mean return and the player to move picks its child by
its own return (max^n; in a two-player zero-sum game, minimax), or, with ``backup="paranoid"``, every
other player is taken to minimise the root player's return.

As in OpenSpiel's ``python/algorithms/mcts.py`` (an evaluator, ``uct_value``/``puct_value`` choosing the
child) and mctx's ``search`` (the action-selection functions passed in): strategies are arguments, not copies
of the loop.
"""

from __future__ import annotations

import math
import random
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from cwm.types import TERMINAL
from planners.evaluators import Evaluator
from planners.rollout import rng_from, sample_outcome
from planners.settings import BACKUPS
from planners.tree import NOBODY, Node, SearchResult, Tree

# A child-selection function at a decision node: the child to follow, or ``None`` to expand an action not
# tried yet, which the function has moved to the end of ``node.untried`` (the search pops it from there).
# Returning the child itself keeps the common step, following a child, free of any lookup. The search calls it
# once a node without a prior has no untried action left (it expands those first, in random order: UCT's
# rule), and at every visit of a node with a prior (PUCT weighs the untried actions by it).
Select = Callable[[Node, random.Random], Node | None]


def select_uct(c: float, *, solver: bool = False) -> Select:
    """UCB1 on trees (Kocsis & Szepesvari 2006): untried actions first, in random order (the search does this
    itself at nodes without a prior), then the child with the highest ``mean + c * sqrt(ln N / n)``, ties to the
    first expanded.

    Args:
      c: the exploration constant.
      solver: a proven child counts at its proven return for the player to move, without a bonus
        (MCTS-Solver, Winands et al. 2008).
    """

    def scale_of(n: int) -> float:
        return c * math.sqrt(math.log(n))

    scale = [math.nan]  # scale[N] is c * sqrt(ln N), computed once per N (N = 0 is never selected from)

    def grow(n: int) -> float:
        """``c * sqrt(ln n)``, ``scale`` replaced by a longer copy that holds it (below ``_TABLE_LIMIT``)."""
        nonlocal scale
        if n >= _TABLE_LIMIT:
            return scale_of(n)
        scale = _grown(scale, n, scale_of)
        return scale[n]

    def select(node: Node, rng: random.Random) -> Node | None:
        if node.untried:  # expand first, in random order
            _to_end_at_random(node.untried, rng)
            return None
        try:  # sqrt(ln N) hoisted out of the loop
            k = scale[node.visits]
        except IndexError:
            k = grow(node.visits)
        best = node.kids[0]
        best_v = _NEG_INF
        for kid in node.kids:
            v = kid.mean + k * kid.inv_sqrt_n
            if v > best_v:
                best, best_v = kid, v
        return best

    def select_solved(node: Node, rng: random.Random) -> Node | None:
        if node.untried:
            _to_end_at_random(node.untried, rng)
            return None
        try:
            k = scale[node.visits]
        except IndexError:
            k = grow(node.visits)
        p = node.player
        best = node.kids[0]
        best_v = _NEG_INF
        for kid in node.kids:
            v = kid.outcome[p] if kid.outcome is not None else kid.mean + k * kid.inv_sqrt_n
            if v > best_v:
                best, best_v = kid, v
        return best

    return select_solved if solver else select


def select_puct(c: float) -> Select:
    """PUCT (Silver et al. 2017): the action with the highest ``Q(a) + c * P(a) * sqrt(N) / (1 + N(a))``, with
    ``P`` the node's prior, ``Q`` the mean return of the action's child (0 before its first visit) and
    ``sqrt(N)`` at least 1; ties go to the action first in the prior. Draws nothing."""

    def select(node: Node, rng: random.Random) -> Node | None:
        scale = c * math.sqrt(max(1, node.visits))
        kids = node.by_action
        best, best_v = NOBODY, -math.inf
        assert node.prior is not None, "PUCT selects at nodes its evaluator gave a prior"
        for a, p in node.prior.items():
            kid = kids.get(a)
            if kid is None:
                v = scale * p  # Q = 0, N(a) = 0
            else:
                v = (kid.mean if kid.visits else 0.0) + scale * p / (1 + kid.visits)
            if v > best_v:
                best, best_v = a, v
        if best == NOBODY:
            raise ValueError("PUCT: the evaluator's prior at a decision node names no action")
        kid = kids.get(best)
        if kid is None:  # a new child: its action goes to the end of untried, where the search takes it
            untried = node.fetch_legal()
            if best in untried:
                untried.remove(best)
            untried.append(best)
        return kid

    return select


class TreeSearch:
    """The one simulation loop: select down the tree, expand one child, evaluate it, back up.

    Args:
      select: the child-selection function at decision nodes (``select_uct(c)``, ``select_uct(c, solver=True)``,
        ``select_puct(c)``); a node without a prior expands its untried actions first, in random order, and
        chance nodes draw their outcome by its probability.
      evaluator: values each new non-terminal leaf (``planners.evaluators``); terminal leaves are valued at
        their returns. One that gives priors (``evaluator.priors``) also evaluates the root first.
      num_simulations: simulations per search (>= 1).
      solve: back up proven outcomes (MCTS-Solver in OpenSpiel's max^n form): a node is proven when one
        child reaches ``max_utility`` for the mover or every child is proven, and the search stops once the
        root is proven.
      max_utility: the game's best return, for the solver (``None``: prove a node only from all children).
      backup: what each player is taken to maximise (``planners.settings.BACKUPS``). ``"maxn"`` (default, any number of
        players): every player its own return (max^n, Luckhardt & Irani 1986): a node keeps the mean of the
        return vectors backed up through it, and since the player choosing among a node's children reads
        only its own component, the node stores that one (``Node.mean``, the mover's mean return); in a
        two-player zero-sum game this is minimax. ``"paranoid"`` (Sturtevant & Korf 2000): every other
        player minimises the root player's return, so the others' component of each backed-up vector is
        the root player's return negated (a coalition against the root player); the solver then proves a
        coalition node only once all its children are proven.
      seed: an int, an ``np.random.Generator`` (one integer is drawn from it), a ``random.Random`` (used as
        it is) or ``None`` (fresh entropy).

    Randomness: expansion order, chance outcomes in the tree and the evaluator all draw from one
    ``random.Random`` seeded from ``seed``; a seeded search is reproducible.
    """

    def __init__(self, *, select: Select, evaluator: Evaluator, num_simulations: int, solve: bool = False,
                 max_utility: float | None = None, backup: str = "maxn",
                 seed: int | np.random.Generator | random.Random | None = None):
        if backup not in BACKUPS:
            raise ValueError(f"the backup must be one of {list(BACKUPS)} (got {backup!r})")
        self.backup = backup
        self._paranoid_for: int | None = None  # the root player of a paranoid search, else None (max^n)
        self.select = select
        self.evaluator = evaluator
        self.num_simulations = num_simulations
        self.solve = solve
        self.max_utility = max_utility
        self._max_utility: float | None = max_utility
        self.rng = rng_from(seed)
        self.searches = 0  # over this searcher's life: the moves searched and the simulations run (fewer than
        self.simulations = 0  # asked where the solver proved a root)

    def search(self, state: Any, *, keep_tree: bool = False) -> SearchResult:
        """Runs ``num_simulations`` simulations from ``state`` (left unchanged) and picks the move.

        Args:
          state: a decision node.
          keep_tree: return the tree in ``SearchResult.tree`` (it holds every node's state until dropped).

        Raises:
          ValueError: ``state`` is terminal or a chance node (there is no decision to make).
        """
        if state.is_terminal() or state.is_chance_node():
            raise ValueError(f"{type(self).__name__}.search needs a decision node; got a terminal or chance state")
        self._prepare(state)
        root = Node(state, NOBODY, NOBODY)
        self._paranoid_for = root.player if self.backup == "paranoid" else None
        if self._priors:
            root.prior = self.evaluator.evaluate(state, self.rng)[1]
        done = 0
        while done < self.num_simulations and not (self.solve and root.outcome is not None):
            self._simulate(root)
            done += 1
        self.searches += 1
        self.simulations += done
        visits = {k.action: k.visits for k in root.kids}
        values = {k.action: k.total / k.visits for k in root.kids if k.visits}
        return SearchResult(action=int(self._choose(root).action), visits=visits, values=values, simulations=done,
                            tree=Tree(root) if keep_tree else None)

    def step(self, state: Any) -> int:
        """The chosen action id at ``state``."""
        return self.search(state).action

    @property
    def evaluator(self) -> Evaluator:
        """The leaf evaluator (settable: a search may rebuild it for a game, as MCTS does for its cutoff)."""
        return self._evaluator

    @evaluator.setter
    def evaluator(self, evaluator: Evaluator) -> None:
        self._evaluator = evaluator
        self._evaluate = evaluator.evaluate  # bound once, not once a simulation
        self._priors = bool(getattr(evaluator, "priors", False))

    def _prepare(self, state: Any) -> None:
        """Reads what the search needs from the root's game before a search (nothing here)."""

    def _choose(self, root: Node) -> Node:
        """The move: the most visited child (ties to the higher mean); with the solver, as OpenSpiel orders
        it, a proven win first and a proven loss last."""
        p, solve = root.player, self.solve

        def key(k: Node) -> tuple[float, int, float]:
            proven = k.outcome[p] if solve and k.outcome is not None else 0.0
            return proven, k.visits, k.total / k.visits if k.visits else -math.inf

        return max(root.kids, key=key)

    # -- one simulation -----------------------------------------------------------------------------
    def _simulate(self, root: Node) -> None:
        node = root
        path = [root]
        solve = self.solve
        select = self.select
        rng = self.rng
        evaluate = self._evaluate
        while True:
            if node.outcome is not None and (solve or node.player == TERMINAL):
                returns: Sequence[float] = node.outcome
                break
            if node.chance is not None:
                action = sample_outcome(node.chance, rng)
                child = node.by_action.get(action)
            else:
                untried = node.untried
                if untried is None:  # a leaf gone through for the first time: its legal actions are asked now
                    untried = node.fetch_legal()
                if untried and node.prior is None:  # no prior to weigh them: untried first, at random (UCT)
                    i = int(rng.random() * len(untried))  # _pop_random, inline
                    untried[i], untried[-1] = untried[-1], untried[i]
                    action = untried.pop()
                    child = None
                else:
                    child = select(node, rng)
                    if child is None:
                        action = untried.pop()
            if child is None:  # a new leaf: terminal, or valued by the evaluator (which may give its prior)
                child = self._expand(node, action)
                path.append(child)
                if child.outcome is not None:
                    returns = child.outcome
                else:
                    returns, prior = evaluate(child.state, rng)
                    if self._paranoid_for is not None:
                        returns = paranoid(returns, self._paranoid_for)
                    if prior is not None:
                        child.prior = prior
                break
            node = child
            path.append(node)
        solved = solve and path[-1].outcome is not None
        inv_sqrt = _INV_SQRT
        for n in reversed(path):
            visits = n.visits = n.visits + 1
            if n.mover >= 0:
                n.total += returns[n.mover]
            n.mean = n.total / visits
            try:
                n.inv_sqrt_n = inv_sqrt[visits]
            except IndexError:
                n.inv_sqrt_n = _grow_inv_sqrt(visits)
            if solved and n.outcome is None:
                solved = self._prove(n)

    def _expand(self, node: Node, action: int) -> Node:
        # a new leaf: who acts there now (is it over?), its legal actions only once a simulation goes through it
        child = Node.leaf(node.state.child(action), node.player, action)
        if child.outcome is not None and self._paranoid_for is not None:
            child.outcome = paranoid(child.outcome, self._paranoid_for)
        if node.kids:
            node.kids.append(child)
            node.by_action[action] = child
        else:  # its first child: the node's own list and dict replace the shared empty ones (Node)
            node.kids, node.by_action = [child], {action: child}
        return child

    def _prove(self, node: Node) -> bool:
        """Marks ``node`` proven when its children allow it; returns whether it is proven."""
        if node.chance is not None:  # a chance node is proven only if every outcome leads to the same result
            first = node.kids[0].outcome
            if len(node.kids) == len(node.chance) and first is not None and all(
                    k.outcome == first for k in node.kids):
                node.outcome = first
            return node.outcome is not None
        p = node.player
        best: list[float] | None = None
        all_proven = node.untried is not None and not node.untried
        for kid in node.kids:
            if kid.outcome is None:
                all_proven = False
            elif best is None or kid.outcome[p] > best[p]:
                best = kid.outcome
        top = self._max_utility if self._paranoid_for is None or p == self._paranoid_for else None
        if best is not None and (all_proven or (top is not None and best[p] >= top)):
            node.outcome = best
        return node.outcome is not None


def paranoid(returns: Sequence[float], root: int) -> list[float]:
    """A return vector as the paranoid search backs it up (Sturtevant & Korf 2000): the root player's return
    for the root player, that return negated for every other player (all of them minimise it)."""
    mine = returns[root]
    return [mine if p == root else -mine for p in range(len(returns))]


_NEG_INF = -math.inf  # a module constant: one global read instead of math's attribute and a negation
_TABLE_LIMIT = 1 << 22  # a table of per-visit-count values holds this many at most (32 MB); past it each is computed


def _grown(table: list[float], n: int, value: Callable[[int], float]) -> list[float]:
    """A longer copy of ``table`` (``table[m]`` is ``value(m)``) that holds ``n`` (< ``_TABLE_LIMIT``): at least
    twice as long, at most ``_TABLE_LIMIT``. A copy, not an extension, so that a search reading the old table in
    another thread never sees it half grown."""
    return table + [value(m) for m in range(len(table), min(_TABLE_LIMIT, max(n + 1, 2 * len(table))))]


def _inv_sqrt(n: int) -> float:
    return 1.0 / math.sqrt(n)


_INV_SQRT = [math.inf]  # _INV_SQRT[n] is 1 / sqrt(n), the same float as computed at each backup (n >= 1)


def _grow_inv_sqrt(n: int) -> float:
    """``1 / sqrt(n)``, ``_INV_SQRT`` replaced by a longer copy that holds it (below ``_TABLE_LIMIT``)."""
    global _INV_SQRT
    if n >= _TABLE_LIMIT:
        return _inv_sqrt(n)
    _INV_SQRT = _grown(_INV_SQRT, n, _inv_sqrt)
    return _INV_SQRT[n]


def _to_end_at_random(items: list[int], rng: random.Random) -> None:
    """Swaps a uniformly random element to the end, for the search to pop (random expansion order, O(1))."""
    i = int(rng.random() * len(items))
    items[i], items[-1] = items[-1], items[i]
