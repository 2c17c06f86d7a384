"""cwm: code world models for general game playing.

An LLM writes a game's rules as code (a world model) from its rules text and example trajectories;
checks built from the trajectories verify it; planners play on it.

The names below are importable from ``cwm`` itself; each loads its package on first use, so that
``import cwm.types`` (a sandbox child, a reader of result files) does not import the whole library.
docs/architecture.md maps the packages.
"""

from __future__ import annotations

import importlib
import importlib.abc
import importlib.machinery
import importlib.util
import sys
import types
import warnings
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from cwm.types import VERSION as __version__  # noqa: F401  (cwm.__version__)

if TYPE_CHECKING:
    from cwm.bundle import Bundle, BundleError, export_bundle, export_run, load_bundle
    from cwm.checks import check_model, random_play_checks, run_checks
    from cwm.games import GameSpec, load_game, registered, resolve, rules_text
    from cwm.games.oracle import oracle_model
    from cwm.games.trajectories import closed_view, collect, record
    from cwm.games.trajectories import load as load_trajectories
    from cwm.games.trajectories import save as save_trajectories
    from cwm.model import (
        INFERENCE_API,
        VALUE_API,
        WORLD_MODEL_API,
        ActionCodec,
        ModelState,
        WorldModel,
        api_block,
    )
    from cwm.sandbox import JobResult, Limits, Sandbox, load_source, static_gate
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

_HOMES = {
    "cwm.bundle": ("Bundle", "BundleError", "export_bundle", "export_run", "load_bundle"),
    "cwm.checks": ("check_model", "random_play_checks", "run_checks"),
    "cwm.games": ("GameSpec", "load_game", "registered", "resolve", "rules_text"),
    "cwm.games.oracle": ("oracle_model",),
    "cwm.games.trajectories": ("closed_view", "collect", "load_trajectories", "record", "save_trajectories"),
    "cwm.model": ("INFERENCE_API", "VALUE_API", "WORLD_MODEL_API", "ActionCodec", "ModelState", "WorldModel",
                  "api_block"),
    "cwm.sandbox": ("JobResult", "Limits", "Sandbox", "load_source", "static_gate"),
    "cwm.types": ("CHANCE", "TERMINAL", "CheckFailure", "CheckReport", "ClosedTrajectory", "CwmError",
                  "ModelContractError", "ModelLoadError", "Step", "Trajectory", "TrajectoryFormatError",
                  "UnknownGameError"),
}
_HOME = {name: module for module, names in _HOMES.items() for name in names}

# Modules that moved into packages, importable under their former names for one release (with a
# DeprecationWarning): ``import cwm.trajectories`` gives ``cwm.games.trajectories`` itself.
MOVED = {
    "cwm.jsonvalue": "cwm.json_values",
    "cwm.values": "cwm.value_rules",
    "cwm.bundle_checks": "cwm.bundle.checks",
    "cwm.bundle_export": "cwm.bundle.export",
    "cwm.bundle_files": "cwm.bundle.files",
    "cwm.bundle_game": "cwm.bundle.game",
    "cwm.bundle_policy": "cwm.bundle.policy",
    "cwm.bundle_update": "cwm.bundle.update",
    "cwm.bundle_value": "cwm.bundle.value",
    "cwm.check_report": "cwm.checks.report",
    "cwm.cost": "cwm.arena.cost",
    "cwm.encoder_checks": "cwm.checks.encoder",
    "cwm.hidden": "cwm.games.hidden",
    "cwm.host_game": "cwm.sandbox.host",
    "cwm.inference_checks": "cwm.checks.inference",
    "cwm.on_policy": "cwm.pipeline.on_policy",
    "cwm.oracle": "cwm.games.oracle",
    "cwm.pipeline_report": "cwm.pipeline.report",
    "cwm.posterior": "cwm.checks.posterior",
    "cwm.ppo_bundle": "cwm.ppo.bundle",
    "cwm.ppo_env": "planners.env",
    "cwm.ppo_jax": "cwm.ppo.learner",
    "cwm.ppo_seeds": "cwm.ppo.seeds",
    "cwm.ppo_train": "cwm.ppo.train",
    "cwm.random_play": "cwm.checks.random_play",
    "cwm.ray_local": "cwm.executors.ray_local",
    "cwm.sandbox.hosting": "cwm.sandbox.jobs.host",
    "cwm.sandbox.planning": "cwm.sandbox.jobs.plan",
    "cwm.selection_play": "cwm.selection.play",
    "cwm.selection_report": "cwm.selection.report",
    "cwm.step_checks": "cwm.checks.step",
    "cwm.synthesis.test_sets": "cwm.synthesis.held_out",
    "cwm.trajectories": "cwm.games.trajectories",
    "cwm.value_checks": "cwm.checks.value",
    "cwm.value_tournament": "cwm.selection.value_tournament",
    "cwm.views": "cwm.games.views",
}


class MovedModules(importlib.abc.MetaPathFinder, importlib.abc.Loader):
    """Imports each former module name in ``moved`` (old -> new dotted name) as the module it became, with a
    ``DeprecationWarning`` naming the new home; the module object is the new one, so its names, its state and
    any patch of them are shared."""

    def __init__(self, moved: Mapping[str, str]):
        self.moved = dict(moved)
        self._specs: dict[str, Any] = {}  # each new module's own spec, which the import system overwrites

    def find_spec(self, fullname: str, path: Any = None, target: Any = None) -> importlib.machinery.ModuleSpec | None:
        if fullname not in self.moved:
            return None
        return importlib.util.spec_from_loader(fullname, self)

    def create_module(self, spec: importlib.machinery.ModuleSpec) -> types.ModuleType:
        new = self.moved[spec.name]
        warnings.warn(f"{spec.name} moved to {new}; the old name is deprecated and will be removed",
                      DeprecationWarning, stacklevel=2)
        module = importlib.import_module(new)
        self._specs[module.__name__] = module.__spec__
        return module

    def exec_module(self, module: types.ModuleType) -> None:
        module.__spec__ = self._specs.get(module.__name__, module.__spec__)  # the import system set the alias's spec


def install_moved(moved: Mapping[str, str]) -> MovedModules:
    """Makes the former module names in ``moved`` importable (once per process)."""
    for finder in sys.meta_path:
        if isinstance(finder, MovedModules):
            finder.moved.update(moved)
            return finder
    finder = MovedModules(moved)
    sys.meta_path.append(finder)
    return finder


install_moved(MOVED)


# Former top-level names, deprecated: ``cwm.load``/``cwm.save`` read and wrote trajectories.
_RENAMED = {"load": "load_trajectories", "save": "save_trajectories"}
_TRAJECTORY_IO = {"load_trajectories": "load", "save_trajectories": "save"}  # their names in cwm.games.trajectories


def __getattr__(name: str) -> Any:
    """A public name of cwm from the package it lives in, a subpackage, or a former name (deprecated)."""
    if name in _RENAMED:
        warnings.warn(f"cwm.{name} is deprecated; use cwm.{_RENAMED[name]}", DeprecationWarning, stacklevel=2)
        name = _RENAMED[name]
    if name in _HOME:
        return getattr(importlib.import_module(_HOME[name]), _TRAJECTORY_IO.get(name, name))
    if f"cwm.{name}" in MOVED:
        return importlib.import_module(f"cwm.{name}")  # the finder warns
    try:
        return importlib.import_module(f"cwm.{name}")
    except ModuleNotFoundError as e:
        if e.name != f"cwm.{name}":
            raise
    raise AttributeError(f"module 'cwm' has no attribute {name!r}")


__all__ = ["ActionCodec", "Bundle", "BundleError", "CHANCE", "CheckFailure", "CheckReport",
           "ClosedTrajectory", "CwmError", "GameSpec", "INFERENCE_API", "JobResult", "Limits",
           "ModelContractError", "ModelLoadError", "ModelState", "Sandbox", "Step", "TERMINAL",
           "Trajectory", "TrajectoryFormatError", "UnknownGameError", "VALUE_API", "WORLD_MODEL_API",
           "WorldModel", "api_block", "check_model", "closed_view", "collect", "export_bundle",
           "export_run", "load_bundle", "load_game", "load_source", "oracle_model",
           "load_trajectories", "random_play_checks", "record", "registered", "resolve", "rules_text", "run_checks",
           "save_trajectories",
           "static_gate", "MovedModules", "install_moved"]
