"""Shared fixtures for the bundle tests: a tic-tac-toe bundle, the tiny Nim module game, and ways to forge a
bundle as an attacker would (edit the manifest; replace a file and re-hash it so the hashes still match).

They are fixtures (not importable helpers) because CI runs pytest with --import-mode=importlib, where test
folders are not on sys.path.
"""

from __future__ import annotations

import hashlib
import json
import shutil
from collections.abc import Callable, Mapping
from pathlib import Path

import pytest

from cwm import bundle
from cwm.games import trajectories

DATA = Path(__file__).resolve().parents[1] / "data"
NIM = DATA / "foundation" / "tiny_nim.py"


@pytest.fixture(scope="module")
def train():
    return trajectories.collect("tic_tac_toe", 3, seed=0)


@pytest.fixture(scope="session")
def ttt_source() -> str:
    return (DATA / "synthesis" / "ttt_correct.py").read_text(encoding="utf-8")


@pytest.fixture(scope="session")
def exports(tmp_path_factory, ttt_source) -> Callable[..., Path]:
    """``exports(extra_sources, provenance)``: the tic-tac-toe bundle exported with them (on the training games
    of ``train``), made once a session and never changed: exporting checks the bundle in the sandbox, so a test
    that damages a bundle copies this one (``copy_of``)."""
    made: dict[str, Path] = {}
    games = trajectories.collect("tic_tac_toe", 3, seed=0)

    def get(extra_sources: Mapping[str, str], provenance: Mapping[str, object] | None) -> Path:
        key = json.dumps([extra_sources, provenance], sort_keys=True)
        if key not in made:
            made[key] = bundle.export_bundle(tmp_path_factory.mktemp("bundle") / "b", game="tic_tac_toe",
                                             model_source=ttt_source, train=games, extra_sources=dict(extra_sources),
                                             provenance=None if provenance is None else dict(provenance))
        return made[key]

    return get


@pytest.fixture()
def copy_of(exports) -> Callable[..., Path]:
    """``copy_of(path, extra_sources={}, provenance=None)``: a fresh copy at ``path`` of the session's bundle
    exported with them (``exports``), for the test to change."""

    def copy(path: Path, extra_sources: Mapping[str, str] | None = None,
             provenance: Mapping[str, object] | None = None) -> Path:
        return Path(shutil.copytree(exports(extra_sources or {}, provenance), path))

    return copy


@pytest.fixture()
def exported(tmp_path, copy_of) -> Path:
    return copy_of(tmp_path / "ttt", provenance={"llm": "hand-written fixture", "seed": 0})


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
