"""``SearchConfig``: the one record of search settings, passed unchanged from the command line to the agents
and written into every run record; it gives each search its own settings (``mcts()``, ``ismcts()``)."""

from __future__ import annotations

import dataclasses
import math
from typing import Any

from cwm.types import JSON, UsageError
from planners.settings import (
    DEFAULT_MAX_ROLLOUT_STEPS,
    LEAVES,
    ISMCTSSettings,
    MCTSSettings,
    failed,
    flag_check,
    leaf_checks,
    raise_problems,
    rollout_cap,
    sample_tries_check,
    search_checks,
    seed_check,
)

__all__ = ["DEFAULT_MAX_ROLLOUT_STEPS", "DEFAULT_SEARCH", "LEAVES", "SearchConfig"]


@dataclasses.dataclass(frozen=True)
class SearchConfig:
    """Settings of a tree search (MCTS or ISMCTS), defaults from the literature and the paper.

    The record the command line builds, the agents receive and every run record stores (its ``to_json`` is
    hashed into arena match keys, so its fields stay as they are). A search takes its own part of it:
    ``mcts()`` (``planners.MCTSSettings``) or ``ismcts()`` (``planners.ISMCTSSettings``).

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
      call_time_s: CPU seconds (of its thread) one model call may take when a model runs in-process (``--trust``);
        hardened planning workers use the arena's per-move budget instead. Not a search setting: the
        searches never read it.
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

    def mcts(self) -> MCTSSettings:
        """The settings ``planners.MCTS`` reads."""
        return MCTSSettings(num_simulations=self.num_simulations, uct_c=self.uct_c, rollouts=self.rollouts,
                            max_rollout_steps=self.max_rollout_steps, leaf=self.leaf, solve=self.solve,
                            seed=self.seed)

    def ismcts(self) -> ISMCTSSettings:
        """The settings ``planners.ISMCTS`` reads."""
        return ISMCTSSettings(num_simulations=self.num_simulations, uct_c=self.uct_c, rollouts=self.rollouts,
                              max_rollout_steps=self.max_rollout_steps, leaf=self.leaf,
                              max_sample_tries=self.max_sample_tries,
                              availability_counts=self.availability_counts, seed=self.seed)

    def problems(self, *, value_fn: bool = False) -> list[str]:
        """What is out of range, one phrase each (empty when the config is usable); ``value_fn``: the search
        has a value function, so rollouts may be 0 when it values the leaves (``leaf="value"``)."""
        checks = search_checks(self.num_simulations, self.uct_c, constant="UCT")
        checks += leaf_checks(self.rollouts, self.leaf, self.max_rollout_steps,
                              by_value=value_fn and self.leaf == "value")
        checks += [sample_tries_check(self.max_sample_tries),
                   ("the per-call time must be > 0 seconds", self.call_time_s,
                    type(self.call_time_s) in (int, float) and math.isfinite(self.call_time_s)
                    and self.call_time_s > 0),
                   flag_check("solve", self.solve), flag_check("availability_counts", self.availability_counts),
                   seed_check(self.seed)]
        return failed(checks)

    def check(self, who: str, *, value_fn: bool = False) -> None:
        """Raises ``UsageError`` naming ``who`` and every problem (``problems``)."""
        raise_problems(who, self.problems(value_fn=value_fn))

    def rollout_cap(self, game_max_length: int | None) -> int:
        """The rollout step cap for a game whose maximum length is ``game_max_length`` (``None``: unknown)."""
        return rollout_cap(self.max_rollout_steps, game_max_length)

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


DEFAULT_SEARCH = SearchConfig()  # the defaults, as one shared (frozen) value
