"""The search tree and what a search returns: ``Node`` (one state of the tree with its statistics), ``Tree`` (a
finished search's tree, for inspection) and ``SearchResult`` (the move, the root's visits and values)."""

from __future__ import annotations

import dataclasses
import types
from collections.abc import Iterator
from typing import Any

from cwm.types import CHANCE, TERMINAL
from planners.evaluators import Prior

NOBODY = -1  # the root's mover and action: no player moved into it (a chance node's children have CHANCE)
_NO_KIDS: tuple[()] = ()
_NO_ACTIONS: types.MappingProxyType[int, Node] = types.MappingProxyType({})
_new_node = object.__new__


class Node:
    """A node of the tree: its state, who moved into it and by which action, and that player's statistics.

    ``Node(state, mover, action, legal=False)`` leaves a decision node's legal actions unasked (``untried`` is
    ``None``) until ``fetch_legal``.

    Read them to inspect a finished search (``SearchResult.tree``); only the search changes them.

    Attributes:
      state: the node's state (shared with the caller at the root; never changed).
      player: who acts here (a player id, ``CHANCE`` or ``TERMINAL``).
      mover: who moved into this node (``NOBODY`` at the root, ``CHANCE`` below a chance node).
      action: the action that led here (``NOBODY`` at the root).
      visits, total, mean: simulations through this node and the mover's summed and mean return over them.
      inv_sqrt_n: ``1 / sqrt(visits)``, kept at backup so that UCT's selection is one multiply-add per child.
      kids: the children in the order they were expanded; ``by_action``: the same, by action (at a node with
        no child yet, an empty tuple and an empty read-only mapping).
      untried: the legal actions not expanded yet (a decision node); ``None`` at a decision node the search has
        not gone through yet (a new leaf): its legal actions are asked for the first time a simulation goes
        through it, since a leaf that a rollout values and the search never reaches again needs none.
      chance: the chance outcomes and their probabilities (a chance node).
      outcome: the proven returns (a terminal state, or a node the MCTS-Solver proved).
      prior: the evaluator's prior over the actions (``None`` without one).
    """

    __slots__ = ("state", "player", "mover", "action", "visits", "total", "mean", "inv_sqrt_n", "kids",
                 "by_action", "untried", "chance", "outcome", "prior")

    def __init__(self, state: Any, mover: int, action: int, *, legal: bool = True):
        self.state = state
        self.mover = mover
        self.action = action
        self.visits = 0
        self.total = 0.0
        self.mean = 0.0
        self.inv_sqrt_n = 0.0
        # a leaf shares one empty tuple and one empty read-only mapping (most leaves never get a child):
        # the search gives a node its own list and dict at its first expansion (TreeSearch._expand)
        self.kids: list[Node] = _NO_KIDS  # type: ignore[assignment]
        self.by_action: dict[int, Node] = _NO_ACTIONS  # type: ignore[assignment]
        self.chance: list[tuple[int, float]] | None = None
        self.untried: list[int] | None = []
        self.outcome: list[float] | None = None
        self.prior: Prior | None = None
        self.player = state.current_player()
        if self.player == TERMINAL:
            self.outcome = list(state.returns())
        elif self.player == CHANCE:
            self.chance = list(state.chance_outcomes())
        elif self.player >= 0:  # a fresh list (OpenSpiel and ModelState alike), now or when first gone through
            self.untried = state.legal_actions() if legal else None

    @classmethod
    def leaf(cls, state: Any, mover: int, action: int) -> Node:
        """``Node(state, mover, action, legal=False)``, made without the class call (the search makes one a
        simulation): the same fields, the same questions asked of ``state``."""
        node = _new_node(cls)
        node.state, node.mover, node.action = state, mover, action
        node.visits, node.total, node.mean, node.inv_sqrt_n = 0, 0.0, 0.0, 0.0
        node.kids, node.by_action = _NO_KIDS, _NO_ACTIONS  # type: ignore[assignment]
        node.chance = node.outcome = node.prior = None
        node.player = player = state.current_player()
        if player >= 0:  # its legal actions are asked when a simulation first goes through it
            node.untried = None
        else:
            node.untried = []
            if player == TERMINAL:
                node.outcome = list(state.returns())
            elif player == CHANCE:
                node.chance = list(state.chance_outcomes())
        return node

    def fetch_legal(self) -> list[int]:
        """The node's untried actions, asking the state for its legal actions the first time."""
        untried = self.untried
        if untried is None:
            untried = self.untried = self.state.legal_actions()
        return untried


@dataclasses.dataclass(frozen=True)
class Tree:
    """A finished search's tree, for inspection: the root and its descendants as the search left them.

    Attributes:
      root: the root node (``Node``).
    """

    root: Node

    def walk(self) -> Iterator[tuple[tuple[int, ...], Node]]:
        """Every node with the actions that lead to it from the root, depth first, children in the order
        they were expanded."""
        stack: list[tuple[tuple[int, ...], Node]] = [((), self.root)]
        while stack:
            path, node = stack.pop()
            yield path, node
            stack.extend((path + (kid.action,), kid) for kid in reversed(node.kids))

    def principal_variation(self) -> list[Node]:
        """The most visited child of each node from the root down (ties to the first expanded)."""
        line, node = [], self.root
        while node.kids:
            node = max(node.kids, key=lambda kid: kid.visits)
            line.append(node)
        return line


@dataclasses.dataclass(frozen=True)
class SearchResult:
    """What one search found at the root.

    Attributes:
      action: the chosen action id (MCTS: the most visited root child, ties to the higher mean value; with
        the solver a proven win comes first and a proven loss last. PUCT: the most visited, ties to the
        first expanded).
      visits: visit count per root action id, in the order the children were expanded.
      values: mean return of the root player per root action id.
      simulations: simulations run (fewer than asked when the solver proved the root).
      fallback: the action is the documented fallback (ISMCTS drew no consistent state: uniform random).
      tree: the search's tree where the caller asked for it (``search(..., keep_tree=True)``): a ``Tree``
        (a ``planners.InfoTree`` from ISMCTS); not compared.
    """

    action: int
    visits: dict[int, int]
    values: dict[int, float]
    simulations: int
    fallback: bool = False
    tree: Any = dataclasses.field(default=None, compare=False, repr=False)
