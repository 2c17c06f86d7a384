"""Value-function synthesis end to end: candidates for a bundle's world model, checked, refined, and chosen by a
tournament played inside that model; the winner goes into the bundle as ``value.py`` with the table.

``synthesize_value`` loads the bundle (verified, contained), asks for ``candidates`` value functions in one
prompt (``cwm.synthesis.value_target``), refines failing ones with the tree search until that many distinct
programs pass every value check (or the budget is spent), then plays the passing ones against random
rollouts and each other inside the model (``cwm.selection.value_tournament``) and writes the outcome into the bundle
(``cwm.bundle.value.save_value``). Every prompt, reply, program and report is saved under ``run_dir`` like
any synthesis run, and the tournament's games under ``run_dir/tournament``; rerunning the same call resumes
both without repeating an LLM call or a finished game.
"""

from __future__ import annotations

import dataclasses
import json
import time
from pathlib import Path
from typing import Any

from cwm import games
from cwm.arena import DEFAULT_MOVE_TIME_S
from cwm.bundle import load_bundle
from cwm.bundle.files import read_trajectories
from cwm.bundle.value import save_value
from cwm.checks.value import DEFAULT_CALL_S
from cwm.executors import Executor
from cwm.games import trajectories
from cwm.llm import Client
from cwm.sandbox.checkers import value_checker
from cwm.selection.value_tournament import DEFAULT_GAMES, Tournament, run_tournament
from cwm.synthesis import report as run_report
from cwm.synthesis.engine import Progress
from cwm.synthesis.inference import sandbox_or_none
from cwm.synthesis.loop import RequestSettings, TreeSettings, run_search
from cwm.synthesis.store import RunStore, sha
from cwm.synthesis.types import SynthesisResult
from cwm.synthesis.value_target import DEFAULT_CANDIDATES, value_target
from cwm.synthesis.world_model import result_of
from cwm.types import JSON, UsageError
from planners.config import SearchConfig

TOURNAMENT_DIR = "tournament"


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


def synthesize_value(
    game: str | games.GameSpec | None,
    *,
    llm: Client,
    run_dir: str | Path,
    bundle: str | Path,
    candidates: int = DEFAULT_CANDIDATES,
    budget: int = 20,
    seed: int = 0,
    rules: str | None = None,
    call_s: float = DEFAULT_CALL_S,
    games_per_pairing: int = DEFAULT_GAMES,
    search: SearchConfig | None = None,
    concurrency: int = 1,
    tree: TreeSettings | None = None,
    request: RequestSettings | None = None,
    executor: str | Executor = "local",
    move_time_limit: float = DEFAULT_MOVE_TIME_S,
    isolate: bool = True,
    progress: Progress | None = None,
    tournament_progress: bool = True,
) -> ValueResult:
    """Synthesises value functions for the world model of ``bundle`` and keeps the tournament's winner there.

    Args:
      game: the bundle's game as you name it (``None``: the manifest's, a registry name or OpenSpiel string).
      llm: the LLM client.
      run_dir: where everything is saved; an interrupted run resumes without repeating LLM calls or games.
      bundle: the bundle folder (``cwm export``); ``value.py`` and ``value_tournament.json`` are written there.
      candidates: value functions asked for in one prompt, and passing ones sought before the tournament.
      budget: the most LLM calls (the first asks for every candidate; later ones refine failing ones).
      seed: seeds the search, the requests and every tournament game.
      rules: the rules text (default: the game's registered rules).
      call_s: CPU seconds one ``get_value`` call may use.
      games_per_pairing: tournament games of each ordered pairing.
      search: the tournament's MCTS settings (default ``SearchConfig()``).
      concurrency, tree, request: as in ``synthesize_world_model`` (the tree search is the strategy).
      executor: runs the tournament's games (``local``, ``local:N``, ``inline``, ``ray[:ADDRESS]``).
      move_time_limit: CPU seconds per move of a tournament agent's worker.
      isolate: check candidates in the sandbox (turn off only for trusted replies); the tournament's agents
        always run in hardened workers.
      progress: called with the engine after each processed call; tournament_progress: a bar for the games.

    Raises:
      UsageError: a setting out of range (before ``run_dir`` is touched).
      BundleError: the bundle fails its verification.
      ResumeError: ``run_dir`` holds a run with other settings.
      TournamentError: a game not for two players, or a tournament folder holding another tournament.
    """
    start = time.monotonic()
    _validate(budget=budget, candidates=candidates, call_s=call_s, concurrency=concurrency,
              games_per_pairing=games_per_pairing)
    tree, request = tree or TreeSettings(), request or RequestSettings()
    loaded = load_bundle(bundle, game=game)
    spec, world_model = loaded.spec, loaded.sources["model.py"]
    train = read_trajectories(loaded.path, loaded.game)
    text = rules or games.rules_text(spec)
    utility, _ = games.utility_range(spec)
    root = Path(run_dir)
    with sandbox_or_none(isolate) as box:
        check = value_checker(world_model, train, utility=utility, call_s=call_s, sandbox=box)
        target = value_target(text, world_model, train, utility=utility, candidates=candidates, call_s=call_s,
                              check=check)
        config = {"target": target.name, "game": spec.name, "strategy": "tree", "seed": seed, "model": llm.model,
                  "candidates": candidates, "call_s": call_s, "concurrency": concurrency,
                  "tree": dataclasses.asdict(tree), "request": dataclasses.asdict(request),
                  "rules_sha": sha(text)[:16], "prompt_hashes": target.prompt_hashes(), "budget": budget,
                  "world_model_sha": sha(world_model)[:16], "utility": list(utility)}
        key = sha(json.dumps([trajectories.to_json(t) for t in train], sort_keys=True) + world_model)
        store = RunStore(root, config=config, check_key=key)
        engine = run_search(target, llm, store, strategy="tree", budget=budget, seed=seed, concurrency=concurrency,
                            tree=tree, request=request, progress=progress)
    result = result_of(engine, store, config, None, time.monotonic() - start)
    run_report.write_outputs(store, result)
    chosen = engine.passing[:candidates]
    if not chosen:
        store.write_json("value.json", {"played": [], "tournament": None, "bundle": str(loaded.path)})
        return ValueResult(result, (), None, None, str(loaded.path))
    tournament = run_tournament(spec, world_model, [n.source for n in chosen], root / TOURNAMENT_DIR,
                                inference=loaded.sources.get("inference.py"), games_per_pairing=games_per_pairing, search=search, seed=seed, executor=executor,
                                move_time_limit=move_time_limit, progress=tournament_progress)
    winner = None if tournament.winner_index is None else chosen[tournament.winner_index].source
    save_value(loaded.path, winner, tournament.to_json(), _provenance(result, chosen, tournament, root))
    store.write_json("value.json", {"played": [n.id for n in chosen], "tournament": tournament.to_json(),
                                    "bundle": str(loaded.path)})
    return ValueResult(result, tuple(n.id for n in chosen), tournament, winner, str(loaded.path))


def _provenance(result: SynthesisResult, chosen: list[Any], tournament: Tournament, root: Path) -> dict[str, JSON]:
    return {"llm": result.model, "seed": result.seed, "budget": result.budget, "llm_calls": result.llm_calls,
            "cost_usd": result.cost_usd, "prompt_hashes": dict(result.prompt_hashes),
            "candidates": [n.id for n in chosen], "winner": tournament.winner, "run_dir": str(root.resolve())}


def _validate(*, budget: int, candidates: int, call_s: float, concurrency: int, games_per_pairing: int) -> None:
    for name, value, low in (("budget", budget, 1), ("candidates", candidates, 1), ("concurrency", concurrency, 1),
                             ("games_per_pairing", games_per_pairing, 1)):
        if type(value) is not int or value < low:
            raise UsageError(f"synthesize_value: {name} must be an integer >= {low}, got {value!r}")
    if not (type(call_s) in (int, float) and call_s > 0):
        raise UsageError(f"synthesize_value: call_s must be > 0 seconds, got {call_s!r}")


__all__ = ["TOURNAMENT_DIR", "ValueResult", "synthesize_value"]
