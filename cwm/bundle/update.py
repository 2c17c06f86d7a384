"""Adding files to a verified bundle after export: the synthesized extras (``value.py`` and its table,
``encoder.py``) written beside the bundle's files and moved into place, the manifest re-hashed last, so an
interrupted update leaves the bundle as it was or complete, never half-written."""

from __future__ import annotations

import contextlib
import json
import os
from collections.abc import Iterable, Mapping
from pathlib import Path

from cwm.bundle.files import MANIFEST, read_manifest, sha256, verified_files
from cwm.types import JSON

ENCODER_FILE = "encoder.py"


def update_bundle(bundle: str | Path, writes: Mapping[str, bytes], *, remove: Iterable[str] = (),
                  provenance_key: str, provenance: dict[str, JSON]) -> Path:
    """Writes ``writes`` (file name -> bytes) into ``bundle``, drops the files ``remove``, and records
    ``provenance`` as the manifest's ``provenance[provenance_key]``, with every hash updated.

    Raises:
      BundleError: not a bundle, or one whose files do not match its manifest (checked before any write).
    """
    path = Path(bundle)
    manifest = read_manifest(path)
    verified_files(path, manifest)
    files = dict(manifest["files"])  # type: ignore[arg-type]
    for name, data in writes.items():
        _write(path / name, data)
        files[name] = sha256(data)
    gone = [name for name in remove if name not in writes]
    for name in gone:
        files.pop(name, None)
    manifest["files"] = files
    manifest["provenance"] = {**manifest["provenance"], provenance_key: provenance}  # type: ignore[dict-item]
    _write(path / MANIFEST, json.dumps(manifest, indent=2, sort_keys=True).encode("utf-8"))
    for name in gone:
        with contextlib.suppress(FileNotFoundError):
            (path / name).unlink()
    return path


def save_encoder(bundle: str | Path, source: str, provenance: dict[str, JSON]) -> Path:
    """Writes an accepted observation encoder into ``bundle`` as ``encoder.py`` (replacing an older one), with
    what produced it as the manifest's ``provenance.encoder``.

    Raises:
      BundleError: not a bundle, or one whose files do not match its manifest.
    """
    return update_bundle(bundle, {ENCODER_FILE: source.encode("utf-8")}, provenance_key="encoder",
                         provenance=provenance)


def _write(file: Path, data: bytes) -> None:
    tmp = file.with_name(file.name + ".partial")
    tmp.write_bytes(data)
    os.replace(tmp, file)


__all__ = ["ENCODER_FILE", "save_encoder", "update_bundle"]
