"""Exporting a finished synthesis run as a bundle: the run's game and best program (with an inference run's program
beside it), written by ``cwm.bundle.export_bundle``."""

from __future__ import annotations

import dataclasses
from pathlib import Path

from cwm import games
from cwm.bundle.checks import inference_of, read_config
from cwm.bundle.files import BundleError, read_json_object, read_manifest
from cwm.bundle.game import same_game
from cwm.games import trajectories
from cwm.types import JSON


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
    for key in ("request", "tree", "num_train", "examples_per_type", "concurrency", "rules_sha"):
        if key in config:
            provenance[key] = config[key]
    provenance["run_dir"] = str(run_dir.resolve())
    source = str(result["best_source"])
    extra = {"inference.py": source} if result.get("target") == "joint" else {}
    if inference_run is not None:
        extra["inference.py"], provenance["inference"] = inference_of(Path(inference_run), recorded, source)
    from cwm.bundle.load import export_bundle  # the bundle module imports this one

    # named as recorded: the stored trajectories carry that name
    return export_bundle(out, game=dataclasses.replace(spec, name=recorded), model_source=source,
                         train=train, extra_sources=extra, provenance=provenance, overwrite=overwrite)



__all__ = ["check_target", "export_run", "run_game"]
