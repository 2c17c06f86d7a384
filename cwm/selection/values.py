"""A value function for a bundle, end to end: candidates synthesized (``cwm.synthesis.synthesize_values``),
then chosen by a tournament played inside the bundle's own model (``cwm.selection.value_tournament``), and the
outcome written into the bundle as ``value.py`` with the table (``cwm.bundle.value.save_value``). The
tournament's games are kept under ``run_dir/tournament``; rerunning the same call resumes the synthesis and
the tournament without repeating an LLM call or a finished game.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from cwm import games
from cwm.bundle.value import save_value
from cwm.llm import Client
from cwm.selection.value_tournament import Tournament, TournamentSettings, run_tournament
from cwm.synthesis.engine import Progress
from cwm.synthesis.settings import SynthesisSettings, settings_from
from cwm.synthesis.store import write_json
from cwm.synthesis.types import SynthesisResult
from cwm.synthesis.value import synthesize_values
from cwm.types import JSON

TOURNAMENT_DIR = "tournament"
_TOURNAMENT_KEYS = {"games_per_pairing": "games_per_pairing", "search": "search", "executor": "executor",
                    "move_time_limit": "move_time_limit", "tournament_progress": "progress"}


@dataclasses.dataclass(frozen=True)
class ValueResult:
    """What a value synthesis produced.

    Attributes:
      synthesis: the search's result (``target`` is ``value``; ``best_source`` the first passing program).
      played: the node ids of the passing candidates that played the tournament, in order (``value-1`` first).
      tournament: the tournament, or ``None`` when no candidate passed its checks (nothing was played and the
        bundle is unchanged).
      winner: the winning candidate's source, or ``None`` (rollouts won, or nothing was played).
      bundle: the bundle folder.
    """

    synthesis: SynthesisResult
    played: tuple[int, ...]
    tournament: Tournament | None
    winner: str | None
    bundle: str


def synthesize_value(game: str | games.GameSpec | None, llm: Client, settings: SynthesisSettings | None = None, *,
                     run_dir: str | Path, bundle: str | Path, tournament: TournamentSettings | None = None,
                     progress: Progress | None = None, **legacy: Any) -> ValueResult:
    """Synthesises value functions for the world model of ``bundle`` and keeps the tournament's winner there.

    Args:
      game: the bundle's game as you name it (``None``: the manifest's, a registry name or OpenSpiel string).
      llm: the LLM client.
      settings: the synthesis (``SynthesisSettings.of("value", ...)``; its seed also seeds every tournament game).
      run_dir: where everything is saved; an interrupted run resumes without repeating LLM calls or games.
      bundle: the bundle folder (``cwm export``); ``value.py`` and ``value_tournament.json`` are written there.
      tournament: the tournament's games per pairing, MCTS settings, executor, move limit and progress bar
        (default ``TournamentSettings()``; the agents always run in hardened workers).
      progress: called with the synthesis engine after each processed call.
      legacy: the former keyword arguments (``budget=``, ``games_per_pairing=``, ``search=``, ...), deprecated.

    Raises:
      UsageError: a setting out of range (before ``run_dir`` is touched).
      BundleError: the bundle fails its verification.
      ResumeError: ``run_dir`` holds a run with other settings.
      TournamentError: a game not for two players, or a tournament folder holding another tournament.
    """
    played = {k: legacy.pop(k) for k in list(legacy) if k in _TOURNAMENT_KEYS}
    settings = settings_from("value", settings, legacy, "synthesize_value")
    tournament = (tournament or TournamentSettings(**{_TOURNAMENT_KEYS[k]: v for k, v in played.items()
                                                      if v is not None})).replace(seed=settings.seed).check()
    found = synthesize_values(game, llm, settings, run_dir=run_dir, bundle=bundle, progress=progress)
    loaded, chosen, root = found.bundle, found.passing, Path(run_dir)
    if not chosen:
        write_json(root / "value.json", {"played": [], "tournament": None, "bundle": str(loaded.path)})
        return ValueResult(found.synthesis, (), None, None, str(loaded.path))
    table = run_tournament(loaded.spec, loaded.sources["model.py"], [n.source for n in chosen], root / TOURNAMENT_DIR,
                           tournament, inference=loaded.sources.get("inference.py"))
    winner = None if table.winner_index is None else chosen[table.winner_index].source
    save_value(loaded.path, winner, table.to_json(), _provenance(found.synthesis, chosen, table, root))
    write_json(root / "value.json", {"played": [n.id for n in chosen], "tournament": table.to_json(),
                                     "bundle": str(loaded.path)})
    return ValueResult(found.synthesis, tuple(n.id for n in chosen), table, winner, str(loaded.path))


def _provenance(result: SynthesisResult, chosen: Sequence[Any], tournament: Tournament, root: Path) -> dict[str, JSON]:
    return {"llm": result.model, "seed": result.seed, "budget": result.budget, "llm_calls": result.llm_calls,
            "cost_usd": result.cost_usd, "prompt_hashes": dict(result.prompt_hashes),
            "candidates": [n.id for n in chosen], "winner": tournament.winner, "run_dir": str(root.resolve())}


__all__ = ["TOURNAMENT_DIR", "ValueResult", "synthesize_value"]
