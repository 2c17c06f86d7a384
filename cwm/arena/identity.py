"""What a match is, by content: its key is a hash of the game, the tournament's settings, each seat's agent
fingerprint and the match's index, so the label an agent plays under is for display only.

Renaming an agent (``cwm:/runs/a/bundle`` to ``mine=cwm:/runs/a/bundle``), or moving its bundle, keeps its
fingerprint and so every key and seed: a resumed tournament finds its finished matches and plays none
again. Changing what an agent is (a bundle's files, another planner) or a setting (simulations, the move
limit, the seed) changes the keys, so no old match is taken for a new one.

``labels.json`` in a tournament folder maps each fingerprint to the label it was last shown under; readers
of the folder (``cwm replay``, ``cwm view``) show those labels. A label that moves to another fingerprint
(the same name for an edited bundle) leaves the former agent shown as ``LABEL@<first hex of its
fingerprint's hash>``.

Folders from before content keys (rows without fingerprints) are refused for playing, with a one-line
message; they stay readable (``cwm replay``, ``cwm view``, the reports).
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path

from cwm.agents.fingerprint import agent_fingerprint  # noqa: F401  (re-exported)
from cwm.arena.types import MatchResult
from cwm.files import RUN_FILE_BYTES, InputLimitError, atomic_write, loads_bounded, read_bounded
from cwm.types import JSON

LABELS_FILE = "labels.json"  # fingerprint -> the label it was last shown under
KEY_HEX = 20  # hex digits of a match key (80 bits)


def settings_hash(settings: Mapping[str, JSON]) -> str:
    """The sha256 of a tournament's settings (seed, search and LLM settings, move limit) as canonical JSON."""
    return _sha256(json.dumps(settings, sort_keys=True, default=str).encode())


def match_key(game: str, settings: str, fingerprints: Sequence[str], index: int) -> str:
    """The key of match ``index`` of the seating ``fingerprints`` (one per seat, in seat order) on ``game``
    under the settings hashed as ``settings`` (``settings_hash``)."""
    content = {"game": game, "settings": settings, "agents": list(fingerprints), "index": index}
    return _sha256(json.dumps(content, sort_keys=True).encode())[:KEY_HEX]


def display_name(result: MatchResult) -> str:
    """How a person names a match: its seats' labels and its index, ``random|gt-mcts#0`` (a row from before
    content keys: its key, which was that)."""
    return f"{'|'.join(result.seats)}#{result.index}" if result.fingerprints else result.key


def read_labels(out_dir: Path) -> dict[str, str]:
    """Fingerprint -> label of the agents of the tournament in ``out_dir`` (empty where none was saved)."""
    path = out_dir / LABELS_FILE
    try:
        data = loads_bounded(read_bounded(path, RUN_FILE_BYTES, what="labels"), where=str(path)) \
            if path.is_file() else {}
    except (UnicodeDecodeError, json.JSONDecodeError, InputLimitError, RecursionError):
        return {}  # only display names: a damaged (or oversized) file shows the labels the rows were recorded under
    return {str(k): str(v) for k, v in data.items()} if isinstance(data, dict) else {}


def save_labels(out_dir: Path, current: Mapping[str, str]) -> None:
    """Records ``current`` (fingerprint -> label of this tournament's agents) over the folder's labels; a
    former agent whose label an agent of ``current`` now has is shown as ``LABEL@<hash>``."""
    taken = set(current.values())
    former = {fp: f"{label}@{_short(fp)}" if label in taken else label
              for fp, label in read_labels(out_dir).items() if fp not in current}
    atomic_write(out_dir / LABELS_FILE, json.dumps(former | dict(current), indent=2) + "\n")


def shown(results: Iterable[MatchResult], labels: Mapping[str, str]) -> list[MatchResult]:
    """``results`` with each seat under the label its fingerprint has in ``labels`` (else as recorded)."""
    return [r.shown_as(tuple(labels.get(fp, seat) for fp, seat in zip(r.fingerprints, r.seats)))
            if len(r.fingerprints) == len(r.seats) else r for r in results]


def _short(fingerprint: str) -> str:
    return fingerprint.rpartition(":")[2][:8] if "sha256:" in fingerprint else _sha256(fingerprint.encode())[:8]


def _sha256(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()
