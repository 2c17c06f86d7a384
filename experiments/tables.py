"""Table rows over seeds: the mean and sample standard deviation of each measured number, per game."""

from __future__ import annotations

import statistics
from collections.abc import Sequence
from typing import Any

from experiments import common


def mean(values: Sequence[float | None]) -> float | None:
    present = [v for v in values if v is not None]
    return statistics.fmean(present) if present else None


def sd(values: Sequence[float | None]) -> float | None:
    present = [v for v in values if v is not None]
    return statistics.stdev(present) if len(present) > 1 else None


def cell(value: float | None, spread: float | None, fmt: str) -> str:
    """``value ± spread`` (``n/a`` for a number not measured)."""
    if value is None:
        return "n/a"
    return format(value, fmt) + (f" ± {format(spread, fmt)}" if spread else "")


def rows_over_seeds(runs: Sequence[dict[str, Any]], configs: Sequence[common.GameConfig],
                    keys: Sequence[str]) -> list[dict[str, Any]]:
    """One row per game: the mean (``key``) and standard deviation (``key_sd``) over its runs of each of
    ``keys``, how many runs (``seeds``) and solved ones, and the paper's numbers (``paper_*``). A run with a
    ``status`` (not measured, e.g. ``no recording``) is left out of the means; a game with no measured run
    takes the first such status."""
    rows = []
    for c in configs:
        mine = [r for r in runs if r["config_game"] == c.game]
        measured = [r for r in mine if not r.get("status")]
        row: dict[str, Any] = {"game": mine[0]["game"] if mine else c.game, "seeds": len(measured),
                               "solved": sum(bool(r.get("solved")) for r in measured)}
        if mine and not measured:
            row |= {"status": mine[0]["status"]} | {k: v for k, v in mine[0].items() if k == "recording"}
        for key in keys:
            row[key] = mean([r.get(key) for r in measured])
            row[f"{key}_sd"] = sd([r.get(key) for r in measured])
        row |= {f"paper_{k}": v for k, v in c.paper.items()}
        rows.append(row)
    return rows
