"""Generated games: families of novel two-player games whose rules are drawn from a seed.

``generate(family, seed, out)`` writes one game: ``<name>.py`` (an OpenSpiel Python game module, loaded
by every cwm command as ``<out>/<name>.py:<name>``; it imports the family's parameterised engine),
``<name>.md`` (the rulebook tier), ``<name>.spec.md`` (the spec tier) and ``facts.json``. The engine and
both texts are made from one parameter object, one sentence per parameter in each tier, so the texts
cannot disagree with the engine. The same family, seed and generator version give byte-identical files.
"""

from __future__ import annotations

import dataclasses
import json
from pathlib import Path
from types import ModuleType

import numpy as np

from cwm.games.generated import dice_race, melding, placement, trick_taking
from cwm.games.generated.common import game_name
from cwm.games.generated.render import rulebook, spec_text
from cwm.types import UsageError

GENERATOR_VERSION = 1
FAMILIES: dict[str, ModuleType] = {"placement": placement, "dice_race": dice_race, "trick_taking": trick_taking,
                                 "melding": melding}


@dataclasses.dataclass(frozen=True)
class GeneratedGame:
    """One generated game: its name, family, seed, parameters and the files' texts (file name -> text)."""

    name: str
    family: str
    seed: int
    params: object
    files: dict[str, str]


def make(family: str, seed: int) -> GeneratedGame:
    """The game of ``family`` drawn from ``seed`` (``numpy.random.default_rng([family index, seed])``), with
    its files' texts; nothing is written.

    Raises:
      UsageError: an unknown family, or a seed that is not a non-negative integer.
    """
    if family not in FAMILIES:
        raise UsageError(f"unknown game family {family!r}; families: {', '.join(FAMILIES)}")
    if type(seed) is not int or seed < 0:
        raise UsageError(f"--seed must be a non-negative integer, got {seed!r}")
    module = FAMILIES[family]
    rng = np.random.default_rng([list(FAMILIES).index(family), seed])
    name = game_name(rng, seed)
    params = module.draw(rng)
    facts = module.facts(params) | {
        "name": name, "family": family, "seed": seed, "generator_version": GENERATOR_VERSION,
        "rules_on": module.rules_on(params), "parameters": dataclasses.asdict(params),
    }
    files = {
        f"{name}.py": _module_text(name, family, seed, module, params),
        f"{name}.md": rulebook(name, module, params),
        f"{name}.spec.md": spec_text(name, module, params, facts),
        "facts.json": json.dumps(facts, indent=2, sort_keys=True) + "\n",
    }
    return GeneratedGame(name=name, family=family, seed=seed, params=params, files=files)


def generate(family: str, seed: int, out: str | Path) -> GeneratedGame:
    """Writes the game of ``family`` drawn from ``seed`` into the folder ``out`` (created if missing).

    Raises:
      UsageError: as ``make``; or a file to write already exists with other content (nothing is written then).
    """
    game = make(family, seed)
    folder = Path(out)
    if folder.exists() and not folder.is_dir():
        raise UsageError(f"--out {out}: exists and is not a folder")
    for file, text in game.files.items():
        path = folder / file
        if path.exists() and (not path.is_file() or path.read_bytes() != text.encode("utf-8")):
            raise UsageError(f"--out {out}: {file} already exists with other content; choose an empty folder")
    folder.mkdir(parents=True, exist_ok=True)
    for file, text in game.files.items():
        (folder / file).write_bytes(text.encode("utf-8"))
    return game


def require_version(version: int) -> None:
    """Refuses to build a game written by another generator version: its engine and texts could differ.

    Raises:
      ValueError: one line naming both versions.
    """
    if version != GENERATOR_VERSION:
        raise ValueError(f"this game was written by generator version {version}, and this cwm's generator is "
                         f"version {GENERATOR_VERSION}: its rules texts may not match this engine; generate it again")


def _module_text(name: str, family: str, seed: int, module: ModuleType, params: object) -> str:
    short = module.__name__.rsplit(".", 1)[1]  # imports sorted, so a generated module passes ruff's isort rule
    return (f'"""{name}: a generated {family} game (`cwm games generate {family} --seed {seed}`, generator '
            f'version {GENERATOR_VERSION}).\n\nRules: {name}.md (rulebook tier) and {name}.spec.md (spec tier), '
            f'both written from PARAMS.\nLoad it as `path/to/{name}.py:{name}`.\n"""\n\n'
            f"from cwm.games.generated import {', '.join(sorted((short, 'require_version')))}\n\n"
            f"require_version({GENERATOR_VERSION})\n"
            f"PARAMS = {short}.{params!r}\n"
            f'GAME = {short}.build_game("{name}", PARAMS)\n')


__all__ = ["FAMILIES", "GENERATOR_VERSION", "GeneratedGame", "generate", "make", "require_version"]
