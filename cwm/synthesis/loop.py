"""The refinement loop for any target: pick a strategy, run it on a journaled engine, return the engine.

``run_search`` is what ``synthesize_world_model`` (and later the inference and value synthesis) call;
it knows nothing about games.
"""

from __future__ import annotations

import dataclasses
from typing import Any, Literal

from cwm.llm import Client
from cwm.synthesis import thompson
from cwm.synthesis.conversation import conversation
from cwm.synthesis.engine import Engine, Progress
from cwm.synthesis.store import RunStore
from cwm.synthesis.target import Target
from cwm.synthesis.tree import MIN_GAIN, MIN_RATE, tree_search
from cwm.types import UsageError

Strategy = Literal["tree", "conversation"]
STRATEGIES: tuple[str, ...] = ("tree", "conversation")


@dataclasses.dataclass(frozen=True)
class TreeSettings:
    """Hyperparameters of the tree search (see ``cwm.synthesis.tree``): the paper's, except that β counts
    refinements by default.

    Attributes:
      c: concentration C of the Beta(1 + C·h, 1 + C·(1 − h)) beliefs.
      count_refinements: add a node's refinement count to β (REx; the default), so a node whose
        refinements keep failing is chosen less often. ``False`` is the paper's form (``--paper-beta``).
      min_rate: the smallest pass rate worth refining.
      min_gain: the improvement over its parent a refinement needs to be refined itself.
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


def run_search(
    target: Target,
    llm: Client,
    store: RunStore,
    *,
    strategy: Strategy = "tree",
    budget: int = 500,
    seed: int = 0,
    concurrency: int = 1,
    tree: TreeSettings = TreeSettings(),
    request: RequestSettings = RequestSettings(),
    progress: Progress | None = None,
) -> Engine:
    """Refines programs for ``target`` until one passes every check or ``budget`` LLM calls are made.

    Args:
      target: what is synthesised.
      llm: the LLM client.
      store: the run directory (a journal there is replayed instead of calling the LLM).
      strategy: "tree" (Thompson-sampled tree search) or "conversation" (one chat).
      budget: the most LLM calls, journaled ones included (paper: 500).
      seed: seeds the tree sampler and the requests' provider seeds.
      concurrency: LLM calls in flight at once (tree search only; the conversation is sequential).
        The run is deterministic for a fixed seed and concurrency.
      tree: tree-search hyperparameters.
      request: LLM request settings.
      progress: called with the engine after each processed call.

    Returns:
      The engine, holding every node, report and the accuracy curve.

    Raises:
      ValueError: an unknown strategy, or a budget/concurrency below 1.
      LLMError: the client failed for good (the run directory keeps what was done; rerun to resume).
    """
    if strategy not in STRATEGIES:
        raise ValueError(f"unknown synthesis strategy {strategy!r}; expected one of {STRATEGIES}")
    engine = Engine(target, llm, store, budget=budget, seed=seed,
                    concurrency=concurrency if strategy == "tree" else 1,
                    request_options=request.request_options(), progress=progress)
    if strategy == "tree":
        tree_search(engine, seed=seed, c=tree.c, count_refinements=tree.count_refinements,
                    min_rate=tree.min_rate, min_gain=tree.min_gain)
    else:
        conversation(engine)
    return engine


__all__ = ["STRATEGIES", "RequestSettings", "Strategy", "TreeSettings", "run_search"]
