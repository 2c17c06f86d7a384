"""cwm: code world models for general game playing.

An LLM writes a game's rules as code (a world model) from its rules text and example trajectories;
checks built from the trajectories verify it; planners play on it.
"""

from cwm.bundle import Bundle, BundleError, export_bundle, export_run, load_bundle
from cwm.checks import check_model, random_play_checks, run_checks
from cwm.games import GameSpec, load_game, registered, resolve, rules_text
from cwm.model import (
    INFERENCE_API,
    VALUE_API,
    WORLD_MODEL_API,
    ActionCodec,
    ModelState,
    WorldModel,
    api_block,
    load_source,
)
from cwm.oracle import oracle_model
from cwm.sandbox import JobResult, Limits, Sandbox, static_gate
from cwm.trajectories import closed_view, collect, load, record, save
from cwm.types import (
    CHANCE,
    TERMINAL,
    CheckFailure,
    CheckReport,
    ClosedTrajectory,
    CwmError,
    ModelContractError,
    ModelLoadError,
    Step,
    Trajectory,
    TrajectoryFormatError,
    UnknownGameError,
)

__version__ = "0.1.0"

__all__ = [
    "CHANCE",
    "TERMINAL",
    "INFERENCE_API",
    "VALUE_API",
    "WORLD_MODEL_API",
    "ActionCodec",
    "Bundle",
    "BundleError",
    "JobResult",
    "Limits",
    "Sandbox",
    "CheckFailure",
    "CheckReport",
    "ClosedTrajectory",
    "CwmError",
    "GameSpec",
    "ModelContractError",
    "ModelLoadError",
    "ModelState",
    "Step",
    "Trajectory",
    "TrajectoryFormatError",
    "UnknownGameError",
    "WorldModel",
    "api_block",
    "check_model",
    "closed_view",
    "collect",
    "export_bundle",
    "export_run",
    "load",
    "load_bundle",
    "load_game",
    "load_source",
    "oracle_model",
    "random_play_checks",
    "record",
    "registered",
    "resolve",
    "rules_text",
    "run_checks",
    "save",
    "static_gate",
]
