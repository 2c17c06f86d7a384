"""Encoder synthesis end to end: an observation encoder for a bundle's game, written by an LLM from the
bundle's recorded observations, checked in the sandbox, refined until it passes, and saved in the bundle.

``synthesize_encoder`` loads the bundle (verified, contained), asks for ``encode(observation, player_id)``
(``cwm.synthesis.encoder_target``) with example observations of the bundle's trajectories, refines failing
candidates with the tree search (the loop every target uses) until one passes every encoder check or the
budget is spent, and writes the passing one into the bundle as ``encoder.py`` (``cwm.bundle.update``), where
a PPO policy trained in the bundle's model can read the game through it (docs/ppo.md). Every prompt,
reply, program and report is saved under ``run_dir``; rerunning the same call resumes without repeating an
LLM call.
"""

from __future__ import annotations

import dataclasses
import time
from pathlib import Path
from typing import Any

from cwm import games
from cwm.bundle import load_bundle
from cwm.bundle.files import read_trajectories
from cwm.bundle.update import save_encoder
from cwm.llm import Client
from cwm.sandbox.checkers import encoder_checker
from cwm.synthesis import report as run_report
from cwm.synthesis.encoder_target import encoder_target
from cwm.synthesis.engine import Progress
from cwm.synthesis.loop import run_search
from cwm.synthesis.runs import games_key, open_store, result_of, sandbox_or_none
from cwm.synthesis.settings import SynthesisSettings, settings_from
from cwm.synthesis.store import sha
from cwm.synthesis.target import Target
from cwm.synthesis.types import SynthesisResult
from cwm.types import JSON


@dataclasses.dataclass(frozen=True)
class EncoderResult:
    """What an encoder synthesis produced.

    Attributes:
      synthesis: the search's result (``target`` is ``encoder``; ``solved`` when a candidate passed).
      encoder: the accepted encoder's source, saved in the bundle as ``encoder.py``; ``None`` when no candidate
        passed every check (the bundle is then unchanged).
      bundle: the bundle folder.
    """

    synthesis: SynthesisResult
    encoder: str | None
    bundle: str


def synthesize_encoder(game: str | games.GameSpec | None, llm: Client, settings: SynthesisSettings | None = None, *,
                       run_dir: str | Path, bundle: str | Path, rules: str | None = None,
                       progress: Progress | None = None, **legacy: Any) -> EncoderResult:
    """Synthesises an observation encoder for the game of ``bundle`` and saves the accepted one there.

    Args:
      game: the bundle's game as you name it (``None``: the manifest's, a registry name or OpenSpiel string).
      llm: the LLM client.
      settings: ``SynthesisSettings.of("encoder", ...)``: the budget (the first call writes a candidate; later
        ones refine failing ones), the seed, ``call_s`` (the mean seconds one ``encode`` call may take),
        ``shown`` (example observations in each prompt), the tree and request settings, ``isolate``.
      run_dir: where everything is saved; an interrupted run resumes without repeating LLM calls.
      bundle: the bundle folder (``cwm export``); ``encoder.py`` is written there.
      rules: the rules text (default: the game's registered rules).
      progress: called with the engine after each processed call.
      legacy: the former keyword arguments (``budget=``, ``call_s=``, ...), deprecated.

    Raises:
      UsageError: a setting out of range (before ``run_dir`` is touched).
      BundleError: the bundle fails its verification.
      ResumeError: ``run_dir`` holds a run with other settings.
    """
    start = time.monotonic()
    settings = settings_from("encoder", settings, legacy, "synthesize_encoder")
    loaded = load_bundle(bundle, game=game)
    train = read_trajectories(loaded.path, loaded.game)
    text = rules or games.rules_text(loaded.spec)
    with sandbox_or_none(settings.isolate) as box:
        check = encoder_checker(train, call_s=settings.per_call_s, sandbox=box)
        target = encoder_target(text, train, call_s=settings.per_call_s, shown=settings.shown, check=check)
        config = _config(target, loaded.spec, llm, settings, text)
        store = open_store(Path(run_dir), config, settings, check_key=games_key(train))
        engine = run_search(target, llm, store, settings.replace(strategy="tree"), progress=progress)  # tree only
    result = result_of(engine, store, config, None, time.monotonic() - start,
                       rules=games.rules_label(loaded.spec, text))
    run_report.write_outputs(store, result)
    accepted = engine.passing[0].source if engine.passing else None
    if accepted is not None:
        save_encoder(loaded.path, accepted, _provenance(result, engine.passing[0].id, Path(run_dir)))
    store.write_json("encoder.json", {"accepted": None if accepted is None else engine.passing[0].id,
                                      "bundle": str(loaded.path)})
    return EncoderResult(result, accepted, str(loaded.path))


def _config(target: Target, spec: games.GameSpec, llm: Client, settings: SynthesisSettings,
            text: str) -> dict[str, Any]:
    """The run's resume key (``config.json``)."""
    s = settings
    return {"target": target.name, "game": spec.name, "strategy": "tree", "seed": s.seed, "model": llm.model,
            "call_s": s.call_s, "shown": s.shown, "concurrency": s.concurrency,
            "tree": dataclasses.asdict(s.tree), "request": dataclasses.asdict(s.request),
            "rules_sha": sha(text)[:16], "prompt_hashes": target.prompt_hashes(), "budget": s.budget}


def _provenance(result: SynthesisResult, node: int, root: Path) -> dict[str, JSON]:
    return {"llm": result.model, "seed": result.seed, "budget": result.budget, "llm_calls": result.llm_calls,
            "cost_usd": result.cost_usd, "prompt_hashes": dict(result.prompt_hashes), "node": node,
            "run_dir": str(root.resolve())}


__all__ = ["EncoderResult", "synthesize_encoder"]
