"""Crash-safe file writes (a reader, or a resumed run, never sees a half-written file), and the one check
every resumable run directory makes of its ``config.json``."""

from __future__ import annotations

import json
import os
from collections.abc import Collection, Mapping
from pathlib import Path
from typing import Any


def atomic_write(path: Path, text: str) -> None:
    """Writes ``text`` to ``path`` via a temporary file in the same folder and a rename."""
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    tmp.write_text(text, encoding="utf-8")
    os.replace(tmp, path)


def changed_settings(path: Path, config: Mapping[str, Any], *, ignore: Collection[str] = ()) -> list[str]:
    """The settings that differ between a run directory's stored ``config.json`` (at ``path``) and
    ``config``: ``differing_keys`` of the two, none when there is no such file."""
    if not path.is_file():
        return []
    return differing_keys(json.loads(path.read_text(encoding="utf-8")), config, ignore=ignore)


def differing_keys(old: Mapping[str, Any], new: Mapping[str, Any], *, ignore: Collection[str] = ()) -> list[str]:
    """The top-level keys whose values differ, sorted. Keys in ``ignore`` (settings a run may change when it
    resumes, such as a larger budget) are not compared. ``new`` is compared in its JSON form, so tuples
    equal the lists they are stored as."""
    new = json.loads(json.dumps(new, default=str))
    return sorted(k for k in set(old) | set(new) if k not in ignore and old.get(k) != new.get(k))
