"""Exported bundles: a synthesized model as a versioned directory with provenance, re-checked when loaded.

Layout of a bundle directory::

    manifest.json        format version, game, contract version, generator, accuracy, file hashes, ...
    model.py             the world model (always)
    inference.py         inference functions (imperfect information, when synthesized)
    value.py             value function (when synthesized)
    check_report.json    the checks the model passed when exported
    trajectories.jsonl   the training trajectories, re-checked at load time

``load_bundle`` verifies the format version and every file's SHA-256, re-runs the static gate, and
runs a quick conformance check (the stored trajectories plus random play) before returning a model.
"""

from __future__ import annotations

import dataclasses
import datetime as _dt
import hashlib
import json
import shutil
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import pyspiel

from cwm import checks, games, trajectories
from cwm.model import CONTRACT_VERSION, INFERENCE_API, VALUE_API, ActionCodec, WorldModel, load_source
from cwm.types import JSON, CheckReport, CwmError, Trajectory
from planners.budget import call_budget

BUNDLE_FORMAT = 1
_OPTIONAL = {"inference.py": INFERENCE_API, "value.py": VALUE_API}
_REQUIRED_FILES = ("model.py", "check_report.json", "trajectories.jsonl")
GAME_FILE = "game.py"  # a user's game engine (module games only), so the bundle works on another machine
_ALLOWED_FILES = frozenset({*_REQUIRED_FILES, *_OPTIONAL, GAME_FILE})


class BundleError(CwmError, ValueError):
    """A bundle that is missing files, of an unknown version, tampered with, or failing its checks."""


@dataclasses.dataclass(frozen=True)
class Bundle:
    """A loaded, verified bundle.

    Attributes:
      path: the bundle directory.
      manifest: the parsed ``manifest.json``.
      model: the world model, ready to plan on (action ids from the game's ground truth).
      sources: file name -> source text of every code file.
      check_report: the load-time conformance report.
      spec: the game (its engine: the registry's, OpenSpiel's, or the one the bundle carries).
    """

    path: Path
    manifest: dict[str, JSON]
    model: WorldModel
    sources: dict[str, str]
    check_report: CheckReport
    spec: games.GameSpec

    @property
    def game(self) -> str:
        return str(self.manifest["game"])

    def as_openspiel_game(self, *, short_name: str | None = None) -> pyspiel.Game:
        """Registers the model as an OpenSpiel game (unique name) so any OpenSpiel algorithm runs on it."""
        from cwm.adapter import as_openspiel_game

        return as_openspiel_game(self.model, reference=games.load_game(self.spec), short_name=short_name)

    def module(self, file_name: str) -> Any:
        """The loaded module of an optional code file (``inference.py`` or ``value.py``)."""
        if file_name not in self.sources:
            raise BundleError(f"{self.path}: bundle has no {file_name}")
        return load_source(self.sources[file_name], name=f"{self.game}_{Path(file_name).stem}",
                           api=_OPTIONAL.get(file_name, ()))


def _sha256(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def trajectory_hash(items: Sequence[Trajectory]) -> str:
    """A content hash of a trajectory set (for provenance)."""
    blob = "\n".join(json.dumps(trajectories.to_json(t), sort_keys=True) for t in items)
    return _sha256(blob.encode("utf-8"))[:16]


def export_bundle(
    out: str | Path,
    *,
    game: str,
    model_source: str,
    train: Sequence[Trajectory],
    extra_sources: dict[str, str] | None = None,
    provenance: dict[str, JSON] | None = None,
    overwrite: bool = False,
) -> Path:
    """Writes a bundle directory, checking the model on ``train`` first (the report is stored with it).

    Args:
      out: the bundle directory (must not exist unless ``overwrite``).
      game: the game's registry name or OpenSpiel string.
      model_source: the world model's source.
      train: the trajectories the model was synthesized from (stored and re-checked at load).
      extra_sources: optional ``{"inference.py": ..., "value.py": ...}``.
      provenance: generator LLM and settings, prompt hashes, seed, accuracies, LLM calls and cost, ...

    Raises:
      BundleError: ``out`` exists, or an extra file name is not one a bundle may hold.
    """
    out = Path(out)
    _check_target(out, overwrite)
    spec = games.resolve(game)
    extra = dict(extra_sources or {})
    unknown = set(extra) - set(_OPTIONAL)
    if unknown:
        raise BundleError(f"bundle files may be {sorted(_OPTIONAL)}, not {sorted(unknown)}")
    report = _checked(model_source, spec, train, where="export")
    tmp = out.with_name(out.name + ".partial")
    shutil.rmtree(tmp, ignore_errors=True)
    tmp.mkdir(parents=True)
    files = {"model.py": model_source, **extra}
    for name, text in files.items():
        (tmp / name).write_text(text, encoding="utf-8")
    (tmp / "check_report.json").write_text(json.dumps(report.to_json(), indent=1), encoding="utf-8")
    trajectories.save(tmp / "trajectories.jsonl", train)
    hashed = [*files, "check_report.json", "trajectories.jsonl"]
    if spec.module.endswith(".py"):  # a user's module game travels with the bundle
        shutil.copyfile(spec.module, tmp / GAME_FILE)
        hashed.append(GAME_FILE)
    manifest = _manifest(spec, report, train, provenance or {},
                         {name: _sha256((tmp / name).read_bytes()) for name in hashed})
    (tmp / "manifest.json").write_text(json.dumps(manifest, indent=2, sort_keys=True), encoding="utf-8")
    if out.exists():
        shutil.rmtree(out)
    tmp.replace(out)
    return out


def _check_target(out: Path, overwrite: bool, *, keep: Path | None = None) -> None:
    """Refuses to write over anything but an earlier bundle (and never over the run being exported)."""
    if not out.exists():
        return
    if not overwrite:
        raise BundleError(f"{out} already exists; choose another path or overwrite it (--overwrite)")
    try:
        _read_manifest(out)
    except BundleError as e:
        raise BundleError(f"{out} exists and is not a cwm bundle; refusing to replace it ({e})") from e
    if keep is not None and (keep.resolve() == out.resolve() or out.resolve() in keep.resolve().parents):
        raise BundleError(f"{out} contains the run being exported; choose another path")


def export_run(run_dir: str | Path, out: str | Path, *, overwrite: bool = False) -> Path:
    """Exports the best program of a finished synthesis run directory (``cwm synthesize --out``).

    Raises:
      BundleError: the run has no ``result.json`` or no usable program.
    """
    run_dir = Path(run_dir)
    result_file = run_dir / "result.json"
    if not result_file.is_file():
        raise BundleError(f"{run_dir}: no result.json; is it a finished synthesis run directory?")
    _check_target(Path(out), overwrite, keep=run_dir)
    result, config = _read_json(result_file), _read_json(run_dir / "config.json", missing_ok=True)
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
    return export_bundle(out, game=str(result["game"]), model_source=str(result["best_source"]), train=train,
                         provenance=provenance, overwrite=overwrite)


def _read_json(path: Path, *, missing_ok: bool = False) -> dict[str, Any]:
    if missing_ok and not path.is_file():
        return {}
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, json.JSONDecodeError) as e:
        raise BundleError(f"{path}: cannot be read as JSON ({e})") from e
    if not isinstance(data, dict):
        raise BundleError(f"{path}: expected a JSON object")
    return data


def _manifest(spec: games.GameSpec, report: CheckReport, train: Sequence[Trajectory],
              provenance: dict[str, JSON], files: dict[str, str]) -> dict[str, JSON]:
    from cwm import __version__

    return {
        "bundle_format": BUNDLE_FORMAT,
        "game": spec.name,
        "ground_truth": spec.openspiel,
        "contract_version": CONTRACT_VERSION,
        "cwm_version": __version__,
        "created_at": _dt.datetime.now(_dt.timezone.utc).isoformat(timespec="seconds"),
        "trajectory_hash": trajectory_hash(train),
        "export_check": {"transition_accuracy": report.transition_accuracy, "pass_rate": report.pass_rate,
                         "by_type": {k: v.rate for k, v in report.by_type.items()}},
        "provenance": provenance,
        "game_module": {"file": GAME_FILE, "short_name": spec.openspiel} if spec.module.endswith(".py") else None,
        "files": files,
    }


def _checked(source: str, spec: games.GameSpec, train: Sequence[Trajectory], *, where: str,
             isolate: bool = True) -> CheckReport:
    """The checks of ``source`` on ``train``: in the sandbox (the code is untrusted) unless ``isolate`` is off.

    Raises:
      BundleError: the static gate rejects the code, it does not load, or no check ran.
    """
    if isolate:
        from cwm.sandbox import Sandbox

        with Sandbox() as box:
            report = box.check_world_model(source, train)
    else:
        # the checks call the model's functions directly: no codec (ids) needed
        report = checks.run_checks(load_source(source, name=f"{spec.name}_model"), train)
    if report.error:
        raise BundleError(f"{where}: the model could not be checked: {report.error}")
    if report.executed == 0:
        raise BundleError(f"{where}: no checks ran on the model (empty trajectory set?)")
    return report


def load_bundle(path: str | Path, *, random_games: int = 3, call_budget_s: float | None = 2.0,
                isolate: bool = True, trust_game_module: bool = False) -> Bundle:
    """Loads and verifies a bundle.

    The model's code is untrusted: its checks run in the sandbox first (``isolate``), and only then is it
    loaded in-process for fast planning, every call under a time budget.

    Args:
      path: the bundle directory.
      random_games: random-play games run as part of the quick conformance check.
      call_budget_s: seconds any one model call may take during planning before it raises
        ``ModelContractError`` (``None``: no budget, about a third faster).
      isolate: run the conformance checks in the sandbox (turn off only for bundles you wrote yourself).
      trust_game_module: allow importing the game engine a bundle of a user's module game carries
        (``game.py``: ordinary Python that runs unsandboxed, so only for bundles from a trusted source).

    Raises:
      BundleError: missing file, unknown format or contract version, a file whose hash does not match the
        manifest (edited or corrupted), an untrusted game engine, code the static gate rejects, or a model
        failing its conformance check.
    """
    path = Path(path)
    manifest = _read_manifest(path)
    files: dict[str, str] = manifest["files"]  # type: ignore[assignment]
    for name, digest in files.items():
        file = path / name
        if not file.is_file():
            raise BundleError(f"{path}: {name} is missing")
        if _sha256(file.read_bytes()) != digest:
            raise BundleError(f"{path}: {name} does not match its hash in manifest.json (edited or corrupted)")
    sources = {n: (path / n).read_text(encoding="utf-8") for n in files if n.endswith(".py") and n != GAME_FILE}
    spec = _bundle_game(path, manifest, trust_game_module)
    try:
        train = trajectories.load_open(path / "trajectories.jsonl")
        if {t.game for t in train} != {manifest["game"]}:
            raise BundleError(f"trajectories.jsonl holds games {sorted({t.game for t in train})}, "
                              f"not {manifest['game']!r}")
        report = _checked(sources["model.py"], spec, train, where=str(path), isolate=isolate)
        stored = CheckReport.from_json(_read_json(path / "check_report.json"))
        if (report.passed, report.executed) != (stored.passed, stored.executed):
            raise BundleError(
                f"its checks now pass {report.passed}/{report.executed}, but {stored.passed}/{stored.executed} "
                f"when it was exported; it is not the model that was exported")
        guard = {} if call_budget_s is None else {"guard": call_budget(call_budget_s)}
        model = WorldModel(load_source(sources["model.py"], name=f"{spec.name}_model"),
                           codec=ActionCodec.from_game(games.load_game(spec)), name=f"bundle:{path.name}", **guard)
    except CwmError as e:
        raise BundleError(f"{path}: model failed its load check: {e}") from e
    play = checks.random_play_checks(model, num_games=random_games, seed=0)
    if not play.all_passed:
        first = play.failures[0].render() if play.failures else play.error
        raise BundleError(f"{path}: model failed random play at load: {first}")
    return Bundle(path=path, manifest=manifest, model=model, sources=sources, check_report=report, spec=spec)


def _bundle_game(path: Path, manifest: dict[str, JSON], trust: bool) -> games.GameSpec:
    """The bundle's game: from the registry or OpenSpiel, or the engine the bundle carries (if trusted)."""
    module: Any = manifest.get("game_module")
    if not module:
        return games.resolve(str(manifest["game"]))
    short_name = str(module["short_name"])
    if short_name in pyspiel.registered_names():  # this process already has the engine (imported by the user)
        return dataclasses.replace(games.resolve(short_name), name=str(manifest["game"]))
    if not trust:
        raise BundleError(f"{path}: the bundle carries its game's engine ({GAME_FILE}), ordinary Python that "
                          f"would run unsandboxed; load it with trust_game_module=True (--trust-game-module) "
                          f"only if you trust where the bundle came from")
    spec = games.resolve(f"{path / GAME_FILE}:{short_name}")
    return dataclasses.replace(spec, name=str(manifest["game"]))


_MANIFEST_FIELDS: dict[str, type | tuple[type, ...]] = {
    "bundle_format": int, "game": str, "ground_truth": str, "contract_version": str, "files": dict,
}


def _read_manifest(path: Path) -> dict[str, JSON]:
    """The parsed, structurally valid manifest of a bundle directory (names every problem it finds)."""
    if not path.is_dir():
        raise BundleError(f"bundle {str(path)!r} is not a directory")
    file = path / "manifest.json"
    if not file.is_file():
        raise BundleError(f"{path}: manifest.json is missing (not a cwm bundle?)")
    try:
        manifest = json.loads(file.read_text(encoding="utf-8"))
    except json.JSONDecodeError as e:
        raise BundleError(f"{path}: manifest.json is not valid JSON ({e.msg}, line {e.lineno})") from e
    if not isinstance(manifest, dict):
        raise BundleError(f"{path}: manifest.json is not a JSON object")
    version = manifest.get("bundle_format")
    if version != BUNDLE_FORMAT:
        raise BundleError(f"{path}: bundle format {version!r} is not supported (this cwm reads {BUNDLE_FORMAT})")
    for key, kind in _MANIFEST_FIELDS.items():
        if not isinstance(manifest.get(key), kind):
            raise BundleError(f"{path}: manifest.json field {key!r} is missing or not a {getattr(kind, '__name__', kind)}")
    if manifest["contract_version"] != CONTRACT_VERSION:
        raise BundleError(f"{path}: the model was written for contract version {manifest['contract_version']!r}; "
                          f"this cwm implements version {CONTRACT_VERSION!r}")
    names = set(manifest["files"])
    if not names <= _ALLOWED_FILES or not set(_REQUIRED_FILES) <= names:
        raise BundleError(f"{path}: manifest.json lists files {sorted(names)}; a bundle holds "
                          f"{list(_REQUIRED_FILES)} and optionally {sorted(_ALLOWED_FILES - set(_REQUIRED_FILES))}")
    if not all(isinstance(v, str) for v in manifest["files"].values()):
        raise BundleError(f"{path}: manifest.json file hashes must be strings")
    return manifest
