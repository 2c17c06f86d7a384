"""Shared fixtures for the bundle tests: a tic-tac-toe bundle, the tiny Nim module game, and ways to forge a
bundle as an attacker would (edit the manifest; replace a file and re-hash it so the hashes still match).

They are fixtures (not importable helpers) because CI runs pytest with --import-mode=importlib, where test
folders are not on sys.path.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Callable
from pathlib import Path

import pytest

from cwm import bundle, trajectories

DATA = Path(__file__).resolve().parents[1] / "data"
NIM = DATA / "foundation" / "tiny_nim.py"


@pytest.fixture(scope="module")
def train():
    return trajectories.collect("tic_tac_toe", 3, seed=0)


@pytest.fixture(scope="session")
def ttt_source() -> str:
    return (DATA / "synthesis" / "ttt_correct.py").read_text(encoding="utf-8")


@pytest.fixture()
def exported(tmp_path, train, ttt_source) -> Path:
    return bundle.export_bundle(tmp_path / "ttt", game="tic_tac_toe", model_source=ttt_source, train=train,
                                provenance={"llm": "hand-written fixture", "seed": 0})


@pytest.fixture(scope="session")
def nim_game() -> str:
    """The tiny Nim module game (tests/data/foundation/tiny_nim.py), as a user names it."""
    return f"{NIM}:tiny_nim"


@pytest.fixture(scope="session")
def nim_model() -> str:
    return (DATA / "foundation" / "tiny_nim_model.py").read_text(encoding="utf-8")


@pytest.fixture()
def set_manifest() -> Callable[..., None]:
    """``set_manifest(bundle_dir, field=value, ...)`` rewrites fields of a bundle's manifest."""

    def change(path: Path, **changes: object) -> None:
        manifest = json.loads((path / "manifest.json").read_text())
        manifest.update(changes)
        (path / "manifest.json").write_text(json.dumps(manifest))

    return change


@pytest.fixture()
def rehashed(set_manifest) -> Callable[[Path, str, bytes], None]:
    """``rehashed(bundle_dir, name, data)`` writes a file and lists it with its new hash (a forger's edit)."""

    def write(path: Path, name: str, data: bytes) -> None:
        (path / name).write_bytes(data)
        files = json.loads((path / "manifest.json").read_text())["files"]
        set_manifest(path, files={**files, name: hashlib.sha256(data).hexdigest()})

    return write
