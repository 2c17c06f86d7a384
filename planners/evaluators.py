"""Leaf evaluators: what a new leaf of a search tree is worth to each player and, for a prior-guided search,
how promising each of its actions is.

An evaluator's ``evaluate(state, rng)`` is called on a non-terminal state the search has just added to its
tree, and returns ``(values, prior)``: one value per player, and a prior over the state's actions (``None``
from an evaluator that gives none). It draws any randomness from ``rng``, the search's own
``random.Random``, so a seeded search stays reproducible. The family, as in OpenSpiel's ``Evaluator``s:

- ``RolloutEvaluator``: the mean returns of random playouts; a playout the cutoff stops is scored by a value
  function where there is one, else by the returns so far (``planners.rollout.rollout_returns``).
- ``ValueEvaluator``: a value function alone, for every player.
- ``PriorValueEvaluator``: a policy's prior with a value, for PUCT (AlphaZero's network evaluation).

``leaf_evaluator`` picks the first or the second from a search's settings, as ``SearchConfig.leaf`` says.
"""

from __future__ import annotations

import dataclasses
import random
from collections.abc import Callable, Mapping, Sequence
from typing import Any, ClassVar, Protocol

from cwm.model import ModelState
from planners.rollout import model_rollout, rollout_returns, sample_outcome
from planners.settings import DEFAULT_MAX_ROLLOUT_STEPS, ISMCTSSettings, MCTSSettings

# A value function estimates ``player``'s final return from a non-terminal ``state``.
ValueFn = Callable[[Any, int], float]
Prior = Mapping[int, float]  # action id -> prior probability
Evaluation = tuple[Sequence[float], Prior | None]  # (a value per player, the prior or None)
# A policy with a value: ``state -> (prior over its legal actions, value)``, the value the player to move's
# (two players, zero-sum) or one per player.
PriorValueFn = Callable[[Any], tuple[Prior, float | Sequence[float]]]


class Evaluator(Protocol):
    """Values a new leaf: ``evaluate(state, rng) -> (values, prior)`` for a non-terminal state (a method, as
    OpenSpiel's ``Evaluator.evaluate``: a call through ``__call__`` costs a search about 0.14 us a leaf more).

    Attributes:
      priors: whether it gives priors; a search whose evaluator does evaluates its root first, for the
        root's prior (its value is not used), as AlphaZero does.
    """

    @property
    def priors(self) -> bool: ...

    def evaluate(self, state: Any, rng: random.Random) -> Evaluation: ...


@dataclasses.dataclass(frozen=True)
class RolloutEvaluator:
    """The mean returns of ``rollouts`` uniformly random playouts (Kocsis & Szepesvari 2006; the paper's 10).

    Attributes:
      rollouts: playouts per leaf (>= 1).
      max_steps: the cutoff: moves after which a playout stops.
      value_fn: scores a playout the cutoff stopped, at the state it reached; ``None``: the returns so far
        (0 for every player in a zero-sum game that pays only at the end, a draw).
    """

    rollouts: int
    max_steps: int = DEFAULT_MAX_ROLLOUT_STEPS
    value_fn: ValueFn | None = None
    priors: ClassVar[bool] = False

    def evaluate(self, state: Any, rng: random.Random) -> Evaluation:
        if type(state) is ModelState and type(self.rollouts) is int and self.rollouts == 1 and self.value_fn is None:
            return model_rollout(state, rng, self.max_steps), None
        return rollout_returns(state, self.rollouts, rng, self.max_steps, value_fn=self.value_fn), None


@dataclasses.dataclass(frozen=True)
class ValueEvaluator:
    """A value function's value for every player; draws nothing.

    Attributes:
      value_fn: ``(state, player) -> float``.
    """

    value_fn: ValueFn
    priors: ClassVar[bool] = False

    def evaluate(self, state: Any, rng: random.Random) -> Evaluation:
        value_fn = self.value_fn
        return [value_fn(state, p) for p in range(state.num_players())], None


@dataclasses.dataclass(frozen=True)
class PriorValueEvaluator:
    """A policy's prior with a value (AlphaZero, Silver et al. 2017): ``fn(state) -> (prior, value)``.

    A value that is one number is the player to move's in a two-player zero-sum game (the other player's is
    its negation; with more players one number is refused, ``ValueError``); a sequence is one value per
    player. A chance state (a leaf a chance event follows) is
    crossed by drawing outcomes from ``rng`` until a player moves or the game ends, and valued there, with
    no prior (the search draws a chance node's outcomes itself); a game that ends there gives its returns.

    Attributes:
      fn: the policy and value at a decision state.
    """

    fn: PriorValueFn
    priors: ClassVar[bool] = True

    def evaluate(self, state: Any, rng: random.Random) -> Evaluation:
        chance = state.is_chance_node()
        while state.is_chance_node():
            state = state.child(sample_outcome(state.chance_outcomes(), rng))
        if state.is_terminal():
            return [float(r) for r in state.returns()], None
        prior, value = self.fn(state)
        if isinstance(value, (int, float)):
            if state.num_players() != 2:
                raise ValueError(f"a prior-value function gave one number in a {state.num_players()}-player game: "
                                 f"one number is the mover's value only with two players; give one per player")
            player = state.current_player()
            values = [0.0, 0.0]
            values[player], values[1 - player] = value, -value
            return values, None if chance else prior
        return list(value), None if chance else prior


def leaf_evaluator(settings: MCTSSettings | ISMCTSSettings, value_fn: ValueFn | None,
                   max_steps: int) -> RolloutEvaluator | ValueEvaluator:
    """The evaluator a search's settings ask for: the value function at the leaf itself where there is one and
    ``settings.leaf == "value"``, else ``settings.rollouts`` playouts cut at ``max_steps`` (and scored there by
    the value function where there is one)."""
    if value_fn is not None and settings.leaf == "value":
        return ValueEvaluator(value_fn)
    return RolloutEvaluator(settings.rollouts, max_steps, value_fn)
