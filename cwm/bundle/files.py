"""A bundle directory read as untrusted input: the manifest's exact shape, only the files it lists, their hashes.

Anything in a bundle may come from an attacker, the manifest and its hashes included (they can be rewritten
together), so every value is checked for its exact builtin type and shape before it is used, nothing is
read that the manifest does not list, every file's size is checked against its limit (``FILE_LIMITS``) before
a byte of it is read or hashed, every JSON value is parsed within bounds (``cwm.files.loads_bounded``), and
every problem is a one-line ``BundleError`` naming the file. The manifest's game is interpreted in
``cwm.bundle.game``.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import re
from pathlib import Path
from typing import Any

from cwm.contract import CONTRACT_VERSION
from cwm.files import RUN_FILE_BYTES, InputLimitError, loads_bounded, read_bounded
from cwm.games import trajectories
from cwm.llm.provenance import ProvenanceError, checked_fields
from cwm.types import JSON, CheckReport, CwmError, Trajectory, TrajectoryFormatError

BUNDLE_FORMAT = 1
MANIFEST = "manifest.json"
GAME_FILE = "game.py"  # a user's game engine (module games only), so the bundle works on another machine
# Every code file a bundle may hold, with the contract (``cwm.sandbox.jobs.CONTRACTS``) it must define.
CODE_FILES: dict[str, str] = {"model.py": "world_model", "inference.py": "inference", "value.py": "value",
                              "encoder.py": "encoder", "twin.py": "world_model"}
REQUIRED_FILES = ("model.py", "check_report.json", "trajectories.jsonl")
VALUE_TABLE = "value_tournament.json"  # the tournament that chose value.py (or kept none)
POLICY_WEIGHTS = "policy.npz"  # a trained PPO policy (plain arrays, read by cwm.bundle.policy), with encoder.py
TWIN_FILE = "twin.py"  # a faster module with the model's contract (cwm.bundle.twin), only with its evidence:
TWIN_EVIDENCE = "twin_evidence.json"  # the differential equivalence check's record (cwm.sandbox.equivalence)
# A JAX twin (cwm.jax_contract), gated under the jax import policy, only with its evidence (cwm.sandbox.jax_equivalence)
JAX_TWIN_FILE = "jax_twin.py"
JAX_TWIN_EVIDENCE = "jax_twin_evidence.json"
ALLOWED_FILES = frozenset({*REQUIRED_FILES, *CODE_FILES, GAME_FILE, VALUE_TABLE, POLICY_WEIGHTS, TWIN_EVIDENCE,
                           JAX_TWIN_FILE, JAX_TWIN_EVIDENCE})
_MIB = 1 << 20
# The most bytes each file of a bundle may hold, checked before it is read: each far above what an export
# writes, low enough that reading and hashing a hostile bundle cannot exhaust memory.
FILE_LIMITS: dict[str, int] = {
    MANIFEST: 1 * _MIB,  # fields, hashes and provenance: a few KB
    "check_report.json": 16 * _MIB,  # counts and the failures' texts
    "trajectories.jsonl": 256 * _MIB,  # the training games with every state (tens of KB to a few MB a game)
    VALUE_TABLE: 16 * _MIB,  # a tournament's table
    POLICY_WEIGHTS: 64 * _MIB,  # float32 weights: 256-unit layers, inputs of a few thousand
    TWIN_EVIDENCE: 1 * _MIB,  # counts, seeds, hashes and one divergence at most: a few KB
    JAX_TWIN_EVIDENCE: 1 * _MIB,
    JAX_TWIN_FILE: 4 * _MIB,
    GAME_FILE: 4 * _MIB,  # a user's game engine
    **dict.fromkeys(CODE_FILES, 4 * _MIB),  # LLM-written code: tens of KB
}
# The manifest's fields and their exact types (``game_module`` and ``provenance_sha256``, added later, are
# optional).
_FIELDS: dict[str, type] = {
    "bundle_format": int, "game": str, "ground_truth": str, "contract_version": str, "cwm_version": str,
    "created_at": str, "trajectory_hash": str, "export_check": dict, "provenance": dict, "files": dict,
}
_SHA256 = re.compile(r"[0-9a-f]{64}")


class BundleError(CwmError, ValueError):
    """A bundle that is missing files, of an unknown version, tampered with, or failing its checks."""


def sha256(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def provenance_hash(provenance: dict[str, Any]) -> str:
    """The manifest's ``provenance_sha256``: the SHA-256 of the provenance as canonical JSON (keys sorted, no
    spaces, ASCII), so an edit of any of its fields that leaves the hash alone is seen while key order and
    layout are not (an editor who recomputes the hash is not: ``provenance_seal``)."""
    text = json.dumps(provenance, sort_keys=True, separators=(",", ":"), ensure_ascii=True)
    return sha256(text.encode("ascii"))


def read_json_object(file: Path, limit: int | None = None) -> dict[str, Any]:
    """The JSON object in ``file``, read within bounds (``cwm.files.read_bounded``, ``loads_bounded``).

    Args:
      limit: the most bytes the file may hold (default: its ``FILE_LIMITS`` entry, or ``RUN_FILE_BYTES``).

    Raises:
      BundleError: the file cannot be read, is too large, is not UTF-8, not JSON (or nested too deeply, or a
        value over a bound), or not an object.
    """
    try:
        data = read_bounded(file, limit or FILE_LIMITS.get(file.name, RUN_FILE_BYTES), what="file")
    except InputLimitError as e:
        raise BundleError(str(e)) from None
    except OSError as e:
        raise BundleError(f"{file.parent}: {file.name} cannot be read ({e.strerror or e})") from e
    return _json_object(file, data)


def _json_object(file: Path, raw: bytes) -> dict[str, Any]:
    """The JSON object in ``raw``, the bytes of ``file``, parsed within bounds."""
    where = f"{file.parent}: {file.name}"
    try:
        data = loads_bounded(raw, where=where)
    except InputLimitError as e:
        raise BundleError(str(e)) from None
    except UnicodeDecodeError as e:
        raise BundleError(f"{where} is not UTF-8 text ({e.reason} at byte {e.start})") from e
    except json.JSONDecodeError as e:
        raise BundleError(f"{where} is not valid JSON ({e.msg}, line {e.lineno} column {e.colno})") from e
    except RecursionError:
        raise BundleError(f"{where} is not valid JSON (nested too deeply)") from None
    if type(data) is not dict:
        raise BundleError(f"{where} is not a JSON object (it holds a {type(data).__name__})")
    return data


def displaced(path: Path) -> Path:
    """Where an update that cannot exchange two folders in one step moves the bundle at ``path`` for the moment
    between its two renames (``cwm.bundle.update``): the hidden sibling ``.NAME.cwm-old``."""
    real = path.resolve()
    return real.with_name(f".{real.name}.cwm-old")


def put_back(path: Path) -> None:
    """The recovery step every reader applies: where ``path`` holds nothing but its ``displaced`` folder exists,
    an update was interrupted between its two renames (or is between them now), and the old bundle is moved
    back. A rename that fails (an update or another reader put a bundle there first, or the folder is
    read-only) is left for the reader to find what is there."""
    aside = displaced(path)
    if not path.exists() and aside.is_dir():
        with contextlib.suppress(OSError):
            aside.rename(path.resolve())


def read_manifest(path: Path) -> dict[str, JSON]:
    """The parsed manifest of a bundle directory, every field of its exact type and shape, after ``put_back``.

    Raises:
      BundleError: not a directory, no manifest, or a manifest field that is missing or malformed (named).
    """
    put_back(path)
    if not path.is_dir():
        where = f" (an interrupted update left it at {displaced(path)})" if displaced(path).is_dir() else ""
        raise BundleError(f"bundle {str(path)!r} is not a directory{where}")
    file = path / MANIFEST
    if file.is_symlink() or not file.is_file():
        raise BundleError(f"{path}: {MANIFEST} is missing (not a cwm bundle?)")
    manifest = read_json_object(file)
    version = manifest.get("bundle_format")
    if type(version) is not int or version != BUNDLE_FORMAT:
        raise BundleError(f"{path}: bundle format {version!r} is not supported (this cwm reads {BUNDLE_FORMAT})")
    for key, kind in _FIELDS.items():
        if type(manifest.get(key)) is not kind:
            raise BundleError(f"{file}: field {key!r} is missing or not a {kind.__name__}")
    if manifest["contract_version"] != CONTRACT_VERSION:
        raise BundleError(f"{path}: the model was written for contract version {manifest['contract_version']!r}; "
                          f"this cwm implements version {CONTRACT_VERSION!r}")
    _check_file_list(file, manifest["files"])
    _check_game_fields(file, manifest)
    _check_provenance(file, manifest)
    return manifest


def _check_provenance(file: Path, manifest: dict[str, Any]) -> None:
    """The provenance matches its hash (``provenance_sha256``; a manifest written before provenance was hashed
    has none: ``provenance_seal`` says so) and its short fields are well formed (``cwm.llm.provenance``)."""
    if "provenance_sha256" in manifest:
        digest = manifest["provenance_sha256"]
        if type(digest) is not str or not _SHA256.fullmatch(digest):
            raise BundleError(f"{file}: field 'provenance_sha256' is not a SHA-256 hex digest")
        if provenance_hash(manifest["provenance"]) != digest:
            raise BundleError(f"{file}: field 'provenance' does not match its hash 'provenance_sha256' (edited or "
                              f"corrupted)")
    try:
        checked_fields(manifest["provenance"], where=f"{file}: provenance")
    except ProvenanceError as e:
        raise BundleError(str(e)) from None


# What ``provenance_seal`` says of a manifest's provenance (each a short phrase a report can print as is).
SEAL_MATCHES = "matches its hash"
SEAL_MISSING = "not covered by a hash"
SEAL_MISMATCH = "does not match its hash"


def provenance_seal(manifest: dict[str, Any]) -> str:
    """What a manifest's ``provenance_sha256`` says of its provenance, for a report that shows it: one of
    ``SEAL_MATCHES`` (it is the hash of the provenance as stored), ``SEAL_MISSING`` (no such field: written by an
    older cwm, or deleted) or ``SEAL_MISMATCH`` (a malformed hash, one of another provenance, or no provenance
    object). Never raises: it reads a manifest whose other fields may be unchecked.

    The hash sits in the same manifest, so it detects accidental or naive edits (a corrupted copy, a hand edit
    that left the hash alone), not forgery: whoever edits the provenance can recompute the hash or delete it.
    A provenance is only as trustworthy as where the bundle came from.
    """
    if "provenance_sha256" not in manifest:
        return SEAL_MISSING
    provenance, digest = manifest.get("provenance"), manifest["provenance_sha256"]
    if type(provenance) is not dict or type(digest) is not str or provenance_hash(provenance) != digest:
        return SEAL_MISMATCH
    return SEAL_MATCHES


def _check_file_list(file: Path, files: dict[str, Any]) -> None:
    for name in files:
        if type(name) is not str or "/" in name or "\\" in name or ".." in name:
            raise BundleError(f"{file}: file name {name!r} is not a plain file name")
    names = set(files)
    if not names <= ALLOWED_FILES or not set(REQUIRED_FILES) <= names:
        raise BundleError(f"{file}: lists files {sorted(names)}; a bundle holds "
                          f"{list(REQUIRED_FILES)} and optionally {sorted(ALLOWED_FILES - set(REQUIRED_FILES))}")
    for name, digest in files.items():
        if type(digest) is not str or not _SHA256.fullmatch(digest):
            raise BundleError(f"{file}: the hash of {name} is not a SHA-256 hex digest")


def _check_game_fields(file: Path, manifest: dict[str, Any]) -> None:
    """A module game's ``game_module`` is consistent and its ``game.py`` listed; any other game names no path."""
    game, module = manifest["game"], manifest.get("game_module")
    if module is None:  # a module game of an older bundle (no engine) names its module, never used as a path
        if GAME_FILE in manifest["files"]:
            raise BundleError(f"{file}: lists {GAME_FILE}, but field 'game_module' is missing")
        if ".py:" not in game and ("/" in game or "\\" in game):
            raise BundleError(f"{file}: field 'game' ({game!r}) is neither a registry name nor an OpenSpiel game "
                              f"string (it holds a path)")
        return
    short = module.get("short_name") if type(module) is dict else None
    if (type(module) is not dict or set(module) != {"file", "short_name"} or type(module["file"]) is not str
            or module["file"] != GAME_FILE or type(short) is not str or not re.fullmatch(r"\w+", short, re.ASCII)):
        raise BundleError(f"{file}: field 'game_module' must be {{\"file\": \"{GAME_FILE}\", \"short_name\": "
                          f"OPENSPIEL_SHORT_NAME}}")
    if ".py:" not in game or game.rsplit(":", 1)[1] != short or manifest["ground_truth"] != short:
        raise BundleError(f"{file}: fields 'game', 'ground_truth' and 'game_module' name different games")
    if GAME_FILE not in manifest["files"]:
        raise BundleError(f"{file}: the bundle is of a game module but does not list {GAME_FILE}")


def verified_files(path: Path, manifest: dict[str, Any]) -> dict[str, bytes]:
    """The bytes of every file the manifest lists, each matching its hash; nothing unlisted is present.

    Raises:
      BundleError: an entry the manifest does not list (a file or a directory), a listed file that is missing,
        a link or larger than its ``FILE_LIMITS`` entry, or a file whose SHA-256 differs from the manifest
        (edited or corrupted).
    """
    listed: dict[str, str] = manifest["files"]
    unlisted = sorted(p.name for p in path.iterdir() if p.name not in listed and p.name != MANIFEST)
    if unlisted:
        raise BundleError(f"{path}: {', '.join(unlisted[:5])} {'is' if len(unlisted) == 1 else 'are'} in the bundle "
                          f"but not listed in {MANIFEST}; a bundle holds only the files its manifest lists")
    data = {}
    for name, digest in listed.items():
        file = path / name
        if file.is_symlink():
            raise BundleError(f"{path}: {name} is a symbolic link; a bundle holds plain files")
        if not file.is_file():
            raise BundleError(f"{path}: {name} is missing")
        try:  # the size first: a huge (or sparse) file is refused before it is read or hashed
            data[name] = read_bounded(file, FILE_LIMITS[name], what="bundle file", follow=False)
        except InputLimitError as e:
            raise BundleError(str(e)) from None
        if sha256(data[name]) != digest:
            raise BundleError(f"{path}: {name} does not match its hash in {MANIFEST} (edited or corrupted)")
    return data


def decode(path: Path, name: str, data: bytes) -> str:
    """A code file's text.

    Raises:
      BundleError: it is not UTF-8.
    """
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as e:
        raise BundleError(f"{path}: {name} is not UTF-8 text ({e.reason} at byte {e.start})") from e


def stored_report(path: Path, raw: bytes | None = None) -> CheckReport:
    """The export-time ``check_report.json``, of the shape ``CheckReport.to_json`` writes.

    Args:
      raw: the file's bytes as ``verified_files`` read them (default: read here, within its limit).

    Raises:
      BundleError: too large, not JSON, or a field missing or of the wrong type (named).
    """
    file = path / "check_report.json"
    data = read_json_object(file) if raw is None else _json_object(file, raw)
    by_type = data.get("by_type")
    if type(by_type) is not dict or not all(
            type(v) is dict and set(v) == {"passed", "total"} and all(type(n) is int and n >= 0 for n in v.values())
            for v in by_type.values()):
        raise BundleError(f"{file}: field 'by_type' must map each check type to {{\"passed\": int, \"total\": int}}")
    for key in ("transitions_passed", "transitions_total"):
        if type(data.get(key)) is not int:
            raise BundleError(f"{file}: field {key!r} is missing or not an int")
    if type(data.get("failures", [])) is not list or type(data.get("error", "")) is not str:
        raise BundleError(f"{file}: field 'failures' must be a list and 'error' a string")
    # only the counts are compared at load; the failures are kept for reading, not trusted
    return CheckReport.from_json({**data, "failures": []})


def read_trajectories(path: Path, game: str, data: bytes | None = None) -> list[Trajectory]:
    """The stored training trajectories, all of the bundle's ``game``.

    Args:
      data: the file's bytes as ``verified_files`` read them (default: read here, within its limit).

    Raises:
      BundleError: the file is too large or does not parse (names the line), or holds another game.
    """
    file = path / "trajectories.jsonl"
    try:
        train = trajectories.load_open(file, limit=FILE_LIMITS[file.name], data=data)
    except TrajectoryFormatError as e:  # it names the file and line
        raise BundleError(str(e)) from e
    except RecursionError:
        raise BundleError(f"{file}: not valid JSON (a line is nested too deeply)") from None
    if {t.game for t in train} != {game}:
        raise BundleError(f"{file}: holds games {sorted({t.game for t in train})}, not {game!r}")
    return train
