"""A ground-truth resampler for any game: histories consistent with one player's information, by replay.

A player's information at a state is its *trace*: at every state so far, whether it is to act there (or the
game is over) and what it observes (``observation_string``, else ``information_state_string``), and its own
action wherever it acted. A history is consistent when replaying it in the ground truth gives the same
trace. Consistent histories are weighted by their chance probabilities times the other players' policy
(the player's own policy is the same factor for all of them): by default a uniform one, the posterior of a
player who assumes uniformly random opponents; with ``opponent_policy``, the action probabilities that
policy gives at each state (an opponent model stated by the caller).

Two methods, tried in order for each information state:

* **exact**: the consistent histories are enumerated step by step from the initial state, pruning every
  prefix whose trace already differs (``max_nodes`` expansions at most), and kept per information state, so
  later draws cost a weighted pick and a clone; the next information state of the same player continues
  from the last one's frontier. ``state_key`` lets states that are the same merge into one node (forward
  filtering, backward sampling), for games whose states can be keyed;
* **rejection**: histories are drawn forward from the prior (chance by its probabilities, other players
  uniformly, the player's own actions as taken) and dropped at the first state whose observation differs;
  accepted draws follow the same posterior exactly. At most ``max_steps`` moves per draw: a draw that finds
  nothing within them raises ``ResampleFailure`` (ISMCTS counts it as a failed draw), and so, at once, does
  every later draw at that trace or one extending it, unless a draw there once succeeded.
"""

from __future__ import annotations

import bisect
import dataclasses
import itertools
from collections.abc import Callable, Hashable, Sequence
from typing import Any

import numpy as np
import pyspiel

from cwm.types import CHANCE, CwmError
from planners.info_key import has_information_states

StateKey = Callable[[pyspiel.State], Hashable]
# The other players' policy: (state, acting player) -> (action, probability) pairs over legal actions, the
# actions it never plays left out or given 0. It sees the whole state, so it may be any player's policy of
# its own information.
OpponentPolicy = Callable[[pyspiel.State, int], Sequence[tuple[int, float]]]
_ACTS, _WAITS, _OVER = 0, 1, 2  # the player's role at a state: to act, waiting (chance or another player), game over


class ResampleFailure(CwmError):
    """No history consistent with the player's information was found within the draw's budget."""


@dataclasses.dataclass(frozen=True)
class Trace:
    """One player's information at a state of the real game.

    Attributes:
      tokens: per state of the history, the player's (role, observation text).
      own: per move of the history, the player's action there, or ``None`` where someone else moved.
      final_key: the player's information-state string at the last state, when the engine has them and the
        player acts there (a drawn world must match it exactly; without them the trace is the whole key).
    """

    tokens: tuple[tuple[int, str], ...]
    own: tuple[int | None, ...]
    final_key: str | None

    def extends(self, other: Trace) -> bool:
        n = len(other.tokens)
        return n <= len(self.tokens) and self.tokens[:n] == other.tokens and self.own[: n - 1] == other.own


class _Node:
    """States reached by consistent prefixes (one state, or several merged by ``state_key``): their prior
    mass, and (when merged) the parents and actions that lead here, for backward sampling."""

    __slots__ = ("state", "mass", "parents")

    def __init__(self, state: pyspiel.State, mass: float, parents: list[tuple[_Node, int, float]] | None):
        self.state = state
        self.mass = mass
        self.parents = parents


class Posterior:
    """The exact posterior over the histories consistent with one trace: its frontier of states and masses."""

    def __init__(self, frontier: list[_Node], trace: Trace, expanded: int, player: int, merged: bool):
        self.frontier = frontier  # every consistent state after the trace's last move (before the final check)
        self.trace = trace
        self.expanded = expanded
        self.player = player
        self.merged = merged
        self._outcomes = [n for n in frontier if _final_ok(n.state, player, trace)]
        self._cumulative = list(itertools.accumulate(n.mass for n in self._outcomes))
        if not self._outcomes:
            raise ResampleFailure("no consistent history: the real one should be (is state_key merging states "
                                  "that differ?)")

    @property
    def total(self) -> float:
        return self._cumulative[-1]

    def outcomes(self) -> list[tuple[pyspiel.State, float]]:
        """Each consistent state (one representative per merged node) with its posterior probability."""
        return [(n.state, n.mass / self.total) for n in self._outcomes]

    def distribution(self, feature: Callable[[pyspiel.State], Hashable]) -> dict[Hashable, float]:
        """The posterior of ``feature(state)`` (with merged nodes, a feature of the key alone)."""
        out: dict[Hashable, float] = {}
        for state, p in self.outcomes():
            value = feature(state)
            out[value] = out.get(value, 0.0) + p
        return out

    def sample(self, rng: np.random.Generator) -> pyspiel.State:
        """A fresh state drawn from the posterior (``rng``: one float, and one per merged step)."""
        i = bisect.bisect_right(self._cumulative, float(rng.random()) * self.total)
        node = self._outcomes[min(i, len(self._outcomes) - 1)]
        if not self.merged:
            return node.state.clone()
        actions: list[int] = []
        while node.parents:
            weights = [parent.mass * w for parent, _, w in node.parents]
            j = bisect.bisect_right(list(itertools.accumulate(weights)), float(rng.random()) * sum(weights))
            node, action, _ = node.parents[min(j, len(weights) - 1)]
            actions.append(action)
        state = node.state.get_game().new_initial_state()
        for a in reversed(actions):
            state.apply_action(a)
        return state


class HistoryResampler:
    """Draws ground-truth states consistent with a player's information, for any turn-based game.

    A ``Sampler`` for ``planners.ISMCTS``: ``resampler(state, player, rng)`` returns a fresh state.

    Args:
      max_nodes: states the exact enumeration may expand per information state before it gives up on it
        (the information state is then drawn by rejection).
      max_steps: moves one rejection draw may replay before it fails with ``ResampleFailure``; once a draw
        fails where none succeeded, later draws at that information state, or at later ones of the same
        game, fail at once.
      state_key: merges states with equal keys during enumeration; the key must determine everything the
        state does from then on (``None``: no merging, each history its own node).
      cache_size: information states whose enumeration is kept.
      opponent_policy: the other players' action probabilities (``OpponentPolicy``) that weight consistent
        histories, in the exact enumeration and in the rejection draws alike; ``None``: uniform. With a
        policy, give a ``state_key`` only if equal keys also get equal action probabilities from it.

    Attributes:
      exact_draws, rejection_draws, failed_draws: draws made by each method, and draws that failed.

    Randomness: every draw uses only the ``np.random.Generator`` it is given.
    """

    def __init__(self, *, max_nodes: int = 20_000, max_steps: int = 5_000, state_key: StateKey | None = None,
                 cache_size: int = 64, opponent_policy: OpponentPolicy | None = None):
        self.opponent_policy = opponent_policy
        self.max_nodes = max_nodes
        self.max_steps = max_steps
        self.state_key = state_key
        self.cache_size = cache_size
        self._traces: dict[tuple[int, tuple[int, ...]], Trace] = {}
        self._posteriors: dict[tuple[int, Trace], Posterior | None] = {}
        self._last: dict[int, Posterior] = {}  # per player, its latest posterior (the next one continues it)
        self._too_large: dict[int, Trace] = {}  # per player, a trace too large to enumerate (so is any extension)
        self._hopeless: dict[int, Trace] = {}  # per player, a trace where rejection failed and never succeeded
        self._accepted: dict[tuple[int, Trace], None] = {}  # traces where a rejection draw succeeded
        self.exact_draws = self.rejection_draws = self.failed_draws = 0

    def __call__(self, state: pyspiel.State, player: int, rng: np.random.Generator) -> pyspiel.State:
        try:
            posterior = self.posterior(state, player)
            if posterior is not None:
                world = posterior.sample(rng)
                self.exact_draws += 1
                return world
            world = self._rejection_draw(state.get_game(), self.trace(state, player), player, rng)
            self.rejection_draws += 1
            return world
        except ResampleFailure:
            self.failed_draws += 1
            raise

    def _rejection_draw(self, game: pyspiel.Game, trace: Trace, player: int, rng: np.random.Generator) -> pyspiel.State:
        """A rejection draw; once one fails at a trace where none succeeded, every draw at that trace or one
        extending it fails at once (a longer trace is never likelier: its prefix must match too)."""
        hopeless = self._hopeless.get(player)
        if hopeless is not None and trace.extends(hopeless):
            raise ResampleFailure(f"no history consistent with player {player}'s information: rejection sampling "
                                  f"already failed at an earlier state of this information ({self.max_steps} moves)")
        try:
            world = _reject(game, trace, player, rng, self.max_steps, self.opponent_policy)
        except ResampleFailure:
            if (player, trace) not in self._accepted:
                self._hopeless[player] = trace
            raise
        self._accepted[(player, trace)] = None
        _trim(self._accepted, self.cache_size)
        return world

    def trace(self, state: pyspiel.State, player: int) -> Trace:
        """``player``'s information at ``state``, by replaying its history (remembered per history)."""
        key = (player, tuple(state.history()))
        found = self._traces.get(key)
        if found is None:
            found = self._traces[key] = _trace_of(state, player)
            _trim(self._traces, self.cache_size * 4)
        return found

    def posterior(self, state: pyspiel.State, player: int) -> Posterior | None:
        """The exact posterior at ``player``'s information state, or ``None`` when enumerating it would take
        more than ``max_nodes`` expansions (kept either way)."""
        trace = self.trace(state, player)
        key = (player, trace)
        if key not in self._posteriors:
            self._posteriors[key] = self._enumerate(state.get_game(), trace, player)
            _trim(self._posteriors, self.cache_size)
        return self._posteriors[key]

    def _enumerate(self, game: pyspiel.Game, trace: Trace, player: int) -> Posterior | None:
        too_large = self._too_large.get(player)
        if too_large is not None and trace.extends(too_large):
            return None  # a longer trace expands every node of its prefix's enumeration, and more
        start = self._last.get(player)
        if start is not None and trace.extends(start.trace):
            frontier, expanded, done = start.frontier, start.expanded, len(start.trace.tokens) - 1
        else:
            frontier, expanded, done = [_Node(game.new_initial_state(), 1.0, None)], 0, 0
        merged = self.state_key is not None
        for k in range(done, len(trace.own)):
            layer: dict[Hashable, _Node] = {}
            for node in frontier:
                for action, weight in _moves(node.state, player, trace.own[k], self.opponent_policy):
                    child = node.state.child(action)
                    expanded += 1
                    if _token(child, player) == trace.tokens[k + 1]:
                        _add(layer, child, node, action, weight, self.state_key)
                if expanded > self.max_nodes:
                    self._too_large[player] = trace
                    return None
            frontier = list(layer.values())
        posterior = Posterior(frontier, trace, expanded, player, merged)
        self._last[player] = posterior
        return posterior

def _reject(game: pyspiel.Game, trace: Trace, player: int, rng: np.random.Generator, max_steps: int,
            policy: OpponentPolicy | None = None) -> pyspiel.State:
    """Draws histories forward from the prior, each dropped at its first state that differs from the trace."""
    steps = 0
    while steps < max_steps:
        state = game.new_initial_state()
        for k, own in enumerate(trace.own):
            moves = _moves(state, player, own, policy)
            if not moves:
                break
            state.apply_action(_pick(moves, rng) if len(moves) > 1 else moves[0][0])
            steps += 1
            if _token(state, player) != trace.tokens[k + 1]:
                break
        else:
            if _final_ok(state, player, trace):
                return state
    raise ResampleFailure(f"no history consistent with player {player}'s information in {max_steps} replayed moves "
                          f"of rejection sampling (and too many consistent histories to enumerate)")


def _trace_of(state: pyspiel.State, player: int) -> Trace:
    history = state.history()
    replay = state.get_game().new_initial_state()
    tokens, own = [_token(replay, player)], []
    for a in history:
        own.append(int(a) if replay.current_player() == player else None)
        replay.apply_action(a)
        tokens.append(_token(replay, player))
    final = None
    game = state.get_game()
    if game.get_type().provides_observation_string and state.current_player() == player and (
        has_information_states(game)
    ):
        final = state.information_state_string(player)  # what ISMCTS compares a drawn world by
    return Trace(tuple(tokens), tuple(own), final)


def _token(state: pyspiel.State, player: int) -> tuple[int, str]:
    """The player's role at ``state`` and what it observes there."""
    if state.is_terminal():
        role = _OVER
    else:
        role = _ACTS if state.current_player() == player else _WAITS
    if state.get_game().get_type().provides_observation_string:
        return role, state.observation_string(player)
    return role, state.information_state_string(player)


def _moves(state: pyspiel.State, player: int, own: int | None,
           policy: OpponentPolicy | None = None) -> list[tuple[int, float]]:
    """The moves a consistent history may make at ``state`` with their prior weights: the player's own action
    where it acted, chance by its probabilities, another player by ``policy`` (default uniformly)."""
    if state.is_terminal():
        return []
    current = state.current_player()
    if (current == player) != (own is not None):
        return []
    if own is not None:
        return [(own, 1.0)] if own in state.legal_actions() else []
    if current == CHANCE:
        return [(int(a), float(p)) for a, p in state.chance_outcomes() if p > 0]
    legal = state.legal_actions()
    if policy is not None:
        return _policy_moves(policy, state, current, legal)
    return [(int(a), 1.0 / len(legal)) for a in legal]


def _policy_moves(policy: OpponentPolicy, state: pyspiel.State, current: int,
                  legal: Sequence[int]) -> list[tuple[int, float]]:
    """The actions ``policy`` plays at ``state`` with their probabilities (those above 0).

    Raises:
      ValueError: an action that is not legal, or a probability that is not a finite number in [0, 1].
    """
    moves = []
    for action, p in policy(state, current):
        if int(action) not in legal:
            raise ValueError(f"the opponent policy gives probability to action {action}, not legal where player "
                             f"{current} acts")
        if not 0.0 <= float(p) <= 1.0:
            raise ValueError(f"the opponent policy gives action {action} the probability {p!r}, not one in [0, 1]")
        if p > 0:
            moves.append((int(action), float(p)))
    return moves


def _final_ok(state: pyspiel.State, player: int, trace: Trace) -> bool:
    return trace.final_key is None or state.information_state_string(player) == trace.final_key


def _add(layer: dict[Hashable, _Node], child: pyspiel.State, parent: _Node, action: int, weight: float,
         state_key: StateKey | None) -> None:
    mass = parent.mass * weight
    if state_key is None:
        layer[len(layer)] = _Node(child, mass, None)
        return
    key = state_key(child)
    node = layer.get(key)
    if node is None:
        node = layer[key] = _Node(child, 0.0, [])
    node.mass += mass
    assert node.parents is not None
    node.parents.append((parent, action, weight))


def _pick(moves: list[tuple[int, float]], rng: np.random.Generator) -> int:
    r = float(rng.random()) * sum(w for _, w in moves)
    for action, weight in moves:
        r -= weight
        if r < 0:
            return action
    return moves[-1][0]


def _trim(cache: dict[Any, Any], size: int) -> None:
    while len(cache) > size:
        cache.pop(next(iter(cache)))
