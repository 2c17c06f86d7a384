"""Value-function synthesis: candidates for a bundle's world model, checked and refined until enough distinct
programs pass every value check (or the budget is spent).

``synthesize_values`` loads the bundle (verified, contained), asks for ``settings.candidates`` value functions
in one prompt (``cwm.synthesis.value_target``) and refines failing ones with the tree search. Which passing
candidate the bundle keeps is decided by play inside the model: ``cwm.selection.synthesize_value`` runs this
and then the value tournament, and writes the winner into the bundle. Every prompt, reply, program and report
is saved under ``run_dir``; rerunning the same call resumes without repeating an LLM call.
"""

from __future__ import annotations

import dataclasses
import time
from pathlib import Path
from typing import Any

from cwm import games
from cwm.bundle import Bundle, load_bundle
from cwm.bundle.files import read_trajectories
from cwm.llm import Client
from cwm.sandbox.checkers import value_checker
from cwm.synthesis import report as run_report
from cwm.synthesis.engine import Progress
from cwm.synthesis.loop import run_search
from cwm.synthesis.runs import games_key, open_store, result_of, sandbox_or_none
from cwm.synthesis.settings import SynthesisSettings, settings_from
from cwm.synthesis.store import sha
from cwm.synthesis.target import Target
from cwm.synthesis.types import Node, SynthesisResult
from cwm.synthesis.value_target import value_target


@dataclasses.dataclass(frozen=True)
class ValueCandidates:
    """What a value synthesis produced, for the tournament that picks one.

    Attributes:
      synthesis: the search's result (``target`` is ``value``; ``best_source`` the first passing program).
      passing: the passing candidates (at most ``settings.candidates``), in the order they passed.
      bundle: the loaded bundle they were written for.
    """

    synthesis: SynthesisResult
    passing: tuple[Node, ...]
    bundle: Bundle


def synthesize_values(game: str | games.GameSpec | None, llm: Client, settings: SynthesisSettings | None = None,
                      *, run_dir: str | Path, bundle: str | Path, rules: str | None = None,
                      progress: Progress | None = None) -> ValueCandidates:
    """Synthesises value functions for the world model of ``bundle`` (nothing is written into the bundle).

    Args:
      game: the bundle's game as you name it (``None``: the manifest's, a registry name or OpenSpiel string).
      llm: the LLM client.
      settings: ``SynthesisSettings.of("value", ...)``: the budget (the first call asks for every candidate;
        later ones refine failing ones), ``candidates``, ``call_s`` (CPU seconds one ``get_value`` call may
        use), the seed, the tree and request settings, ``isolate``.
      run_dir: where everything is saved; an interrupted run resumes without repeating LLM calls.
      bundle: the bundle folder (``cwm export``).
      rules: the rules text (default: the game's registered rules).
      progress: called with the engine after each processed call.

    Raises:
      UsageError: a setting out of range (before ``run_dir`` is touched).
      BundleError: the bundle fails its verification.
      ResumeError: ``run_dir`` holds a run with other settings.
    """
    start = time.monotonic()
    settings = settings_from("value", settings, {}, "synthesize_values")
    loaded = load_bundle(bundle, game=game)
    world_model, train = loaded.sources["model.py"], read_trajectories(loaded.path, loaded.game)
    text = rules or games.rules_text(loaded.spec)
    utility, _ = games.utility_range(loaded.spec)
    with sandbox_or_none(settings.isolate) as box:
        check = value_checker(world_model, train, utility=utility, call_s=settings.per_call_s, sandbox=box)
        target = value_target(text, world_model, train, utility=utility, candidates=settings.candidates,
                              call_s=settings.per_call_s, check=check)
        config = _config(target, loaded.spec, llm, settings, text, world_model, utility)
        store = open_store(Path(run_dir), config, settings, check_key=games_key(train, world_model))
        engine = run_search(target, llm, store, settings.replace(strategy="tree"), progress=progress)  # tree only
    result = result_of(engine, store, config, None, time.monotonic() - start,
                       rules=games.rules_label(loaded.spec, text))
    run_report.write_outputs(store, result)
    return ValueCandidates(result, tuple(engine.passing[:settings.candidates]), loaded)


def _config(target: Target, spec: games.GameSpec, llm: Client, settings: SynthesisSettings, text: str,
            world_model: str, utility: tuple[float, float]) -> dict[str, Any]:
    """The run's resume key (``config.json``)."""
    s = settings
    return {"target": target.name, "game": spec.name, "strategy": "tree", "seed": s.seed, "model": llm.model,
            "candidates": s.candidates, "call_s": s.call_s, "concurrency": s.concurrency,
            "tree": dataclasses.asdict(s.tree), "request": dataclasses.asdict(s.request),
            "rules_sha": sha(text)[:16], "prompt_hashes": target.prompt_hashes(), "budget": s.budget,
            "world_model_sha": sha(world_model)[:16], "utility": list(utility)}


def __getattr__(name: str) -> Any:
    """``synthesize_value``, ``ValueResult`` and ``TOURNAMENT_DIR``, which moved to ``cwm.selection`` with the
    tournament (deprecated here for one release)."""
    if name in ("synthesize_value", "ValueResult", "TOURNAMENT_DIR"):
        import importlib
        import warnings

        warnings.warn(f"cwm.synthesis.value.{name} moved to cwm.selection.{name}; the old name is deprecated",
                      DeprecationWarning, stacklevel=2)
        return getattr(importlib.import_module("cwm.selection.values"), name)
    raise AttributeError(f"module 'cwm.synthesis.value' has no attribute {name!r}")


__all__ = ["ValueCandidates", "synthesize_values"]
