"""What the imperfect-information experiments share: recorded sessions per deck, the synthesis of a world model
and its inference function (open deck) or of both together (closed deck), and the contained posterior check.

Recorded sessions: ``<folder>/<game>.jsonl`` holds an open-deck session (the world model's calls and then
its inference function's), ``<folder>/closed/<game>.jsonl`` a closed-deck one (the joint program's calls);
the folder is ``cwm/data/recordings`` unless given. A game without one is reported as such, never guessed.
"""

from __future__ import annotations

import dataclasses
import json
import os
from importlib import resources
from pathlib import Path
from typing import Any

from experiments import common

DECKS = ("open", "closed")
RECORDED = "recorded"  # the LLM spec that replays each game's recorded session


@dataclasses.dataclass(frozen=True)
class NoRecording:
    """A game whose recorded session does not exist: its rows say so and hold no numbers."""

    game: str
    path: str

    def row(self) -> dict[str, Any]:
        return {"game": self.game, "status": "no recording", "recording": self.path}


def recordings_folder(folder: str | None) -> Path:
    """The folder of recorded sessions: ``folder``, else the one shipped in the package."""
    return Path(folder) if folder else Path(str(resources.files("cwm").joinpath("data", "recordings")))


def recording_path(game: str, deck: str, folder: str | None = None, rules: str = "spec", seed: int = 0) -> Path:
    """Where the recorded session of ``game`` on ``deck`` lives (whether or not it exists): in ``folder``, or
    in the package's, where a real model's session (``real/``) is taken in preference to a scripted demo,
    as ``cwm run`` does; a rulebook-tier session (``rules="prose"``) under ``real/prose/`` of either; the
    session of a synthesis seed other than 0 under ``seeds/`` of the deck's folder
    (``cwm.pipeline.recordings.recording_name``)."""
    from cwm import games, pipeline
    from cwm.pipeline.recordings import recording_name

    name = games.resolve(game).name
    shipped = pipeline.recording_for(name, deck, rules, seed) if folder is None else None
    if shipped is not None:
        return shipped
    base = recordings_folder(folder) / ("real/prose" if rules == "prose" else "")
    return (base if deck == "open" else base / "closed") / recording_name(name, seed)


def game_llm(spec: str, game: str, deck: str, folder: str | None, rules: str = "spec",
             seed: int = 0) -> str | NoRecording:
    """The checked LLM spec of one game and synthesis seed: ``recorded`` (and ``auto`` with no API key set)
    replays the game's recorded session of that seed on ``deck``, or gives ``NoRecording``; ``auto`` with a
    key is Gemini; others pass.

    Raises:
      ExperimentError: the client of the spec cannot be built (``common.check_llm``).
    """
    from cwm import pipeline

    if spec == RECORDED or (spec == "auto" and not any(os.environ.get(v) for v in pipeline.API_KEY_VARS)):
        path = recording_path(game, deck, folder, rules, seed)
        if not path.is_file():
            return NoRecording(game, str(path))
        spec = f"replay:{path}"
    elif spec == "auto":
        spec = "gemini"
    common.check_llm(spec, f"--llm for {game}" + (f" seed {seed}" if seed else ""))
    return spec


def require_recording(llm: str | NoRecording, *, deck: str, rules: str, seed: int) -> str:
    """``llm`` where a run cannot go on without it (a seed of several syntheses).

    Raises:
      ExperimentError: ``llm`` is ``NoRecording``: one line naming the game, deck, tier, seed and the file.
    """
    if isinstance(llm, NoRecording):
        raise common.ExperimentError(
            f"no LLM for {llm.game!r} ({deck} deck, --rules {rules}) at seed {seed}: no recorded session of that "
            f"seed ({llm.path}); set GEMINI_API_KEY (or GOOGLE_API_KEY) or pass --llm")
    return llm


def best_source(run_dir: Path) -> str:
    """The best program of a finished synthesis run (``""``: none usable)."""
    path = run_dir / "result.json"
    return str(json.loads(path.read_text(encoding="utf-8")).get("best_source") or "") if path.is_file() else ""


def synthesize_inference(config: common.GameConfig, *, seed: int, llm: str, run_dir: Path, deck: str,
                         world_model: str | None, cache: str | None) -> Any:
    """Runs (or resumes) the inference synthesis of one game: open deck for ``world_model``, or closed deck
    (the world model and its inference together); the ``SynthesisResult``."""
    from cwm.llm import make_client
    from cwm.synthesis import SynthesisSettings, synthesize_inference

    client = make_client(llm, run_dir=run_dir, cache=Path(cache) if cache else None)
    settings = SynthesisSettings.of("inference", deck=deck, strategy=config.strategy, budget=config.budget, seed=seed,
                                    num_train=config.num_train, train_pool=config.train_pool,
                                    **({} if config.num_test is None else {"num_test": config.num_test}))
    return synthesize_inference(config.spec(), client, settings, run_dir=run_dir, world_model=world_model)


@dataclasses.dataclass(frozen=True)
class PosteriorSettings:
    """The posterior check's size (``cwm.checks.posterior.posterior_check``): states from ``games_played`` random
    games, ``draws`` inference draws at each, or with ``detect`` set, as many (up to the check's ``max_draws``)
    as bring each state's minimum detectable distance down to ``detect``."""

    games_played: int = 10
    states: int = 20
    draws: int = 400
    detect: float | None = None


def posterior(game: str, source: str, settings: PosteriorSettings, seed: int) -> dict[str, Any]:
    """The posterior check of an untrusted inference module, each draw made in a hardened worker
    (``cwm.sandbox.sampling.ContainedSampler``); its report as JSON, or ``{"error": why}`` when no state could
    be checked. A module that cannot start (no ``resample_history``, refused by the gate) makes every draw
    invalid, with the reason in each state's ``error``."""
    from cwm.checks.posterior import PosteriorSettings as CheckSize
    from cwm.checks.posterior import posterior_check
    from cwm.sandbox.sampling import ContainedSampler

    with ContainedSampler(source) as sampler:
        report = posterior_check(game, sampler, CheckSize(games_played=settings.games_played, states=settings.states,
                                                      draws=settings.draws, seed=seed, detect=settings.detect))
    if not report.states:
        return {"error": f"no information state had a known posterior ({report.skipped} skipped)"}
    return report.to_json()
