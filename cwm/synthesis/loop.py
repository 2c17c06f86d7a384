"""The refinement loop for any target: pick a strategy, run it on a journaled engine, return the engine.

``run_search`` is what every target's entry point (world model, inference, value, encoder) calls; it knows
nothing about games.
"""

from __future__ import annotations

from typing import Literal

from cwm.llm import Client
from cwm.synthesis.conversation import conversation
from cwm.synthesis.engine import Engine, Progress
from cwm.synthesis.settings import STRATEGIES, RequestSettings, SynthesisSettings, TreeSettings
from cwm.synthesis.store import RunStore
from cwm.synthesis.target import Target
from cwm.synthesis.tree import tree_search

Strategy = Literal["tree", "conversation"]


def run_search(target: Target, llm: Client, store: RunStore, settings: SynthesisSettings | None = None, *,
               progress: Progress | None = None) -> Engine:
    """Refines programs for ``target`` until one passes every check or ``settings.budget`` LLM calls are made.

    Args:
      target: what is synthesised.
      llm: the LLM client.
      store: the run directory (a journal there is replayed instead of calling the LLM).
      settings: (default ``SynthesisSettings()``) the strategy ("tree", Thompson-sampled tree search, or "conversation", one chat), the budget
        (journaled calls included; paper: 500), the seed (the tree sampler and the requests' provider seeds),
        the concurrency (tree search only; the run is deterministic for a fixed seed and concurrency), and the
        tree and request settings.
      progress: called with the engine after each processed call.

    Returns:
      The engine, holding every node, report and the accuracy curve.

    Raises:
      UsageError: settings out of range (an unknown strategy, a budget or concurrency below 1).
      LLMError: the client failed for good (the run directory keeps what was done; rerun to resume).
    """
    settings = (settings or SynthesisSettings()).check("run_search")
    tree = settings.tree
    engine = Engine(target, llm, store, budget=settings.budget, seed=settings.seed,
                    concurrency=settings.concurrency if settings.strategy == "tree" else 1,
                    request_options=settings.request.request_options(), progress=progress)
    if settings.strategy == "tree":
        tree_search(engine, seed=settings.seed, c=tree.c, count_refinements=tree.count_refinements,
                    min_rate=tree.min_rate, min_gain=tree.min_gain)
    else:
        conversation(engine)
    return engine


__all__ = ["STRATEGIES", "RequestSettings", "Strategy", "SynthesisSettings", "TreeSettings", "run_search"]
