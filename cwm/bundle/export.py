"""Exporting a bundle: ``export_bundle`` writes a checked world model (and its extras) as a bundle directory, and
``export_run`` exports a finished synthesis run: its game and best program (with an inference run's program
beside it)."""

from __future__ import annotations

import dataclasses
import json
import shutil
from collections.abc import Sequence
from pathlib import Path

from cwm import games
from cwm.bundle.checks import checked, inference_of, manifest_for, read_config
from cwm.bundle.files import (
    CODE_FILES,
    GAME_FILE,
    TWIN_FILE,
    BundleError,
    read_json_object,
    read_manifest,
    sha256,
)
from cwm.bundle.game import same_game
from cwm.games import trajectories
from cwm.llm.provenance import PROVENANCE_FILE, ProvenanceError, read_provenance
from cwm.types import JSON, Trajectory

_EXTRA_FILES = frozenset(CODE_FILES) - {"model.py", TWIN_FILE}  # a twin joins with its evidence (cwm.bundle.twin)


def check_target(out: Path, overwrite: bool, *, keep: Path | None = None) -> None:
    """Refuses to write over anything but an earlier bundle (and never over the run being exported)."""
    if not out.exists():
        return
    if not overwrite:
        raise BundleError(f"{out} already exists; choose another path or overwrite it (--overwrite)")
    try:
        read_manifest(out)
    except BundleError as e:
        raise BundleError(f"{out} exists and is not a cwm bundle; refusing to replace it ({e})") from e
    if keep is not None and (keep.resolve() == out.resolve() or out.resolve() in keep.resolve().parents):
        raise BundleError(f"{out} contains the run being exported; choose another path")


def run_game(run_dir: str | Path) -> str:
    """The game a finished synthesis run directory (``cwm synthesize --out``) was synthesized on.

    Raises:
      BundleError: the run has no readable ``result.json``, or it names no game.
    """
    result_file = Path(run_dir) / "result.json"
    if not result_file.is_file():
        raise BundleError(f"{run_dir}: no result.json; is it a finished synthesis run directory?")
    game = read_json_object(result_file).get("game")
    if type(game) is not str:
        raise BundleError(f"{result_file}: field 'game' is missing or not a string")
    return game


def export_run(run_dir: str | Path, out: str | Path, *, game: str | None = None, overwrite: bool = False,
               inference_run: str | Path | None = None) -> Path:
    """Exports the best program of a finished synthesis run directory (``cwm synthesize --out``).

    Args:
      run_dir: the run directory: a world-model run, or a closed-deck (joint) run whose program is the
        world model and the inference function at once (written as both ``model.py`` and ``inference.py``).
      out: the bundle directory.
      game: the run's game as you name it here (a module game's file may have moved since the run);
        default: the game the run recorded.
      overwrite: replace an earlier bundle at ``out``.
      inference_run: an open-deck inference run for this world model; its best program becomes
        ``inference.py`` (it must have been written for exactly this run's best program).

    Raises:
      BundleError: the run has no ``result.json`` or no usable program, ``game`` is another game, or the
        inference run is of another game or another world model.
    """
    run_dir = Path(run_dir)
    recorded = run_game(run_dir)
    spec = games.resolve(game or recorded)
    if not same_game(spec, recorded):
        raise BundleError(f"{run_dir}: the run synthesized {recorded!r}, not {spec.name!r}")
    check_target(Path(out), overwrite, keep=run_dir)
    result, config = read_json_object(run_dir / "result.json"), read_config(run_dir)
    if not result.get("best_source"):
        raise BundleError(f"{run_dir}: the run produced no usable program to export")
    train = trajectories.load_open(run_dir / "train.jsonl")
    keys = ("strategy", "model", "seed", "budget", "solved", "train_accuracy", "test_accuracy", "train_by_type",
            "test_by_type", "llm_calls", "input_tokens", "output_tokens", "cost_usd", "prompt_hashes")
    provenance: dict[str, JSON] = {k: result.get(k) for k in keys}
    provenance["llm"] = result.get("model")
    # the generator's settings: request (temperature, tokens, thinking), tree search, training set, rules
    for key in ("request", "tree", "num_train", "train_pool", "examples_per_type", "concurrency", "rules_sha"):
        if key in config:
            provenance[key] = config[key]
    if "rules" in result:  # which rules the prompts held (absent in results from before it was recorded)
        if not games.is_rules_label(result["rules"]):
            raise BundleError(f"{run_dir / 'result.json'}: field 'rules' must be spec, prose or sha256:<hex>")
        provenance["rules"] = result["rules"]
    provenance["run_dir"] = str(run_dir.resolve())
    # what the program was written as: the display and `cwm inspect` name its accuracies by it
    target = result.get("target", config.get("target", "world_model"))
    if type(target) is str:
        provenance["target"] = target
    provenance |= run_provenance(run_dir)
    source = str(result["best_source"])
    named = dataclasses.replace(spec, name=recorded)  # named as recorded: the stored trajectories carry that name
    extra = {"inference.py": source} if result.get("target") == "joint" else {}
    if inference_run is not None:
        extra["inference.py"], record = inference_of(Path(inference_run), named, source)
        provenance["inference"] = record | run_provenance(Path(inference_run))
    return export_bundle(out, game=named, model_source=source,
                         train=train, extra_sources=extra, provenance=provenance, overwrite=overwrite)



def run_provenance(run_dir: Path) -> dict[str, JSON]:
    """Who answered a synthesis run's requests and how (its ``provenance.json``: ``answered_by``, ``relay``,
    ``date``, ``replies``, ``prompts_hashed``), every field checked; ``{}`` for a run written without one.

    Raises:
      BundleError: the file is there but does not read or holds a malformed field (one line naming it).
    """
    file = run_dir / PROVENANCE_FILE
    if not file.exists():
        return {}
    try:
        return read_provenance(file).to_json()
    except ProvenanceError as e:
        raise BundleError(str(e)) from None


def export_bundle(
    out: str | Path,
    *,
    game: str | games.GameSpec,
    model_source: str,
    train: Sequence[Trajectory],
    extra_sources: dict[str, str] | None = None,
    provenance: dict[str, JSON] | None = None,
    overwrite: bool = False,
) -> Path:
    """Writes a bundle directory, checking every code file in the sandbox first (the model's report is stored).

    Args:
      out: the bundle directory (must not exist unless ``overwrite``).
      game: the game's registry name, OpenSpiel string or ``path/to/module.py:short_name`` (whose file the
        bundle carries as ``game.py``).
      model_source: the world model's source.
      train: the trajectories the model was synthesized from (stored and re-checked at load).
      extra_sources: optional ``{"inference.py": ..., "value.py": ..., "encoder.py": ...}``.
      provenance: generator LLM and settings, prompt hashes, seed, accuracies, LLM calls and cost, ...

    Raises:
      BundleError: ``out`` exists, an extra file name is not one a bundle may hold, or a code file fails its
        sandbox check.
    """
    out = Path(out)
    check_target(out, overwrite)
    spec = games.resolve(game)
    extra = dict(extra_sources or {})
    unknown = set(extra) - _EXTRA_FILES
    if unknown:
        raise BundleError(f"bundle files may be {sorted(_EXTRA_FILES)}, not {sorted(unknown)}")
    files = {"model.py": model_source, **extra}
    report = checked(files, spec, train, where="export")
    tmp = out.with_name(out.name + ".partial")
    shutil.rmtree(tmp, ignore_errors=True)
    tmp.mkdir(parents=True)
    for name, text in files.items():
        (tmp / name).write_text(text, encoding="utf-8")
    (tmp / "check_report.json").write_text(json.dumps(report.to_json(), indent=1), encoding="utf-8")
    trajectories.save(tmp / "trajectories.jsonl", train)
    hashed = [*files, "check_report.json", "trajectories.jsonl"]
    if spec.module.endswith(".py"):  # a user's module game travels with the bundle
        shutil.copyfile(spec.module, tmp / GAME_FILE)
        hashed.append(GAME_FILE)
    manifest = manifest_for(spec, report, train, provenance or {},
                         {name: sha256((tmp / name).read_bytes()) for name in hashed})
    (tmp / "manifest.json").write_text(json.dumps(manifest, indent=2, sort_keys=True), encoding="utf-8")
    if out.exists():
        shutil.rmtree(out)
    tmp.replace(out)
    return out


__all__ = ["check_target", "export_bundle", "export_run", "run_game", "run_provenance"]
