"""The game of a bundle, found without importing anything the bundle holds unless its engine is trusted.

A manifest names its game as a registry name, an OpenSpiel game string, or (a bundle of a user's module
game) ``path/to/module.py:short_name`` with the engine carried as ``game.py``. That engine is ordinary
Python that would run unsandboxed, so it is never imported on a manifest's word: the caller names the game
(their own module, trusted because they typed it), or says to trust the engine the bundle carries.
"""

from __future__ import annotations

import contextlib
import dataclasses
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pyspiel

from cwm import games
from cwm.bundle.files import GAME_FILE, BundleError
from cwm.sandbox import trust_notice
from cwm.types import UnknownGameError


def game_identity(game: str) -> str:
    """What names of a bundle's game are compared by: a module game's OpenSpiel short name (its path differs
    between machines), else ``cwm.games.canonical_id``. Imports nothing."""
    return game.rsplit(":", 1)[1] if ".py:" in game else games.canonical_id(game)


def same_game(spec: games.GameSpec, named: str) -> bool:
    """Whether ``spec`` (a game the user named) is the game a manifest or run record calls ``named``."""
    return game_identity(spec.name) == game_identity(named)


def bundle_game(path: Path, manifest: dict[str, Any], *, game: str | games.GameSpec | None,
                trust_game_module: bool) -> games.GameSpec:
    """The bundle's game (named as in its manifest, which its trajectories match).

    Args:
      path: the bundle directory.
      manifest: its validated manifest (``cwm.bundle.files.read_manifest``).
      game: the game as the caller names it (their own module is imported as their code), or ``None``.
      trust_game_module: import the bundle's ``game.py`` when ``game`` is not given.

    Raises:
      BundleError: ``game`` is another game; the manifest's game is unknown here; or it is a module game and
        ``game`` is not given, nor ``trust_game_module`` for an engine the bundle carries.
    """
    named: str = manifest["game"]
    module = manifest.get("game_module")
    if game is not None:
        spec = games.resolve(game)
        if not same_game(spec, named):
            raise BundleError(f"{path}: the bundle is of {named!r}, not {spec.name!r}")
    elif ".py:" not in named:
        try:  # a registry name or OpenSpiel string (read_manifest refused paths): nothing is imported
            spec = games.resolve(named)
        except UnknownGameError as e:
            raise BundleError(f"{path}: manifest.json: {e}") from e
    elif trust_game_module and module is not None:
        spec = _carried_engine(path, module["short_name"])
    else:
        raise BundleError(_untrusted_module(path, game_identity(named), carried=module is not None))
    return dataclasses.replace(spec, name=named)


def _untrusted_module(path: Path, short_name: str, *, carried: bool) -> str:
    text = (f"{path}: the bundle is of a game module ({short_name!r}), and cwm never imports a game a manifest "
            f"names; pass your game module (--game path/to/module.py:{short_name})")
    if not carried:
        return text + " (the bundle carries no engine for it)"
    return (text + f" or trust the engine the bundle carries ({GAME_FILE}, ordinary Python that would run "
                   f"unsandboxed: --trust-game-module) only if you trust where the bundle came from")


def _carried_engine(path: Path, short_name: str) -> games.GameSpec:
    """The game the bundle's ``game.py`` registers (imported here), or this process's game of that name."""
    if short_name in pyspiel.registered_names():  # already here (the user imported it): nothing to import
        return games.resolve(short_name)
    trust_notice()  # ordinary Python, imported here with this process's privileges
    with _no_bytecode():  # a __pycache__ left in the bundle would be refused as unlisted at the next load
        return games.resolve(f"{(path / GAME_FILE).resolve()}:{short_name}")


@contextlib.contextmanager
def _no_bytecode() -> Iterator[None]:
    previous = sys.dont_write_bytecode
    sys.dont_write_bytecode = True
    try:
        yield
    finally:
        sys.dont_write_bytecode = previous
