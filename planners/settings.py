"""Settings of each tree search: frozen, keyword-only dataclasses with the literature's defaults, checked by
``problems`` (one phrase per setting out of range) and ``check`` (a ``UsageError`` naming every problem).

``MCTSSettings`` (UCT, rollouts or value leaves, MCTS-Solver), ``ISMCTSSettings`` (information-set MCTS over
sampled worlds) and ``PUCTSettings`` (a prior-guided search, AlphaZero's form). ``planners.SearchConfig``, the
one record the command line, agents and arena pass around, gives the first two (``config.mcts()``,
``config.ismcts()``) and checks its own fields with the same phrases.
"""

from __future__ import annotations

import dataclasses
import math
from typing import Any

from cwm.types import UsageError

DEFAULT_MAX_ROLLOUT_STEPS = 10_000  # a rollout's cap when the game's own maximum length is unknown
LEAVES = ("value", "rollout")  # how a search with a value function values a new leaf (``leaf``)
BACKUPS = ("maxn", "paranoid")  # what each player is taken to maximise (``backup``; ``planners.search``)

Check = tuple[str, Any, bool]  # (what must hold, the value given, whether it holds)


def search_checks(num_simulations: Any, exploration: Any, *, constant: str) -> list[Check]:
    """The checks every search shares: simulations and the exploration constant (named ``constant``)."""
    return [("simulations must be >= 1", num_simulations, _int(num_simulations) and num_simulations >= 1),
            (f"the {constant} constant must be a finite number >= 0", exploration,
             _number(exploration) and exploration >= 0)]


def leaf_checks(rollouts: Any, leaf: Any, max_rollout_steps: Any, *, by_value: bool) -> list[Check]:
    """The checks of a rollout or value-leaf evaluator (``by_value``: a value function values the leaves, so
    rollouts may be 0)."""
    return [("rollouts must be >= 1" if not by_value else "rollouts must be >= 0", rollouts,
             _int(rollouts) and rollouts >= (0 if by_value else 1)),
            (f"the leaf evaluation must be one of {list(LEAVES)}", leaf, leaf in LEAVES),
            ("max rollout steps must be >= 1", max_rollout_steps,
             max_rollout_steps is None or (_int(max_rollout_steps) and max_rollout_steps >= 1))]


def flag_check(name: str, value: Any) -> Check:
    return (f"{name} must be true or false", value, type(value) is bool)


def seed_check(seed: Any) -> Check:
    return ("the seed must be an int or None", seed, seed is None or _int(seed))


def backup_check(value: Any) -> Check:
    return (f"the backup must be one of {list(BACKUPS)}", value, value in BACKUPS)


def sample_tries_check(value: Any) -> Check:
    return ("sample tries must be >= 1", value, _int(value) and value >= 1)


def failed(checks: list[Check]) -> list[str]:
    """The phrases of the checks that fail, each with the value given."""
    return [f"{what} (got {value!r})" for what, value, ok in checks if not ok]


def raise_problems(who: str, problems: list[str]) -> None:
    """Raises ``UsageError`` naming ``who`` and every problem, if there is any."""
    if problems:
        raise UsageError(f"{who}: " + "; ".join(problems))


def rollout_cap(max_rollout_steps: int | None, game_max_length: int | None) -> int:
    """A rollout's step cap: ``max_rollout_steps`` where set, else the game's maximum length where it is known
    (``game_max_length``), else ``DEFAULT_MAX_ROLLOUT_STEPS``."""
    if max_rollout_steps is not None:
        return max_rollout_steps
    return game_max_length if game_max_length and game_max_length > 0 else DEFAULT_MAX_ROLLOUT_STEPS


@dataclasses.dataclass(frozen=True, kw_only=True)
class MCTSSettings:
    """UCT MCTS (Kocsis & Szepesvari 2006) with random-rollout or value-function leaves.

    Attributes:
      num_simulations: simulations per move (the paper's 1000).
      uct_c: UCB1 exploration constant (2.0; the paper does not give one).
      rollouts: uniformly random playouts averaged per new leaf (the paper's 10); may be 0 when a value
        function values the leaves.
      max_rollout_steps: the rollout cutoff (``None``: the game's maximum length where known, else
        ``DEFAULT_MAX_ROLLOUT_STEPS``); a playout stopped there is scored by the value function where the
        search has one, else by the returns so far (see ``planners.rollout.rollout_returns``).
      leaf: with a value function, ``"value"`` values a new leaf by it, ``"rollout"`` by playouts scored by it
        at the cutoff; without one every leaf is rolled out.
      solve: MCTS-Solver (Winands et al. 2008) in OpenSpiel's max^n form, OpenSpiel's default.
      backup: with more than two players, what the others are taken to do: ``"maxn"`` (default: each
        maximises its own return, Luckhardt & Irani 1986) or ``"paranoid"`` (all minimise the root player's,
        Sturtevant & Korf 2000); the two are one search in a two-player zero-sum game
        (``planners.search.TreeSearch``).
      seed: the seed when the search is given none.
    """

    num_simulations: int = 1000
    uct_c: float = 2.0
    rollouts: int = 10
    max_rollout_steps: int | None = None
    leaf: str = "value"
    solve: bool = True
    seed: int | None = None
    backup: str = "maxn"

    def problems(self, *, value_fn: bool = False) -> list[str]:
        """What is out of range, one phrase each (``value_fn``: the search has a value function)."""
        checks = search_checks(self.num_simulations, self.uct_c, constant="UCT")
        checks += leaf_checks(self.rollouts, self.leaf, self.max_rollout_steps,
                              by_value=value_fn and self.leaf == "value")
        return failed(checks + [flag_check("solve", self.solve), seed_check(self.seed), backup_check(self.backup)])

    def check(self, who: str, *, value_fn: bool = False) -> None:
        """Raises ``UsageError`` naming ``who`` and every problem (``problems``)."""
        raise_problems(who, self.problems(value_fn=value_fn))

    def rollout_cap(self, game_max_length: int | None) -> int:
        """The rollout step cap for a game whose maximum length is ``game_max_length`` (``None``: unknown)."""
        return rollout_cap(self.max_rollout_steps, game_max_length)


@dataclasses.dataclass(frozen=True, kw_only=True)
class ISMCTSSettings:
    """Information-set MCTS (Cowling, Powley & Whitehouse 2012) over sampled worlds.

    Attributes:
      num_simulations, uct_c, rollouts, max_rollout_steps, leaf, seed: as in ``MCTSSettings``.
      max_sample_tries: draws per simulation before the search gives up (the paper's 10).
      availability_counts: an action's exploration term counts the simulations in which it was legal rather
        than the node's visits (Cowling et al.); off, as in OpenSpiel.
      backup: as in ``MCTSSettings``: each actor's statistics hold its own return (``"maxn"``) or, for every
        player but the searching one, the searching player's return negated (``"paranoid"``).
    """

    num_simulations: int = 1000
    uct_c: float = 2.0
    rollouts: int = 10
    max_rollout_steps: int | None = None
    leaf: str = "value"
    max_sample_tries: int = 10
    availability_counts: bool = False
    seed: int | None = None
    backup: str = "maxn"

    def problems(self, *, value_fn: bool = False) -> list[str]:
        """What is out of range, one phrase each (``value_fn``: the search has a value function)."""
        checks = search_checks(self.num_simulations, self.uct_c, constant="UCT")
        checks += leaf_checks(self.rollouts, self.leaf, self.max_rollout_steps,
                              by_value=value_fn and self.leaf == "value")
        checks += [sample_tries_check(self.max_sample_tries),
                   flag_check("availability_counts", self.availability_counts), seed_check(self.seed),
                   backup_check(self.backup)]
        return failed(checks)

    def check(self, who: str, *, value_fn: bool = False) -> None:
        """Raises ``UsageError`` naming ``who`` and every problem (``problems``)."""
        raise_problems(who, self.problems(value_fn=value_fn))

    def rollout_cap(self, game_max_length: int | None) -> int:
        """The rollout step cap for a game whose maximum length is ``game_max_length`` (``None``: unknown)."""
        return rollout_cap(self.max_rollout_steps, game_max_length)


@dataclasses.dataclass(frozen=True, kw_only=True)
class PUCTSettings:
    """A prior-guided search in AlphaZero's form (Silver et al. 2017, 2018): PUCT selection, leaves valued by
    an evaluator that also gives the prior.

    Attributes:
      num_simulations: simulations per move (100: a policy prior makes each count for more than a rollout).
      c_puct: the exploration constant (AlphaZero's chess and shogi value, 1.25).
      seed: the seed when the search is given none (chance outcomes in the tree).
    """

    num_simulations: int = 100
    c_puct: float = 1.25
    seed: int | None = None

    def problems(self) -> list[str]:
        """What is out of range, one phrase each."""
        return failed(search_checks(self.num_simulations, self.c_puct, constant="PUCT") + [seed_check(self.seed)])

    def check(self, who: str) -> None:
        """Raises ``UsageError`` naming ``who`` and every problem (``problems``)."""
        raise_problems(who, self.problems())


def _int(value: Any) -> bool:
    return type(value) is int


def _number(value: Any) -> bool:
    return type(value) in (int, float) and math.isfinite(value)
