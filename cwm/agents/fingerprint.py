"""What an agent is, wherever its files are: its fingerprint, the part of a match key that names the agent
(``cwm.arena.identity``), and what a selection records of each bundle it selected."""

from __future__ import annotations

import hashlib
from pathlib import Path

from cwm.agents.grammar import AgentSpec


def agent_fingerprint(spec: AgentSpec) -> str:
    """What an agent is, wherever its files are: for ``cwm:`` the sha256 of its ``.py`` file or of its bundle's
    ``manifest.json`` (which holds every file's hash), so moving the files keeps it and changing them does
    not; for ``cwm-selected:`` the sha256 of its ``selection.json`` (which holds each bundle's); for other kinds
    the bare spec, its kind and target (``gt-mcts``, ``llm:openai:gpt-x``), whose settings the key holds."""
    if spec.kind == "cwm-selected":
        file = Path(spec.target) / "selection.json"
        return f"cwm-selected sha256:{_sha256(file.read_bytes())}" if file.is_file() else spec.bare
    if spec.kind != "cwm":
        return spec.bare
    path = Path(spec.target)
    file = path / "manifest.json" if path.is_dir() else path
    return f"cwm sha256:{_sha256(file.read_bytes())}" if file.is_file() else spec.bare  # it cannot be built


def _sha256(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


__all__ = ["agent_fingerprint"]
