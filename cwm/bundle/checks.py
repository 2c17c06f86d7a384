"""A bundle's code checked in the sandbox, at export and at load (every file passes the static gate, loads
and defines its contract, and the model is checked on the stored games and in random play), and the
manifest that records what was checked."""

from __future__ import annotations

import contextlib
import datetime as _dt
import json
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from cwm import checks, games
from cwm.bundle.files import (
    BUNDLE_FORMAT,
    CODE_FILES,
    GAME_FILE,
    BundleError,
    provenance_hash,
    read_json_object,
    sha256,
)
from cwm.bundle.game import same_game
from cwm.games import trajectories
from cwm.games.trajectories import views_of
from cwm.llm.provenance import ProvenanceError, checked_fields
from cwm.model import CONTRACT_VERSION, WorldModel
from cwm.sandbox import RANDOM_PLAY_JOB, Sandbox, load_source
from cwm.sandbox.checkers import inference_checker
from cwm.sandbox.jobs import CONTRACTS
from cwm.types import JSON, VERSION, CheckReport, ModelLoadError, Trajectory, error_report

LOAD_JOB = "cwm.sandbox.jobs.check:load_contract"


def _twin_passes(twin: CheckReport, model: CheckReport, where: str) -> None:
    """A twin must pass every stored-trajectory check its model passes (its evidence is the author's word).

    Raises:
      BundleError: one line naming the first check the twin fails that the model passes.
    """
    if twin.error:
        raise BundleError(f"{where}: twin.py failed its sandbox check: {first_line(twin.error)}")
    short = [t for t, done in model.by_type.items() if t not in twin.by_type or twin.by_type[t].passed < done.passed]
    if short or twin.transitions_passed < model.transitions_passed:
        first = twin.failures[0].render() if twin.failures else f"fewer {', '.join(short) or 'transition'} checks passed"
        raise BundleError(f"{where}: twin.py fails stored-trajectory checks its model passes "
                          f"({twin.passed} of {twin.executed} against {model.passed}): {first_line(first)}")


def checked(sources: Mapping[str, str], spec: games.GameSpec, train: Sequence[Trajectory], *, where: str,
             isolate: bool = True, random_games: int = 0, box: Any = None) -> CheckReport:
    """Checks every code file of a bundle, in one sandbox (the code is untrusted) unless ``isolate`` is off:
    each passes the static gate, loads and defines its contract, the model is checked on ``train`` and then
    plays ``random_games`` random games (``checks.random_play_checks``).

    Returns:
      the model's check report on ``train``. ``box``: the sandbox to use (default: one of its own).

    Raises:
      BundleError: a file the gate rejects, that does not load or lacks a contract function (named with the
        sandbox's verdict), a model on which no check ran, or one that breaks the contract in random play.
    """
    others = {name: source for name, source in sources.items() if name != "model.py"}
    if isolate:
        with contextlib.nullcontext(box) if box is not None else Sandbox() as box:
            for name, source in others.items():
                result = box.run(LOAD_JOB, source, {"contract": CODE_FILES[name]})
                if not result.ok:
                    raise BundleError(f"{where}: {name} failed its sandbox check: {result.kind}: "
                                      f"{first_line(result.error)}")
            report = box.check_world_model(sources["model.py"], train)
            if "twin.py" in sources and not report.error:  # planned on in its place: the same checks
                _twin_passes(box.check_world_model(sources["twin.py"], train), report, where)
            play = None
            if random_games and not report.error:
                ran = box.run(RANDOM_PLAY_JOB, sources["model.py"], {"num_games": random_games, "seed": 0})
                play = CheckReport.from_json(ran.value) if ran.ok else error_report(f"{ran.kind}: {ran.error}")
    else:
        try:
            for name, source in others.items():
                load_source(source, name=f"{spec.name}_{Path(name).stem}", api=CONTRACTS[CODE_FILES[name]])
            module = load_source(sources["model.py"], name=f"{spec.name}_model")
        except ModelLoadError as e:
            raise BundleError(f"{where}: {first_line(str(e))}") from e
        # the checks call the model's functions directly: no codec (ids) needed
        report = checks.run_checks(module, train)
        play = checks.random_play_checks(WorldModel(module), num_games=random_games) if random_games else None
    if report.error:
        raise BundleError(f"{where}: model.py failed its sandbox check: {first_line(report.error)}")
    if report.executed == 0:
        raise BundleError(f"{where}: no checks ran on the model (empty trajectory set?)")
    if play is not None and not play.all_passed:
        first = play.failures[0].render() if play.failures else play.error
        raise BundleError(f"{where}: model failed random play at load: {first_line(first)}")
    return report


def inference_report(sources: Mapping[str, str], train: Sequence[Trajectory], *, isolate: bool = True,
                     box: Any = None) -> CheckReport | None:
    """The inference checks of a bundle's ``inference.py`` against its model on every player's view of the
    stored games (``None`` without an inference file), in the sandbox ``box`` (default: one of its own)
    unless ``isolate`` is off."""
    if "inference.py" not in sources:
        return None

    if not isolate:
        return inference_checker(views_of(train), world_model=sources["model.py"])(sources["inference.py"])
    with contextlib.nullcontext(box) if box is not None else Sandbox() as box:
        return inference_checker(views_of(train), world_model=sources["model.py"], sandbox=box)(sources["inference.py"])


def first_line(text: str) -> str:
    return text.strip().splitlines()[0] if text.strip() else "no reason given"


def trajectory_hash(items: Sequence[Trajectory]) -> str:
    """A content hash of a trajectory set (for provenance)."""
    blob = "\n".join(json.dumps(trajectories.to_json(t), sort_keys=True) for t in items)
    return sha256(blob.encode("utf-8"))[:16]


def manifest_for(spec: games.GameSpec, report: CheckReport, train: Sequence[Trajectory],
              provenance: dict[str, JSON], files: dict[str, str]) -> dict[str, JSON]:
    """The manifest of a new bundle; ``provenance_sha256`` covers the provenance as ``files`` covers the files.

    Raises:
      BundleError: a provenance field malformed (``cwm.llm.provenance.checked_fields``).
    """
    try:
        checked_fields(provenance, where="provenance")
    except ProvenanceError as e:
        raise BundleError(str(e)) from None
    return {
        "bundle_format": BUNDLE_FORMAT,
        "game": spec.name,
        "ground_truth": spec.openspiel,
        "contract_version": CONTRACT_VERSION,
        "cwm_version": VERSION,
        "created_at": _dt.datetime.now(_dt.timezone.utc).isoformat(timespec="seconds"),
        "trajectory_hash": trajectory_hash(train),
        "export_check": {"transition_accuracy": report.transition_accuracy, "pass_rate": report.pass_rate,
                         "by_type": {k: v.rate for k, v in report.by_type.items()}},
        "provenance": provenance,
        "provenance_sha256": provenance_hash(provenance),
        "game_module": {"file": GAME_FILE, "short_name": spec.openspiel} if spec.module.endswith(".py") else None,
        "files": files,
    }


def inference_of(run_dir: Path, game: games.GameSpec, world_model: str) -> tuple[str, dict[str, JSON]]:
    """The best inference program of an open-deck inference run written for ``world_model``, and its record."""
    result, config = read_json_object(run_dir / "result.json"), read_config(run_dir)
    if result.get("target") != "inference" or not result.get("best_source"):
        raise BundleError(f"{run_dir}: not a finished inference run with a usable program")
    if not same_game(game, str(result.get("game"))):
        raise BundleError(f"{run_dir}: the inference run is of {result.get('game')!r}, not {game.name!r}")
    if config.get("world_model_sha") != sha256(world_model.encode("utf-8"))[:16]:  # as the run recorded it
        raise BundleError(f"{run_dir}: the inference function was written for another world model than the one "
                          f"being exported")
    keys = ("model", "seed", "budget", "solved", "train_accuracy", "test_accuracy", "llm_calls", "cost_usd",
            "prompt_hashes")
    return str(result["best_source"]), {k: result.get(k) for k in keys} | {"run_dir": str(run_dir.resolve())}


def read_config(run_dir: Path) -> dict[str, Any]:
    file = run_dir / "config.json"
    return read_json_object(file) if file.is_file() else {}
