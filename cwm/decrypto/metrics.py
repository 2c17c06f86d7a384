"""Scores of a set of episodes: end conditions, turns, interception and miscommunication turns, format
failures, each rate with its 95% interval (Wilson for proportions, normal for means)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from cwm.decrypto.tom import rate
from cwm.decrypto.types import END_CONDITIONS, ROLES, Episode
from cwm.stats import mean_interval


def mean(values: Sequence[float]) -> dict[str, Any]:
    """A mean with its 95% interval (None throughout when there are no values)."""
    if not values:
        return {"mean": None, "low": None, "high": None, "n": 0}
    m, low, high = mean_interval(list(values))
    return {"mean": m, "low": low, "high": high, "n": len(values)}


def summarize(episodes: Sequence[Episode]) -> dict[str, Any]:
    """Every metric of one pairing's episodes (see docs/decrypto.md for the definitions).

    Returns:
      ``episodes``; ``end``: per end condition a rate; ``alice_bob_win``: survival rate; ``turns``: mean
      turns played; ``interception_turn`` / ``miscommunication_turn``: mean turn of each interception and
      miscommunication; ``interceptions_per_turn`` / ``miscommunications_per_turn``: rates over all turns
      played; ``format_failures``: per role, default moves played per episode (mean).
    """
    n = len(episodes)
    turns = [t for e in episodes for t in e.turns]
    return {
        "episodes": n,
        "end": {c: rate(sum(e.end == c for e in episodes), n) for c in END_CONDITIONS},
        "alice_bob_win": rate(sum(e.end == "survived" for e in episodes), n),
        "turns": mean([len(e.turns) for e in episodes]),
        "interception_turn": mean([x for e in episodes for x in e.interception_turns]),
        "miscommunication_turn": mean([x for e in episodes for x in e.miscommunication_turns]),
        "interceptions_per_turn": rate(sum(t.intercepted for t in turns), len(turns)),
        "miscommunications_per_turn": rate(sum(t.miscommunicated for t in turns), len(turns)),
        "format_failures": {r: mean([e.format_failures()[r] for e in episodes]) for r in ROLES},
    }
