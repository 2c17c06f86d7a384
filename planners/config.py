"""``SearchConfig``: the one set of search settings, passed unchanged from the command line to the agents and
on to ``MCTS``/``ISMCTS``, and written into every run record."""

from __future__ import annotations

import dataclasses
import math
from typing import Any

from cwm.types import JSON, UsageError

DEFAULT_MAX_ROLLOUT_STEPS = 10_000  # a rollout's cap when the game's own maximum length is unknown
LEAVES = ("value", "rollout")  # how a search with a value function values a new leaf (``SearchConfig.leaf``)


@dataclasses.dataclass(frozen=True)
class SearchConfig:
    """Settings of a tree search (MCTS or ISMCTS), defaults from the literature and the paper.

    Attributes:
      num_simulations: simulations per move (paper: 1000).
      uct_c: UCB1 exploration constant (default 2.0; the paper does not give one).
      rollouts: uniformly random rollouts averaged per leaf without a value function (paper: 10).
      max_rollout_steps: the rollout cutoff: moves after which a rollout stops and is scored by the value
        function at the state it reached when the search has one, else by the game's neutral value, the
        returns accumulated so far (0 in a zero-sum game that pays only at the end: a draw; see
        ``planners.rollout.rollout_returns``). ``None``: the game's maximum length where the game knows
        it, else ``DEFAULT_MAX_ROLLOUT_STEPS``. A cutoff of tens of moves makes a long game's leaf cheap,
        at a cost in strength the docs measure (docs/planners.md).
      leaf: how a search that has a value function values a new leaf: ``"value"`` (default) by the value
        function for every player, no rollout (``rollouts`` may then be 0); ``"rollout"`` by ``rollouts``
        random playouts, each stopped at the cutoff (``max_rollout_steps``) and scored there by the value
        function (a playout that ends first is scored by the game). Without a value function every leaf is
        rolled out and this setting changes nothing.
      solve: back up proven outcomes (MCTS-Solver, OpenSpiel's default); MCTS only.
      max_sample_tries: ISMCTS draws per simulation before the search gives up (paper: 10).
      availability_counts: ISMCTS: an action's exploration term counts the simulations in which it was
        legal, not all visits of the node (Cowling et al. 2012); off by default, as in OpenSpiel.
      seed: the search's seed when the caller passes none (agents in a tournament get one per match).
      call_time_s: wall-clock seconds one model call may take when a model runs in-process (``--trust``);
        hardened planning workers use the arena's per-move budget instead.
    """

    num_simulations: int = 1000
    uct_c: float = 2.0
    rollouts: int = 10
    max_rollout_steps: int | None = None
    leaf: str = "value"
    solve: bool = True
    max_sample_tries: int = 10
    availability_counts: bool = False
    seed: int | None = None
    call_time_s: float = 2.0

    def problems(self, *, value_fn: bool = False) -> list[str]:
        """What is out of range, one phrase each (empty when the config is usable); ``value_fn``: the search
        has a value function, so rollouts may be 0 when it values the leaves (``leaf="value"``)."""
        by_value = value_fn and self.leaf == "value"
        checks = [
            ("simulations must be >= 1", self.num_simulations, _int(self.num_simulations) and self.num_simulations >= 1),
            ("the UCT constant must be a finite number >= 0", self.uct_c, _number(self.uct_c) and self.uct_c >= 0),
            ("rollouts must be >= 1" if not by_value else "rollouts must be >= 0", self.rollouts,
             _int(self.rollouts) and self.rollouts >= (0 if by_value else 1)),
            (f"the leaf evaluation must be one of {list(LEAVES)}", self.leaf, self.leaf in LEAVES),
            ("max rollout steps must be >= 1", self.max_rollout_steps,
             self.max_rollout_steps is None or (_int(self.max_rollout_steps) and self.max_rollout_steps >= 1)),
            ("sample tries must be >= 1", self.max_sample_tries, _int(self.max_sample_tries) and self.max_sample_tries >= 1),
            ("the per-call time must be > 0 seconds", self.call_time_s, _number(self.call_time_s) and self.call_time_s > 0),
            ("solve must be true or false", self.solve, type(self.solve) is bool),
            ("availability_counts must be true or false", self.availability_counts,
             type(self.availability_counts) is bool),
            ("the seed must be an int or None", self.seed, self.seed is None or _int(self.seed)),
        ]
        return [f"{what} (got {value!r})" for what, value, ok in checks if not ok]

    def check(self, who: str, *, value_fn: bool = False) -> None:
        """Raises ``UsageError`` naming ``who`` and every problem (``problems``)."""
        problems = self.problems(value_fn=value_fn)
        if problems:
            raise UsageError(f"{who}: " + "; ".join(problems))

    def rollout_cap(self, game_max_length: int | None) -> int:
        """The rollout step cap for a game whose maximum length is ``game_max_length`` (``None``: unknown)."""
        if self.max_rollout_steps is not None:
            return self.max_rollout_steps
        return game_max_length if game_max_length and game_max_length > 0 else DEFAULT_MAX_ROLLOUT_STEPS

    def to_json(self) -> dict[str, JSON]:
        return dataclasses.asdict(self)

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> SearchConfig:
        """The config a ``to_json`` dict describes; unknown keys are refused (a typo must not pass)."""
        names = {f.name for f in dataclasses.fields(cls)}
        unknown = set(data) - names
        if unknown:
            raise UsageError(f"search config: unknown settings {sorted(unknown)}")
        return cls(**data)


def _int(value: Any) -> bool:
    return type(value) is int


def _number(value: Any) -> bool:
    return type(value) in (int, float) and math.isfinite(value)


DEFAULT_SEARCH = SearchConfig()  # the defaults, as one shared (frozen) value
