"""What an agent is, wherever and whenever its files were made: its fingerprint, the part of a match key that
names the agent (``cwm.arena.identity``), and what a selection records of each bundle it selected.

A fingerprint is content only. A bundle's is the hash of the list of its files' SHA-256 digests, never of its
whole ``manifest.json``: the manifest also holds when and where the bundle was exported (``created_at``,
``provenance.run_dir``) and how it was made (``provenance``), so two exports of one synthesis, byte for byte
the same files, are one agent, and every match key and seed of a rerun is the same.
"""

from __future__ import annotations

import hashlib
import json
from pathlib import Path
from typing import Any

from cwm.agents.grammar import AgentSpec
from cwm.bundle.files import FILE_LIMITS, MANIFEST
from cwm.files import RUN_FILE_BYTES, InputLimitError, loads_bounded, read_bounded

BUNDLE_PREFIX = "cwm bundle-sha256:"  # a bundle's fingerprint: this, then the hash of its files' digests
FILE_PREFIX = "cwm sha256:"  # a model file's fingerprint (and a bundle's as cwm recorded it before content)
SELECTED_PREFIX = "cwm-selected sha256:"  # a selection's fingerprint: this, then the hash of its content
SELECTION = "selection.json"  # a selection's result (cwm.agents.selected.SELECTION_FILE)


def agent_fingerprint(spec: AgentSpec) -> str:
    """What an agent is, wherever its files are and whenever they were written.

    For ``cwm:`` a model file: ``cwm sha256:`` and the file's sha256; a bundle: ``cwm bundle-sha256:`` and the
    sha256 of its manifest's ``files`` (each file's name and SHA-256) as canonical JSON (``bundle_content``),
    so moving, renaming or re-exporting the same files keeps it and changing any file (``model.py``,
    ``inference.py``, ``value.py``, ``policy.npz``, the stored games, ...) does not. For ``cwm-selected:``
    ``cwm-selected sha256:`` and the hash of its game and its survivors' fingerprints in order
    (``selection_content``). For an LLM answering through a batch directory (``llm:batch:DIR``),
    ``llm:batch:`` and the directory's name, not its location: a session recorded in one folder replays
    from a copy in another to the same matches (two such agents in one tournament need folders of different
    names). For other kinds the bare spec, its kind and target (``gt-mcts``, ``llm:openai:gpt-x``), whose
    settings the key holds. A missing target gives the bare spec (the agent cannot be built, and forfeits).

    Raises:
      InputLimitError: the file is larger than a file of its kind may be (its size is checked before it is
        read: a bundle's manifest or a model file by ``cwm.bundle.files.FILE_LIMITS``).
    """
    if spec.kind == "cwm-selected":
        file = Path(spec.target) / SELECTION
        if not file.is_file():
            return spec.bare
        data = read_bounded(file, RUN_FILE_BYTES, what="agent file")
        return f"{SELECTED_PREFIX}{_sha256(selection_content(data) or data)}"  # an unreadable one is refused later
    if spec.kind == "llm" and spec.target.startswith("batch:"):
        folder = spec.target[len("batch:"):]
        return f"llm:batch:{Path(folder).resolve().name or folder}"  # "." is the folder it names, "/" itself
    if spec.kind != "cwm":
        return spec.bare
    path = Path(spec.target)
    if not path.is_dir():
        return f"{FILE_PREFIX}{_sha256(read_bounded(path, FILE_LIMITS['model.py'], what='agent file'))}" \
            if path.is_file() else spec.bare
    if not (path / MANIFEST).is_file():
        return spec.bare
    data = read_bounded(path / MANIFEST, FILE_LIMITS[MANIFEST], what="agent file")
    content = bundle_content(data)
    # a manifest without a readable file list is refused when the agent is built; until then its bytes name it
    return f"{BUNDLE_PREFIX}{_sha256(content if content is not None else data)}"


def bundle_content(manifest: bytes) -> bytes | None:
    """What a bundle's identity hashes, from its manifest's bytes: ``{"files": {name: sha256, ...}}`` as JSON
    with sorted keys and no spaces (``None`` for a manifest that is not an object with such a ``files``)."""
    try:
        parsed: Any = loads_bounded(manifest, where=MANIFEST)
    except (UnicodeDecodeError, json.JSONDecodeError, InputLimitError, RecursionError):
        return None
    files = parsed.get("files") if isinstance(parsed, dict) else None
    if not isinstance(files, dict) or not all(type(k) is str and type(v) is str for k, v in files.items()):
        return None
    return _canonical({"files": files})


def selection_content(selection: bytes) -> bytes | None:
    """What a selection's identity hashes, from its ``selection.json``: its game and its survivors'
    fingerprints in the order the agent draws from, ``{"game": ..., "survivors": [...]}`` as canonical JSON
    (``None`` for a file not of that shape). Scores, paths and labels are left out: they do not change
    what the agent plays."""
    try:
        parsed: Any = loads_bounded(selection, where=SELECTION)
    except (UnicodeDecodeError, json.JSONDecodeError, InputLimitError, RecursionError):
        return None
    agents = parsed.get("agents") if isinstance(parsed, dict) else None
    if not isinstance(agents, list) or not all(isinstance(a, dict) for a in agents):
        return None
    survivors = [a.get("fingerprint") for a in agents if a.get("survived") is True]
    if type(parsed.get("game")) is not str or not all(type(fp) is str for fp in survivors):
        return None
    return _canonical({"game": parsed["game"], "survivors": survivors})


def former_fingerprint(spec: AgentSpec) -> str | None:
    """A bundle agent's fingerprint as cwm recorded it before fingerprints were content only (the sha256 of
    the whole ``manifest.json``, which changed with every export), to recognise the rows and selections it
    names; for a selection, the sha256 of its whole ``selection.json`` (which holds paths and scores); for an
    LLM on a batch directory, its bare spec (with the folder's whole path); ``None`` for an agent whose
    fingerprint did not change (a model file, any other kind)."""
    path = Path(spec.target)
    if spec.kind == "llm" and spec.target.startswith("batch:"):  # named by its whole path before
        return spec.bare if spec.bare != agent_fingerprint(spec) else None
    if spec.kind == "cwm-selected" and (path / SELECTION).is_file():
        former = f"{SELECTED_PREFIX}{_sha256(read_bounded(path / SELECTION, RUN_FILE_BYTES, what='agent file'))}"
    elif spec.kind == "cwm" and path.is_dir() and (path / MANIFEST).is_file():
        former = f"{FILE_PREFIX}{_sha256(read_bounded(path / MANIFEST, FILE_LIMITS[MANIFEST], what='agent file'))}"
    else:
        return None
    return former if former != agent_fingerprint(spec) else None


def _canonical(value: Any) -> bytes:
    return json.dumps(value, sort_keys=True, separators=(",", ":"), ensure_ascii=True).encode()


def _sha256(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


__all__ = ["BUNDLE_PREFIX", "FILE_PREFIX", "SELECTED_PREFIX", "agent_fingerprint", "bundle_content",
           "former_fingerprint", "selection_content"]
