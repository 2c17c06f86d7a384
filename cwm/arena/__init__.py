"""The arena: matches and resumable tournaments between agents on a ground-truth game, and what they leave.

Modules: ``run`` (playing a match and a tournament), ``plan`` (the jobs of a tournament and the finished
matches read back), ``identity`` (what a match is: its key from the game, the settings and each agent's
fingerprint), ``types`` (the records), ``clock`` (the per-move limit), ``lock`` (one writer per run
directory), ``transcript`` (each match's full record), ``report`` and ``ratings`` (the results tables, the
plot and the leaderboard), ``teams`` (a cooperative game's team scores on shared deals), ``standings`` (all
of them as one object, for a notebook), ``replay`` and
``view`` (a match in the terminal, a tournament as an HTML page) and ``human`` (a person's seat, ``cwm play``).

The names below are importable from ``cwm.arena`` itself; they load ``cwm.arena.run`` (and OpenSpiel) on
first use, so that the light modules (``cwm.arena.types`` for readers of ``matches.jsonl``) import alone.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from cwm.arena.clock import MoveTimeout
    from cwm.arena.plan import (
        DEFAULT_MOVE_TIME_S,
        ArenaError,
        TournamentPlan,
        load_results,
        match_seed,
        plan_jobs,
    )
    from cwm.arena.run import play_match, run_match, tournament
    from cwm.arena.standings import Standings
    from cwm.arena.types import FORFEIT_KINDS, MatchJob, MatchOutcome, MatchResult

_HOMES = {"MoveTimeout": "clock", "ArenaError": "plan", "load_results": "plan", "match_seed": "plan",
          "plan_jobs": "plan", "TournamentPlan": "plan", "DEFAULT_MOVE_TIME_S": "plan", "play_match": "run", "run_match": "run",
          "tournament": "run", "Standings": "standings", "FORFEIT_KINDS": "types", "MatchJob": "types", "MatchOutcome": "types",
          "MatchResult": "types"}

__all__ = ["DEFAULT_MOVE_TIME_S", "FORFEIT_KINDS", "ArenaError", "TournamentPlan", "MatchJob", "MatchOutcome", "MatchResult",
           "MoveTimeout", "Standings", "load_results", "match_seed", "plan_jobs", "play_match", "run_match", "tournament"]


def __getattr__(name: str) -> Any:
    """A public name of the arena, from the module it lives in (imported on first use)."""
    if name not in _HOMES:
        raise AttributeError(f"module 'cwm.arena' has no attribute {name!r}")
    return getattr(importlib.import_module(f"cwm.arena.{_HOMES[name]}"), name)
