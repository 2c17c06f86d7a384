"""The settings of a synthesis run, one frozen object for every target (world model, inference, joint, value,
encoder, fast twin): the budget, the strategy and its tree and request settings, the seed, the training and held-out
sets, what the prompts show, and the per-call limits of the checks. ``SynthesisSettings.of(target)`` gives a
target's defaults (the value and encoder targets spend 20 calls, a fast twin 10, an inference prompt lists 40,000 characters
of views, ...); an entry point writes the settings it ran with, whole, into its run directory
(``settings.json``) next to the run's resume key (``config.json``).
"""

from __future__ import annotations

import dataclasses
import math
import warnings
from typing import Any

from cwm.checks.encoder import DEFAULT_CALL_S as ENCODER_CALL_S
from cwm.checks.value import DEFAULT_CALL_S as VALUE_CALL_S
from cwm.synthesis import thompson
from cwm.synthesis.encoder_target import DEFAULT_SHOWN
from cwm.synthesis.held_out import DEFAULT_TRANSITIONS
from cwm.synthesis.inference_target import VIEW_CHARS
from cwm.synthesis.render import EXAMPLE_CHARS
from cwm.synthesis.tree import MIN_GAIN, MIN_RATE
from cwm.synthesis.value_target import DEFAULT_CANDIDATES
from cwm.types import JSON, UsageError

STRATEGIES: tuple[str, ...] = ("tree", "conversation")
TARGETS: tuple[str, ...] = ("world_model", "inference", "value", "encoder", "fast", "jax")
DECKS = ("open", "closed")
HIDDEN = ("history", "state")


@dataclasses.dataclass(frozen=True)
class TreeSettings:
    """Hyperparameters of the tree search (see ``cwm.synthesis.tree``): the paper's, except that β counts
    refinements by default.

    Attributes:
      c: concentration C of the Beta(1 + C·h, 1 + C·(1 − h)) beliefs.
      count_refinements: add a node's refinement count to β (REx; the default), so a node whose
        refinements keep failing is chosen less often. ``False`` is the paper's form (``--paper-beta``).
      min_rate: the smallest pass rate worth refining.
      min_gain: the improvement over its parent a refinement needs to be refined itself, beyond being better
        (default 0: any improvement; the paper: 0.01).
    """

    c: float = thompson.DEFAULT_C
    count_refinements: bool = True
    min_rate: float = MIN_RATE
    min_gain: float = MIN_GAIN

    def __post_init__(self) -> None:
        # refused here, before any run directory or paid call exists (a bad C would fail after the first call)
        if not self.c >= 0:
            raise UsageError(f"TreeSettings: the concentration c must be >= 0, got {self.c}")
        for name, value in (("min_rate", self.min_rate), ("min_gain", self.min_gain)):
            if not 0.0 <= value <= 1.0:
                raise UsageError(f"TreeSettings: {name} must be in [0, 1], got {value}")


# Training games are chosen from this many times as many games of random play (``SynthesisSettings.train_pool``).
DEFAULT_TRAIN_POOL = 4


@dataclasses.dataclass(frozen=True)
class RequestSettings:
    """How each LLM call is made.

    Attributes:
      temperature: sampling temperature.
      max_output_tokens: cap on each reply.
      thinking_budget: reasoning tokens where the provider supports it (``None``: its default).
      candidates_per_call: replies asked of one call (``Request.n``); every program in them is a node.
    """

    temperature: float = 1.0
    max_output_tokens: int = 16384
    thinking_budget: int | None = None
    candidates_per_call: int = 1

    def __post_init__(self) -> None:
        if not self.temperature >= 0:
            raise UsageError(f"RequestSettings: temperature must be >= 0, got {self.temperature}")
        if self.max_output_tokens < 1:
            raise UsageError(f"RequestSettings: max_output_tokens must be >= 1, got {self.max_output_tokens}")
        if self.candidates_per_call < 1:
            raise UsageError(f"RequestSettings: candidates_per_call must be >= 1, got {self.candidates_per_call}")

    def request_options(self) -> dict[str, Any]:
        return {"temperature": self.temperature, "max_output_tokens": self.max_output_tokens,
                "thinking_budget": self.thinking_budget, "n": self.candidates_per_call}


@dataclasses.dataclass(frozen=True)
class SynthesisSettings:
    """How a synthesis runs (every field keyword-only in spirit; build one with ``SynthesisSettings.of``).

    Attributes:
      strategy: ``"tree"`` (Thompson-sampled tree search) or ``"conversation"`` (one chat).
      budget: the most LLM calls (paper: 500; the value and encoder targets default to 20).
      seed: seeds the training games (the pool of ``train_pool * num_train`` games: seeds seed, seed + 1,
        ...), the held-out games, the search and the requests.
      concurrency: LLM calls in flight at once (tree search).
      tree: tree-search hyperparameters.
      request: LLM request settings.
      isolate: check candidates in the sandbox (forked, limited processes); off only for trusted replies.
      num_train: training games of uniformly random play (paper: 5).
      train_pool: the training games are chosen from ``train_pool * num_train`` games of random play (seeds
        ``seed`` on) to show every kind of event the pool holds (``cwm.games.event_kinds.covering_games``); 1: the
        first ``num_train`` games.
      num_test: held-out games. World model: ``None`` (default) a set of ``test_transitions`` transitions
        shared through the cache, ``0`` none, ``N`` exactly N games; inference: N games of random play
        (default 100), ``0`` none.
      test_transitions: a world model's held-out set, in transitions (paper: 10,000).
      test_mcts_simulations: simulations per move of the held-out set's MCTS player (``None``: by the game).
      test_executor: where a transition-sized held-out set's games are played (``cwm.executors``).
      examples_per_type: a world model's example tests of each type in the first prompt (paper: 5).
      max_steps_shown: cut each example game in a world-model prompt after this many steps (``None``: whole).
      max_example_chars: list whole example games (world model, default 70,000) or player views (inference,
        default 40,000) while they fit in this many characters (``None``: all of them).
      deck: inference: ``"open"`` (an inference function for a given world model) or ``"closed"`` (the
        joint target: a world model and its inference written from one player's views).
      hidden: inference, open deck: ``"history"`` (``resample_history``) or ``"state"`` (``resample_state``).
      call_s: CPU seconds one call of a value function (default 0.01) or an encoder (0.005) may use.
      candidates: value functions asked for in one prompt and sought before the tournament.
      shown: example observations in an encoder prompt.
    """

    strategy: str = "tree"
    budget: int = 500
    seed: int = 0
    concurrency: int = 1
    tree: TreeSettings = TreeSettings()
    request: RequestSettings = RequestSettings()
    isolate: bool = True
    num_train: int = 5
    train_pool: int = DEFAULT_TRAIN_POOL
    num_test: int | None = None
    test_transitions: int = DEFAULT_TRANSITIONS
    test_mcts_simulations: int | None = None
    test_executor: str = "local"
    examples_per_type: int = 5
    max_steps_shown: int | None = None
    max_example_chars: int | None = EXAMPLE_CHARS
    deck: str = "open"
    hidden: str = "history"
    call_s: float | None = None
    candidates: int = DEFAULT_CANDIDATES
    shown: int = DEFAULT_SHOWN

    @classmethod
    def of(cls, target: str, **changes: Any) -> SynthesisSettings:
        """The settings of ``target`` (one of ``TARGETS``) with its own defaults, then ``changes``.

        Raises:
          UsageError: an unknown target or setting name.
        """
        if target not in TARGETS:
            raise UsageError(f"unknown synthesis target {target!r}; expected one of {list(TARGETS)}")
        names = {f.name for f in dataclasses.fields(cls)}
        unknown = sorted(set(changes) - names)
        if unknown:
            raise UsageError(f"unknown synthesis setting(s) {unknown}; expected some of {sorted(names)}")
        return cls(**{**_TARGET_DEFAULTS[target], **changes})

    def replace(self, **changes: Any) -> SynthesisSettings:
        """A copy with ``changes`` (``dataclasses.replace``)."""
        return dataclasses.replace(self, **changes)

    @property
    def per_call_s(self) -> float:
        """``call_s``, which a value or an encoder synthesis needs."""
        if self.call_s is None:
            raise UsageError("call_s is unset: build the settings with SynthesisSettings.of('value' or 'encoder')")
        return float(self.call_s)

    def problems(self) -> list[str]:
        """What is out of range, one phrase each (empty when the settings are usable)."""
        out = [f"unknown strategy {self.strategy!r}; expected one of {list(STRATEGIES)}"
               for _ in [0] if self.strategy not in STRATEGIES]
        out += [f"deck must be one of {list(DECKS)}, got {self.deck!r}" for _ in [0] if self.deck not in DECKS]
        out += [f"hidden must be one of {list(HIDDEN)}, got {self.hidden!r}" for _ in [0] if self.hidden not in HIDDEN]
        if self.hidden != "history" and self.deck != "open":
            out.append("the hidden-state variant (hidden='state') is open deck only")
        out += [f"{name} must be an integer >= {low}, got {value!r}" for name, value, low in self._counts()
                if value is not None and not (type(value) is int and value >= low)]
        if self.call_s is not None and not (type(self.call_s) in (int, float) and math.isfinite(self.call_s)
                                            and self.call_s > 0):
            out.append(f"call_s must be a number of seconds > 0, got {self.call_s!r}")
        if type(self.isolate) is not bool:
            out.append(f"isolate must be true or false, got {self.isolate!r}")
        return out

    def _counts(self) -> list[tuple[str, Any, int]]:
        return [("budget", self.budget, 1), ("concurrency", self.concurrency, 1), ("num_train", self.num_train, 1),
                ("train_pool", self.train_pool, 1),
                ("num_test", self.num_test, 0), ("test_transitions", self.test_transitions, 1),
                ("test_mcts_simulations", self.test_mcts_simulations, 1), ("seed", self.seed, 0),
                ("examples_per_type", self.examples_per_type, 1), ("max_steps_shown", self.max_steps_shown, 1),
                ("max_example_chars", self.max_example_chars, 1), ("candidates", self.candidates, 1),
                ("shown", self.shown, 1)]

    def check(self, who: str) -> SynthesisSettings:
        """The settings themselves when usable.

        Raises:
          UsageError: naming ``who`` and every problem (before any run directory is touched: a directory
            created with bad settings would refuse the corrected rerun, and could hold a paid call).
        """
        problems = self.problems()
        if problems:
            raise UsageError(f"{who}: " + "; ".join(problems))
        return self

    def to_json(self) -> dict[str, JSON]:
        return dataclasses.asdict(self)

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> SynthesisSettings:
        """The settings ``to_json`` wrote; unknown keys are refused (a typo must not pass)."""
        names = {f.name for f in dataclasses.fields(cls)}
        unknown = sorted(set(data) - names)
        if unknown:
            raise UsageError(f"synthesis settings: unknown keys {unknown}")
        nested = {"tree": TreeSettings(**data.get("tree", {})), "request": RequestSettings(**data.get("request", {}))}
        return cls(**{**data, **nested})


_TARGET_DEFAULTS: dict[str, dict[str, Any]] = {
    "world_model": {},
    "inference": {"num_test": 100, "max_example_chars": VIEW_CHARS},
    "value": {"budget": 20, "call_s": VALUE_CALL_S},
    "encoder": {"budget": 20, "call_s": ENCODER_CALL_S},
    "fast": {"budget": 10},
    "jax": {"budget": 10},
}


def settings_from(target: str, settings: SynthesisSettings | None, legacy: dict[str, Any], who: str) -> SynthesisSettings:
    """The settings an entry point runs with: ``settings`` (default: the target's), or the target's defaults
    with the keyword arguments of the former signature (``budget=``, ``seed=``, ... : deprecated, with a
    ``DeprecationWarning``), checked.

    Raises:
      UsageError: both ``settings`` and former keywords, an unknown keyword, or a setting out of range.
    """
    if legacy:
        if settings is not None:
            raise UsageError(f"{who}: pass either settings= or the former keyword arguments {sorted(legacy)}, not both")
        warnings.warn(f"{who}({', '.join(f'{k}=' for k in sorted(legacy))}...) is deprecated: pass "
                      f"settings=SynthesisSettings.of({target!r}, ...)", DeprecationWarning, stacklevel=3)
        settings = SynthesisSettings.of(target, **{k: v for k, v in legacy.items() if v is not None or k in _NONE_OK})
    return (settings or SynthesisSettings.of(target)).check(who)


# former keywords whose None is a value, not "the default" (a tree=None or request=None meant the default)
_NONE_OK = frozenset({"num_test", "test_mcts_simulations", "max_steps_shown", "max_example_chars", "call_s"})


__all__ = ["DEFAULT_CANDIDATES", "DEFAULT_SHOWN", "DEFAULT_TRAIN_POOL", "DEFAULT_TRANSITIONS", "HIDDEN", "STRATEGIES", "TARGETS",
           "VIEW_CHARS", "RequestSettings", "SynthesisSettings", "TreeSettings", "settings_from"]
