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
from cwm.sandbox import call_budget
from cwm.types import JSON, CheckReport, CwmError, Trajectory

BUNDLE_FORMAT = 1
_OPTIONAL = {"inference.py": INFERENCE_API, "value.py": VALUE_API}


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
    """

    path: Path
    manifest: dict[str, JSON]
    model: WorldModel
    sources: dict[str, str]
    check_report: CheckReport

    @property
    def game(self) -> str:
        return str(self.manifest["game"])

    def as_openspiel_game(self, *, short_name: str | None = None) -> pyspiel.Game:
        """Registers the model as an OpenSpiel game (unique name) so any OpenSpiel algorithm runs on it."""
        from cwm.adapter import as_openspiel_game

        return as_openspiel_game(self.model, reference=games.load_game(self.game), short_name=short_name)

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
    if out.exists() and not overwrite:
        raise BundleError(f"{out} already exists; choose another path or pass overwrite=True")
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
    manifest = _manifest(spec, report, train, provenance or {},
                         {name: _sha256((tmp / name).read_bytes()) for name in hashed})
    (tmp / "manifest.json").write_text(json.dumps(manifest, indent=2, sort_keys=True), encoding="utf-8")
    if out.exists():
        shutil.rmtree(out)
    tmp.replace(out)
    return out


def export_run(run_dir: str | Path, out: str | Path, *, overwrite: bool = False) -> Path:
    """Exports the best program of a finished synthesis run directory (``cwm synthesize --out``).

    Raises:
      BundleError: the run has no ``result.json`` or no usable program.
    """
    run_dir = Path(run_dir)
    result_file = run_dir / "result.json"
    if not result_file.is_file():
        raise BundleError(f"{run_dir}: no result.json; is it a finished synthesis run directory?")
    result = json.loads(result_file.read_text(encoding="utf-8"))
    if not result.get("best_source"):
        raise BundleError(f"{run_dir}: the run produced no usable program to export")
    train = trajectories.load_open(run_dir / "train.jsonl")
    keys = ("strategy", "model", "seed", "budget", "solved", "train_accuracy", "test_accuracy", "train_by_type",
            "test_by_type", "llm_calls", "input_tokens", "output_tokens", "cost_usd", "prompt_hashes")
    provenance: dict[str, JSON] = {k: result.get(k) for k in keys}
    provenance["llm"] = result.get("model")
    provenance["run_dir"] = str(run_dir.resolve())
    return export_bundle(out, game=str(result["game"]), model_source=str(result["best_source"]), train=train,
                         provenance=provenance, overwrite=overwrite)


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
        module = load_source(source, name=f"{spec.name}_model")
        wm = WorldModel(module, codec=ActionCodec.from_game(games.load_game(spec)), name=f"{spec.name} model")
        report = checks.run_checks(wm, train)
    if report.error:
        raise BundleError(f"{where}: the model could not be checked: {report.error}")
    if report.executed == 0:
        raise BundleError(f"{where}: no checks ran on the model (empty trajectory set?)")
    return report


def load_bundle(path: str | Path, *, random_games: int = 3, call_budget_s: float | None = 2.0,
                isolate: bool = True) -> Bundle:
    """Loads and verifies a bundle.

    The model's code is untrusted: its checks run in the sandbox first (``isolate``), and only then is it
    loaded in-process for fast planning, every call under a time budget.

    Args:
      path: the bundle directory.
      random_games: random-play games run as part of the quick conformance check.
      call_budget_s: seconds any one model call may take during planning before it raises
        ``ModelContractError`` (``None``: no budget, about a third faster).
      isolate: run the conformance checks in the sandbox (turn off only for bundles you wrote yourself).

    Raises:
      BundleError: missing file, unknown format version, a file whose hash does not match the manifest
        (edited or corrupted), code the static gate rejects, or a model failing its conformance check.
    """
    path = Path(path)
    manifest = _read_manifest(path)
    files: dict[str, str] = manifest.get("files", {})  # type: ignore[assignment]
    for name, digest in files.items():
        file = path / name
        if not file.is_file():
            raise BundleError(f"{path}: {name} is missing")
        if _sha256(file.read_bytes()) != digest:
            raise BundleError(f"{path}: {name} does not match its hash in manifest.json (edited or corrupted)")
    if "model.py" not in files:
        raise BundleError(f"{path}: manifest lists no model.py")
    sources = {n: (path / n).read_text(encoding="utf-8") for n in files if n.endswith(".py")}
    spec = games.resolve(str(manifest["game"]))
    try:
        train = trajectories.load_open(path / "trajectories.jsonl", game=spec.name)
        report = _checked(sources["model.py"], spec, train, where=str(path), isolate=isolate)
        stored = CheckReport.from_json(json.loads((path / "check_report.json").read_text(encoding="utf-8")))
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
    return Bundle(path=path, manifest=manifest, model=model, sources=sources, check_report=report)


def _read_manifest(path: Path) -> dict[str, JSON]:
    if not path.is_dir():
        raise BundleError(f"bundle {str(path)!r} is not a directory")
    file = path / "manifest.json"
    if not file.is_file():
        raise BundleError(f"{path}: manifest.json is missing (not a cwm bundle?)")
    try:
        manifest = json.loads(file.read_text(encoding="utf-8"))
    except json.JSONDecodeError as e:
        raise BundleError(f"{path}: manifest.json is not valid JSON ({e.msg}, line {e.lineno})") from e
    version = manifest.get("bundle_format") if isinstance(manifest, dict) else None
    if version != BUNDLE_FORMAT:
        raise BundleError(f"{path}: bundle format {version!r} is not supported (this cwm reads {BUNDLE_FORMAT})")
    return manifest


def describe(bundle: Bundle) -> str:
    """A human-readable summary for ``cwm inspect``."""
    m = bundle.manifest
    prov: dict[str, Any] = m.get("provenance", {})  # type: ignore[assignment]
    lines = [
        f"bundle {bundle.path}",
        f"  game: {m['game']} (ground truth {m['ground_truth']})",
        f"  format {m['bundle_format']}, contract {m['contract_version']}, cwm {m['cwm_version']}, "
        f"created {m['created_at']}",
        f"  files: {', '.join(sorted(m['files']))}",  # type: ignore[arg-type]
        f"  load check: {bundle.check_report.summary().splitlines()[0]}",
    ]
    for key in ("llm", "strategy", "seed", "solved", "train_accuracy", "test_accuracy", "llm_calls", "cost_usd"):
        if key in prov:
            lines.append(f"  {key}: {prov[key]}")
    lines.append(f"  model.py: {len(bundle.sources['model.py'].splitlines())} lines")
    return "\n".join(lines)
