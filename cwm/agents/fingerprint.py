"""What an agent is, wherever its files are: its fingerprint, the part of a match key that names the agent
(``cwm.arena.identity``), and what a selection records of each bundle it selected."""

from __future__ import annotations

import hashlib
from pathlib import Path

from cwm.agents.grammar import AgentSpec
from cwm.bundle.files import FILE_LIMITS, MANIFEST
from cwm.files import RUN_FILE_BYTES, read_bounded


def agent_fingerprint(spec: AgentSpec) -> str:
    """What an agent is, wherever its files are: for ``cwm:`` the sha256 of its ``.py`` file or of its bundle's
    ``manifest.json`` (which holds every file's hash), so moving the files keeps it and changing them does
    not; for ``cwm-selected:`` the sha256 of its ``selection.json`` (which holds each bundle's); for other kinds
    the bare spec, its kind and target (``gt-mcts``, ``llm:openai:gpt-x``), whose settings the key holds.

    Raises:
      InputLimitError: the file is larger than a file of its kind may be (its size is checked before it is
        read: a bundle's manifest or a model file by ``cwm.bundle.files.FILE_LIMITS``).
    """
    if spec.kind == "cwm-selected":
        file = Path(spec.target) / "selection.json"
        return f"cwm-selected sha256:{_sha256(file, RUN_FILE_BYTES)}" if file.is_file() else spec.bare
    if spec.kind != "cwm":
        return spec.bare
    path = Path(spec.target)
    file = path / MANIFEST if path.is_dir() else path
    limit = FILE_LIMITS[MANIFEST if path.is_dir() else "model.py"]
    return f"cwm sha256:{_sha256(file, limit)}" if file.is_file() else spec.bare  # else it cannot be built


def _sha256(file: Path, limit: int) -> str:
    return hashlib.sha256(read_bounded(file, limit, what="agent file")).hexdigest()


__all__ = ["agent_fingerprint"]
