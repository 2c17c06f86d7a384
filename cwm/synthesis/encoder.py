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
import json
import time
from pathlib import Path

from cwm import games
from cwm.bundle import load_bundle
from cwm.bundle.files import read_trajectories
from cwm.bundle.update import save_encoder
from cwm.checks.encoder import DEFAULT_CALL_S
from cwm.games import trajectories
from cwm.llm import Client
from cwm.sandbox.checkers import encoder_checker
from cwm.synthesis import report as run_report
from cwm.synthesis.encoder_target import DEFAULT_SHOWN, encoder_target
from cwm.synthesis.engine import Progress
from cwm.synthesis.inference import sandbox_or_none
from cwm.synthesis.loop import RequestSettings, TreeSettings, run_search
from cwm.synthesis.store import RunStore, sha
from cwm.synthesis.types import SynthesisResult
from cwm.synthesis.world_model import result_of
from cwm.types import JSON, UsageError


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


def synthesize_encoder(
    game: str | games.GameSpec | None,
    *,
    llm: Client,
    run_dir: str | Path,
    bundle: str | Path,
    budget: int = 20,
    seed: int = 0,
    rules: str | None = None,
    call_s: float = DEFAULT_CALL_S,
    shown: int = DEFAULT_SHOWN,
    concurrency: int = 1,
    tree: TreeSettings | None = None,
    request: RequestSettings | None = None,
    isolate: bool = True,
    progress: Progress | None = None,
) -> EncoderResult:
    """Synthesises an observation encoder for the game of ``bundle`` and saves the accepted one there.

    Args:
      game: the bundle's game as you name it (``None``: the manifest's, a registry name or OpenSpiel string).
      llm: the LLM client.
      run_dir: where everything is saved; an interrupted run resumes without repeating LLM calls.
      bundle: the bundle folder (``cwm export``); ``encoder.py`` is written there.
      budget: the most LLM calls (the first writes a candidate; later ones refine failing ones).
      seed: seeds the search and the requests.
      rules: the rules text (default: the game's registered rules).
      call_s: the mean seconds one ``encode`` call may take.
      shown: example observations in each prompt.
      concurrency, tree, request: as in ``synthesize_world_model`` (the tree search is the strategy).
      isolate: check candidates in the sandbox (turn off only for trusted replies).
      progress: called with the engine after each processed call.

    Raises:
      UsageError: a setting out of range (before ``run_dir`` is touched).
      BundleError: the bundle fails its verification.
      ResumeError: ``run_dir`` holds a run with other settings.
    """
    start = time.monotonic()
    _validate(budget=budget, call_s=call_s, concurrency=concurrency, shown=shown)
    tree, request = tree or TreeSettings(), request or RequestSettings()
    loaded = load_bundle(bundle, game=game)
    train = read_trajectories(loaded.path, loaded.game)
    text = rules or games.rules_text(loaded.spec)
    with sandbox_or_none(isolate) as box:
        check = encoder_checker(train, call_s=call_s, sandbox=box)
        target = encoder_target(text, train, call_s=call_s, shown=shown, check=check)
        config = {"target": target.name, "game": loaded.spec.name, "strategy": "tree", "seed": seed,
                  "model": llm.model, "call_s": call_s, "shown": shown, "concurrency": concurrency,
                  "tree": dataclasses.asdict(tree), "request": dataclasses.asdict(request),
                  "rules_sha": sha(text)[:16], "prompt_hashes": target.prompt_hashes(), "budget": budget}
        key = sha(json.dumps([trajectories.to_json(t) for t in train], sort_keys=True))
        store = RunStore(Path(run_dir), config=config, check_key=key)
        engine = run_search(target, llm, store, strategy="tree", budget=budget, seed=seed, concurrency=concurrency,
                            tree=tree, request=request, progress=progress)
    result = result_of(engine, store, config, None, time.monotonic() - start)
    run_report.write_outputs(store, result)
    accepted = engine.passing[0].source if engine.passing else None
    if accepted is not None:
        save_encoder(loaded.path, accepted, _provenance(result, engine.passing[0].id, Path(run_dir)))
    store.write_json("encoder.json", {"accepted": None if accepted is None else engine.passing[0].id,
                                      "bundle": str(loaded.path)})
    return EncoderResult(result, accepted, str(loaded.path))


def _provenance(result: SynthesisResult, node: int, root: Path) -> dict[str, JSON]:
    return {"llm": result.model, "seed": result.seed, "budget": result.budget, "llm_calls": result.llm_calls,
            "cost_usd": result.cost_usd, "prompt_hashes": dict(result.prompt_hashes), "node": node,
            "run_dir": str(root.resolve())}


def _validate(*, budget: int, call_s: float, concurrency: int, shown: int) -> None:
    for name, value in (("budget", budget), ("concurrency", concurrency), ("shown", shown)):
        if type(value) is not int or value < 1:
            raise UsageError(f"synthesize_encoder: {name} must be an integer >= 1, got {value!r}")
    if not (type(call_s) in (int, float) and call_s > 0):
        raise UsageError(f"synthesize_encoder: call_s must be > 0 seconds, got {call_s!r}")


__all__ = ["EncoderResult", "synthesize_encoder"]
