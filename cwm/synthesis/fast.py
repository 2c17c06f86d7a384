"""Fast-twin synthesis end to end: a faster module with a bundle's world-model contract, written by an LLM from
the checked model and its own CPU profile, accepted only on the differential equivalence check, refined with
the first diverging step until it passes, and saved in the bundle with its evidence.

``synthesize_fast`` loads the bundle (verified, contained), profiles its model over a few random playouts in a
sandbox child (``cwm.sandbox.equivalence.profile_model``; kept in the run directory as ``profile.json`` so a
resumed run shows the same prompts), asks for a twin (``cwm.synthesis.fast_target``), checks every candidate
by ``check_equivalence`` against the model (both always in sandbox children), refines failing candidates
with the tree search, and writes the accepted twin and its evidence into the bundle (``cwm.bundle.twin``).
"""

from __future__ import annotations

import dataclasses
import json
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from cwm import games
from cwm.bundle import load_bundle
from cwm.bundle.twin import save_twin
from cwm.files import RUN_FILE_BYTES, loads_bounded, read_bounded
from cwm.llm import Client
from cwm.sandbox import Sandbox
from cwm.sandbox.equivalence import (
    DEFAULT_EQUIVALENCE,
    EquivalenceSettings,
    Memo,
    check_equivalence,
    profile_model,
)
from cwm.synthesis import report as run_report
from cwm.synthesis.engine import Progress
from cwm.synthesis.fast_target import fast_checker, fast_target
from cwm.synthesis.loop import run_search
from cwm.synthesis.runs import open_store, result_of
from cwm.synthesis.settings import SynthesisSettings, settings_from
from cwm.synthesis.store import sha
from cwm.synthesis.target import Target
from cwm.synthesis.types import SynthesisResult
from cwm.types import JSON, UsageError


@dataclasses.dataclass(frozen=True)
class FastResult:
    """What a fast-twin synthesis produced.

    Attributes:
      synthesis: the search's result (``target`` is ``fast``; ``solved`` when a candidate passed).
      twin: the accepted twin's source, saved in the bundle as ``twin.py``; ``None`` when none passed (the
        bundle is then unchanged).
      evidence: the accepted twin's equivalence evidence (``twin_evidence.json``), else ``None``.
      bundle: the bundle folder.
    """

    synthesis: SynthesisResult
    twin: str | None
    evidence: dict[str, JSON] | None
    bundle: str


def synthesize_fast(game: str | games.GameSpec | None, llm: Client, settings: SynthesisSettings | None = None, *,
                    run_dir: str | Path, bundle: str | Path, equivalence: EquivalenceSettings = DEFAULT_EQUIVALENCE,
                    profile: dict[str, Any] | None = None, progress: Progress | None = None) -> FastResult:
    """Synthesises a fast twin of the model of ``bundle`` and saves the accepted one there with its evidence.

    Args:
      game: the bundle's game as you name it (``None``: the manifest's); its rules are the prompts' (``--rules``
        picks them where the game is resolved).
      llm: the LLM client.
      settings: ``SynthesisSettings.of("fast", ...)``: the budget, the seed, the tree and request settings
        (``isolate`` must stay on: the twins and the model run only in sandbox children).
      run_dir: where everything is saved; an interrupted run resumes without repeating LLM calls.
      bundle: the bundle folder (``cwm export``); ``twin.py`` and ``twin_evidence.json`` are written there.
      equivalence: the equivalence check's bound, playouts and limits.
      profile: the model's profile to show (default: the run's ``profile.json``, else measured now); a
        replayed session passes the one it was recorded with, as its prompts show it.
      progress: called with the engine after each processed call.

    Raises:
      UsageError: a setting out of range, or ``isolate`` off (before ``run_dir`` is touched); the model
        cannot be profiled.
      BundleError: the bundle fails its verification.
      ResumeError: ``run_dir`` holds a run with other settings.
    """
    start = time.monotonic()
    settings = settings_from("fast", settings, {}, "synthesize_fast")
    if not settings.isolate:
        raise UsageError("synthesize_fast: a twin is checked only in the sandbox; isolate cannot be turned off")
    loaded = load_bundle(bundle, game=game)
    model, text, root = loaded.sources["model.py"], games.rules_text(loaded.spec), Path(run_dir)
    with Sandbox(limits=equivalence.limits) as box:
        shown = profile if profile is not None else _profile(root, model, box)
        memo: Memo = {}  # the model's playouts, played once for every candidate and the final check
        target = fast_target(text, model, shown, check=fast_checker(model, equivalence, sandbox=box, memo=memo))
        kind = TwinKind("python", lambda source: check_equivalence(model, source, settings=equivalence, sandbox=box,
                                                                   memo=memo),
                        {"profile.json": shown}, "fast.json", "twin_evidence.json")
        return search_twin(target, kind, (loaded, text, root), llm, settings, equivalence, start, progress)


@dataclasses.dataclass(frozen=True)
class TwinKind:
    """What differs between the kinds of twin a bundle's model gets (a fast Python twin, a JAX twin): the
    bundle's kind of twin (``cwm.bundle.twin.FILES``), the final check of the accepted candidate (its
    evidence), the files the run keeps beside its store, and the names of its outcome and evidence files."""

    target: str
    check: Callable[[str], dict[str, JSON]]
    kept: dict[str, Any]
    outcome_file: str
    evidence_file: str


def search_twin(target: Target, kind: TwinKind, where: tuple[Any, str, Path], llm: Client,
                settings: SynthesisSettings, equivalence: EquivalenceSettings, start: float,
                progress: Progress | None) -> FastResult:
    """The tree search for a twin of a loaded bundle's model, the accepted candidate checked once more (its
    evidence) and saved in the bundle with that evidence; the run's outputs written to its store."""
    loaded, text, root = where
    model = loaded.sources["model.py"]
    config = _config(target, loaded.spec, llm, settings, text, equivalence)
    store = open_store(root, config, settings, check_key=sha(model + json.dumps(_bound(equivalence))))
    for name, value in kind.kept.items():
        store.write_json(name, value)
    engine = run_search(target, llm, store, settings.replace(strategy="tree"), progress=progress)  # tree only
    accepted = engine.passing[0].source if engine.passing else None
    evidence = None if accepted is None else kind.check(accepted)
    result = result_of(engine, store, config, None, time.monotonic() - start, rules=games.rules_label(loaded.spec, text))
    run_report.write_outputs(store, result)
    if accepted is not None and evidence is not None and evidence["verdict"] == "equivalent":
        store.write_json(kind.evidence_file, evidence)
        save_twin(loaded.path, accepted, evidence, provenance=_provenance(result, engine.passing[0].id, root),
                  target=kind.target)
    else:
        accepted = evidence = None
    store.write_json(kind.outcome_file, {"accepted": None if accepted is None else engine.passing[0].id,
                                         "bundle": str(loaded.path)})
    return FastResult(result, accepted, evidence, str(loaded.path))


def _profile(root: Path, model: str, box: Sandbox) -> dict[str, Any]:
    """The run's stored profile (a resumed run shows the prompts it showed), else the model's profile now."""
    stored = root / "profile.json"
    if stored.is_file():
        value = loads_bounded(read_bounded(stored, RUN_FILE_BYTES, what="run file"), where=str(stored))
        if isinstance(value, dict):
            return value
    measured = profile_model(model, sandbox=box)
    if isinstance(measured, str):
        raise UsageError(f"the bundle's model could not be profiled: {measured}")
    return measured


def _bound(equivalence: EquivalenceSettings) -> dict[str, Any]:
    return {"p": equivalence.p, "delta": equivalence.delta, "kinds": list(equivalence.kinds),
            "simulations": equivalence.simulations, "max_steps": equivalence.max_steps, "seed": equivalence.seed}


def _config(target: Target, spec: games.GameSpec, llm: Client, settings: SynthesisSettings, text: str,
            equivalence: EquivalenceSettings) -> dict[str, Any]:
    """The run's resume key (``config.json``)."""
    s = settings
    return {"target": target.name, "game": spec.name, "strategy": "tree", "seed": s.seed, "model": llm.model,
            "concurrency": s.concurrency, "tree": dataclasses.asdict(s.tree), "request": dataclasses.asdict(s.request),
            "rules_sha": sha(text)[:16], "prompt_hashes": target.prompt_hashes(), "budget": s.budget,
            "equivalence": _bound(equivalence),
            **({"profile_sha": sha(target.context["profile"])[:16]} if "profile" in target.context else {})}


def _provenance(result: SynthesisResult, node: int, root: Path) -> dict[str, JSON]:
    return {"llm": result.model, "seed": result.seed, "budget": result.budget, "llm_calls": result.llm_calls,
            "cost_usd": result.cost_usd, "prompt_hashes": dict(result.prompt_hashes), "node": node,
            "run_dir": str(root.resolve())}


__all__ = ["FastResult", "TwinKind", "search_twin", "synthesize_fast"]
