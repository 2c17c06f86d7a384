"""The recorded synthesis sessions that ship with cwm (``cwm/data/recordings/``): which one replays a game
offline (a real model's session in preference to a scripted demo), who answered it, and what ``--llm auto``
means (Gemini with a key, else the shipped session)."""

from __future__ import annotations

import os
from importlib import resources
from pathlib import Path
from typing import Any

from cwm import games
from cwm.files import RUN_FILE_BYTES, InputLimitError, loads_bounded, read_bounded
from cwm.llm import LLMError, Provenance
from cwm.types import JSON, CwmError

API_KEY_VARS = ("GEMINI_API_KEY", "GOOGLE_API_KEY")


class PipelineError(CwmError, ValueError):
    """The main job cannot run as asked (no LLM available, another run in the directory, nothing solved)."""


SEEDS_FOLDER = "seeds"  # beside a tier's seed-0 sessions: those of further seeds, ``GAME.seed<S>.jsonl``


def recording_name(game: str, seed: int = 0) -> str:
    """Where a shipped session of ``game`` and synthesis ``seed`` lies inside its tier and deck folder:
    ``GAME.jsonl`` for seed 0 (the session every command replays by default), ``seeds/GAME.seed<S>.jsonl``
    for another seed (its provenance beside it, ``GAME.seed<S>.provenance.json``)."""
    return f"{game}.jsonl" if seed == 0 else f"{SEEDS_FOLDER}/{game}.seed{seed}.jsonl"


def recording_for(game: str, deck: str = "open", rules: str | None = None, seed: int = 0) -> Path | None:
    """The packaged recorded synthesis session of a registered game, if one ships with cwm: a real model's
    session (``data/recordings/real/``, answered through the batch client) in preference to a scripted demo;
    ``deck="closed"``: the closed-deck joint synthesis (``closed/`` under either). ``rules="prose"``: a
    rulebook-tier real session (``real/prose/``); a session answered other prompts, so none serves a rules
    file. ``seed``: the session of that synthesis seed (:func:`recording_name`; only real sessions are
    recorded for a seed other than 0), since a seed draws other training games and so other prompts."""
    name = games.resolve(game).name
    deck_folder = () if deck == "open" else ("closed",)
    if rules not in (None, "spec"):
        folders: tuple[tuple[str, ...], ...] = (("real", "prose"),) if rules == "prose" else ()
    else:
        folders = (("real",), ()) if seed == 0 else (("real",),)
    for folder in folders:
        resource = _root().joinpath(*folder, *deck_folder, *recording_name(name, seed).split("/"))
        if resource.is_file():
            return Path(str(resource))
    return None


def _root() -> Any:
    """The folder of shipped sessions (a ``Traversable``; tests point it at a folder of their own)."""
    return resources.files("cwm").joinpath("data", "recordings")


def recording_provenance(recording: Path) -> dict[str, JSON] | None:
    """Who answered a shipped real session (its ``GAME.provenance.json``: ``answered_by``, ``relay``, ``date``,
    the calls per stage, the prompt hashes), or ``None`` for a scripted one.

    Raises:
      PipelineError: the file does not read, or a provenance field is malformed (one line naming the file).
    """
    path = recording.with_name(recording.stem + ".provenance.json")
    if not path.is_file():
        return None
    try:
        data = loads_bounded(read_bounded(path, RUN_FILE_BYTES, what="provenance file"), where=str(path))
        Provenance.from_json(data, where=str(path))  # an object whose short fields are well formed
    except (LLMError, InputLimitError) as e:
        raise PipelineError(str(e)) from None
    except (OSError, ValueError) as e:
        raise PipelineError(f"{path}: not a readable JSON provenance file ({type(e).__name__})") from None
    return data


def resolve_llm(spec: str, game: str, rules: str | None = None, seed: int = 0) -> str:
    """Turns ``"auto"`` into a concrete client spec (with no key: the session recorded for ``rules`` and
    ``seed``, ``recording_for``); other specs pass through.

    Raises:
      PipelineError: ``auto`` with no API key set and no recording for the game, tier and seed.
    """
    if spec != "auto":
        return spec
    if any(os.environ.get(v) for v in API_KEY_VARS):
        return "gemini"
    recording = recording_for(game, rules=rules, seed=seed)
    if recording is None and seed != 0:
        raise PipelineError(f"no LLM for {game!r} with --rules {rules or 'spec'} at seed {seed}: no recorded "
                            f"session of that seed ships ({recording_name(game, seed)}); set GEMINI_API_KEY "
                            f"(or GOOGLE_API_KEY) or pass --llm")
    if recording is None and rules not in (None, "spec"):
        raise PipelineError(f"no LLM for {game!r} with --rules {rules}: no recorded session answered those "
                            f"prompts; set GEMINI_API_KEY (or GOOGLE_API_KEY) or pass --llm")
    if recording is None:
        raise PipelineError(
            f"no LLM for {game!r}: set GEMINI_API_KEY (or GOOGLE_API_KEY) for live synthesis, or pass "
            f"--llm (openai:MODEL, replay:FILE); recorded offline sessions ship only for "
            f"{', '.join(sorted({p.stem for p in _recordings()})) or 'no game'}")
    return f"replay:{recording}"


def _recordings() -> list[Path]:
    found = []
    for folder in (_root().joinpath(*sub) for sub in (("real",), ())):
        found += [Path(str(p)) for p in folder.iterdir() if p.name.endswith(".jsonl")] if folder.is_dir() else []
    return found


__all__ = ["API_KEY_VARS", "SEEDS_FOLDER", "PipelineError", "recording_for", "recording_name", "recording_provenance", "resolve_llm"]
