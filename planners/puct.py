"""PUCT with a PPO policy: the policy head as the prior and the critic as the leaf value (AlphaZero-style).

Where the paper stopped: its PPO policy and its MCTS were separate agents. ``PUCT`` searches a world model
(or any state shaped like ``pyspiel.State``) choosing, at each node, the action maximising
``Q(a) + c_puct * P(a) * sqrt(N) / (1 + N(a))`` (Silver et al. 2017), with ``P`` the policy's masked
softmax at the node and each new leaf valued by the critic instead of a rollout; terminal states give their
true returns. Two-player zero-sum, perfect information: the critic's value for the player to move is the
negation of the other's. Chance nodes are crossed by drawing an outcome. Numpy only.

``PUCTAgent`` plays the real game: the real moves are replayed into the model by their strings, and the
search runs on the model state (``benchmarks/bench_puct.py`` measures it against plain MCTS at equal
simulations).
"""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any

import numpy as np

from cwm.agents.ppo import PolicyConfig, forward, masked_logits

Observe = Callable[[Any, int], Any]


class _Node:
    __slots__ = ("state", "player", "prior", "children", "visits", "value_sum")

    def __init__(self, state: Any):
        self.state = state
        self.player = state.current_player()
        self.prior: dict[int, float] = {}
        self.children: dict[int, _Node] = {}
        self.visits = 0
        self.value_sum = 0.0  # from the view of the player who moved into this node


class PUCT:
    """AlphaZero-style search with a PPO policy's prior and critic.

    Args:
      params, config: the policy (``cwm.agents.ppo.load_policy``); a feed-forward one (no GRU).
      encode: its observation encoder.
      observe: a player's observation of a search state (``lambda s, p: s.observation(p)`` on a model).
      num_simulations: simulations per move.
      c_puct: the exploration constant (AlphaZero's chess and shogi value, 1.25, by default).
      seed: draws of chance outcomes in the tree.

    Raises:
      ValueError: a recurrent policy (its value depends on the whole observation sequence, not the state).
    """

    def __init__(self, params: dict[str, np.ndarray], config: PolicyConfig, encode: Callable[[Any, int], Any],
                 observe: Observe, *, num_simulations: int = 100, c_puct: float = 1.25,
                 seed: int | np.random.Generator | None = None):
        if config.recurrent:
            raise ValueError("PUCT needs a feed-forward policy: a recurrent one values sequences, not states")
        self.params, self.config, self.encode, self.observe = params, config, encode, observe
        self.num_simulations, self.c_puct = num_simulations, c_puct
        self.rng = np.random.default_rng(seed)

    def search(self, state: Any) -> dict[int, int]:
        """Visit counts of the root's actions after ``num_simulations`` simulations from ``state``."""
        root = _Node(state)
        self._expand(root)
        for _ in range(self.num_simulations):
            self._simulate(root)
        return {a: child.visits for a, child in root.children.items()}

    def step(self, state: Any) -> int:
        """The most visited action (ties: the higher prior)."""
        visits = self.search(state)
        return max(visits, key=lambda a: visits[a])

    def _simulate(self, root: _Node) -> None:
        path, node = [root], root
        while node.children or node.prior:
            if node.state.is_terminal():
                break
            node = self._child(node, self._select(node))
            path.append(node)
            if node.visits == 0:
                break
        values = self._evaluate(node)
        for parent, child in zip(path, path[1:]):
            child.visits += 1
            child.value_sum += values[parent.player]
        root.visits += 1

    def _select(self, node: _Node) -> int:
        scale = self.c_puct * math.sqrt(max(1, node.visits))

        def score(a: int) -> float:
            child = node.children.get(a)
            q = child.value_sum / child.visits if child is not None and child.visits else 0.0
            return q + scale * node.prior[a] / (1 + (child.visits if child is not None else 0))

        return max(node.prior, key=score)

    def _child(self, node: _Node, action: int) -> _Node:
        child = node.children.get(action)
        if child is None:
            state = node.state.child(action)
            while state.is_chance_node():
                outcomes = state.chance_outcomes()
                probs = np.array([p for _, p in outcomes])
                state = state.child(outcomes[self.rng.choice(len(outcomes), p=probs / probs.sum())][0])
            child = node.children[action] = _Node(state)
        return child

    def _evaluate(self, node: _Node) -> list[float]:
        """Each player's value at a leaf: the true returns at the end, else the critic's (expanding the node)."""
        if node.state.is_terminal():
            return [float(r) for r in node.state.returns()]
        value = self._expand(node)
        out = [0.0, 0.0]
        out[node.player], out[1 - node.player] = value, -value
        return out

    def _expand(self, node: _Node) -> float:
        """Sets the node's prior from the policy; returns the critic's value for the player to move."""
        player = node.player
        obs = np.asarray([self.encode(self.observe(node.state, player), player)], np.float32)
        logits, value, _ = forward(self.params, obs, np.zeros((1, self.config.hidden), np.float32))
        legal = [a for a in node.state.legal_actions() if 0 <= a < self.config.num_actions]
        mask = np.zeros(self.config.num_actions, bool)
        mask[legal] = True
        scores = masked_logits(logits[0], mask)
        p = np.exp(scores - scores.max())
        p /= p.sum()
        node.prior = {a: float(p[a]) for a in legal}
        return float(value[0])


class PUCTAgent:
    """Plays the real game with ``PUCT`` on a world model: the real moves replayed into the model by their
    strings (perfect information), the chosen action id played in the real game.

    Args:
      model: the world model (``cwm.model.WorldModel``) whose codec gives the real game's ids.
      puct: the search (its ``observe`` reads model states).
    """

    def __init__(self, model: Any, puct: PUCT):
        self.model, self.puct = model, puct

    def step(self, state: Any) -> int:
        real = state.get_game().new_initial_state()
        mirror = self.model.new_initial_state()
        for action in state.history():
            mirror = mirror.child_from_string(real.action_to_string(real.current_player(), action))
            real.apply_action(action)
        return self.puct.step(mirror)
