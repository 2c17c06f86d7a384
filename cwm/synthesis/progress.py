"""A progress bar over a synthesis run's LLM calls: the best pass rate and the cost so far, then a note that
the held-out games come next (they take no calls, and can take a while for a long game). Once the search is
over (solved, or out of budget) the bar is full at the calls made, so it shows no time left to wait."""

from __future__ import annotations

from typing import Any

from tqdm import tqdm

from cwm.synthesis.engine import Engine

HELD_OUT_NEXT = "synthesis done; now generating and checking the held-out games"


class ProgressBar:
    """A tqdm bar over LLM calls showing the best pass rate and the cost so far."""

    def __init__(self, budget: int):
        self._bar: Any = tqdm(total=budget, unit="call", desc="synthesis", dynamic_ncols=True)

    def update_from(self, engine: Engine) -> None:
        best = engine.best
        ledger = engine.llm.ledger if engine.llm is not None else None  # a stub engine may have no client
        cost = float(ledger.snapshot().get("cost_usd", 0.0)) if ledger is not None else 0.0
        self._bar.n = engine.processed
        self._bar.set_postfix(best=f"{best.pass_rate:.3f}" if best else "-", cost=f"${cost:.3f}",
                              replayed=engine.replayed, refresh=False)
        if engine.solved or engine.processed >= engine.budget:  # the held-out games come next, with no calls
            # the search is over: the bar ends at the calls made (no estimate of the time to the budget left)
            self._bar.total = engine.processed
            self._bar.set_description_str(HELD_OUT_NEXT, refresh=False)
        self._bar.refresh()

    def close(self) -> None:
        self._bar.close()


def progress_bar(budget: int) -> ProgressBar:
    """A progress bar for ``synthesize_world_model(progress=bar.update_from)``; close it when done."""
    return ProgressBar(budget)


__all__ = ["HELD_OUT_NEXT", "ProgressBar", "progress_bar"]
