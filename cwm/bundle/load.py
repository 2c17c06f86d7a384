"""Exported bundles: a synthesized model as a versioned directory with provenance, re-checked when loaded.

Layout of a bundle directory::

    manifest.json        format version, game, contract version, generator, accuracy, file hashes, ...
    model.py             the world model (always)
    inference.py         inference functions (imperfect information, when synthesized)
    value.py             value function (when synthesized and chosen by its tournament)
    value_tournament.json  the tournament that chose value.py (or kept none)
    encoder.py           observation encoder (with a trained policy)
    policy.npz           a PPO policy trained inside the model (``cwm train ppo``): plain arrays and their config
    check_report.json    the checks the model passed when exported
    trajectories.jsonl   the training trajectories, re-checked at load time
    game.py              the user's game engine (a bundle of a module game)
    twin.py              a faster twin of model.py, used by planning workers (cwm synthesize --target fast)
    twin_evidence.json   the twin's equivalence evidence, re-verified against both files' bytes at load

``load_bundle`` reads the directory as untrusted input (``cwm.bundle.files``), finds the game without
importing anything the bundle holds (``cwm.bundle.game``), checks every code file in the sandbox, and
runs a quick conformance check (the stored trajectories plus random play) before returning a model.
"""

from __future__ import annotations

import contextlib
import dataclasses
import importlib
import warnings
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np
import pyspiel

from cwm import games
from cwm.adapter import as_openspiel_game
from cwm.bundle import card
from cwm.bundle.checks import checked, inference_report, trajectory_hash  # noqa: F401  (trajectory_hash re-exported)
from cwm.bundle.files import (
    BUNDLE_FORMAT,
    CODE_FILES,
    JAX_TWIN_FILE,
    BundleError,
    decode,
    read_manifest,
    read_trajectories,
    stored_report,
    verified_files,
)
from cwm.bundle.game import bundle_game
from cwm.bundle.policy import BundlePolicy, policy_of
from cwm.bundle.twin import twin_evidence
from cwm.bundle.value import value_report
from cwm.model import ActionCodec, WorldModel, direct_guard
from cwm.sandbox import Sandbox, load_source
from cwm.sandbox.budget import call_budget
from cwm.sandbox.jax_equivalence import histories_problem
from cwm.sandbox.jobs import CONTRACTS
from cwm.types import JSON, CheckReport, CwmError, Trajectory

__all__ = ["BUNDLE_FORMAT", "Bundle", "BundleError", "load_bundle", "trajectory_hash"]

if TYPE_CHECKING:
    from cwm.agents.base import Agent
    from planners.config import SearchConfig

@dataclasses.dataclass(frozen=True)
class Bundle:
    """A loaded, verified bundle.

    A bundle is contained by default: its code runs only in hardened worker processes (``agent``, ``plan``);
    ``load_bundle(path, trusted=True)`` also loads the model in this process (``model``), for code you read.

    Attributes:
      path: the bundle directory.
      manifest: the parsed ``manifest.json``.
      sources: file name -> source text of every code file.
      check_report: the load-time conformance report (checked in the sandbox).
      spec: the game (its engine: the registry's, OpenSpiel's, or the one the bundle carries).
      trusted: whether the model was loaded into this process.
      inference_report: the load-time inference checks of ``inference.py`` (every player's view of the
        stored games replayed through the model; ``None`` without one), checked in the sandbox.
      value_report: the load-time value checks of ``value.py`` (``cwm.checks.value`` at every state of the
        stored games replayed through the model; ``None`` without one), checked in the sandbox.
      policy: the PPO policy of ``policy.npz`` with its ``encoder.py`` (``cwm.bundle.policy``; ``None``
        without one), every array checked.
      jax_twin: the source of ``jax_twin.py`` (``cwm.jax_contract``; ``None`` without one), checked at load
        against the model along the stored games, in sandbox children only.
      jax_twin_evidence: its equivalence evidence (``cwm.sandbox.jax_equivalence``), verified like ``twin.py``'s.
      twin_evidence: the equivalence evidence of ``twin.py`` (``cwm.bundle.twin``; ``None`` without a twin),
        re-verified against the bytes of ``model.py`` and ``twin.py``; planning workers then use the twin.
    """

    path: Path
    manifest: dict[str, JSON]
    sources: dict[str, str]
    check_report: CheckReport
    spec: games.GameSpec
    trusted: bool = False
    _model: WorldModel | None = None
    inference_report: CheckReport | None = None
    value_report: CheckReport | None = None
    policy: BundlePolicy | None = None
    twin_evidence: dict[str, JSON] | None = None
    jax_twin: str | None = None
    jax_twin_evidence: dict[str, JSON] | None = None

    @property
    def game(self) -> str:
        return str(self.manifest["game"])

    def _repr_html_(self) -> str:
        """The bundle as a notebook shows it (``cwm.bundle.card``): accuracy with its quantity, load checks,
        provenance and code, every manifest field escaped."""
        return card.html(self)

    @property
    def model(self) -> WorldModel:
        """The world model in this process, ready to plan on (only for a bundle loaded with ``trusted=True``).

        Raises:
          BundleError: the bundle is contained (the default).
        """
        if self._model is None:
            raise BundleError(f"{self.path}: the bundle is contained, so its model runs only in hardened workers "
                              f"(cwm.agents.bundle_agent(bundle)); load it with trusted=True (--trust) to plan in "
                              f"this process, only for code you have read")
        return self._model

    def agent(self, config: SearchConfig | None = None, *, seed: int | np.random.Generator | None = None,
              move_cpu_s: float | None = None) -> Agent:
        """Deprecated: ``cwm.agents.bundle_agent(bundle, config, ...)``, the CWM agent that plans on this bundle's
        model (a bundle is data; agents are built by ``cwm.agents``)."""
        return _agents("agent", "bundle_agent")(self, config, seed=seed, move_cpu_s=move_cpu_s)

    def plan(self, state: pyspiel.State, config: SearchConfig | None = None, *,
             seed: int | np.random.Generator | None = None, move_cpu_s: float | None = None) -> int:
        """Deprecated: ``cwm.agents.bundle_move(bundle, state, config, ...)``, the action id this bundle's CWM
        agent plays at a real game state."""
        return _agents("plan", "bundle_move")(self, state, config, seed=seed, move_cpu_s=move_cpu_s)

    def as_openspiel_game(self, *, short_name: str | None = None) -> pyspiel.Game:
        """Registers the model as an OpenSpiel game (unique name) so any OpenSpiel algorithm runs on it
        (a trusted bundle only: OpenSpiel's algorithms call the model in this process)."""
        return as_openspiel_game(self.model, reference=games.load_game(self.spec), short_name=short_name)

    def module(self, file_name: str) -> Any:
        """The loaded module of an optional code file (``inference.py``, ``value.py`` or ``encoder.py``), in
        this process (a trusted bundle only)."""
        if file_name not in self.sources:
            raise BundleError(f"{self.path}: bundle has no {file_name}")
        if not self.trusted:
            raise BundleError(f"{self.path}: the bundle is contained; load it with trusted=True to import "
                              f"{file_name} in this process")
        return load_source(self.sources[file_name], name=f"{self.game}_{Path(file_name).stem}",
                           api=CONTRACTS[CODE_FILES[file_name]])


def load_bundle(path: str | Path, *, game: str | games.GameSpec | None = None, trust_game_module: bool = False,
                trusted: bool = False, random_games: int = 3, call_budget_s: float | None = 2.0,
                isolate: bool = True) -> Bundle:
    """Loads and verifies a bundle.

    The bundle is untrusted input. Nothing it holds is imported to find its game (unless you trust its game
    engine), nothing it does not list is accepted, and every code file is checked in the sandbox (the
    stored trajectories, then random play; ``inference.py`` and ``value.py`` against the model, their reports
    kept as ``inference_report`` and ``value_report``). The model is not loaded into this process unless ``trusted``:
    a contained bundle plans only in hardened workers (``cwm.agents.bundle_agent``).

    Args:
      path: the bundle directory.
      game: the game, as you name it (a registry name, an OpenSpiel string, or your own
        ``path/to/module.py:short_name``, imported as your code); it must be the bundle's game. Default: the
        manifest's game, which must then be a registry name or an OpenSpiel game string.
      trust_game_module: import the game engine a bundle of a module game carries (``game.py``: ordinary
        Python that runs unsandboxed, so only for bundles from a trusted source), when ``game`` is not given.
      trusted: also load the model into this process (``Bundle.model``, OpenSpiel registration, in-process
        planning at full speed with a per-call time budget): only for code you have read.
      random_games: random-play games run as part of the quick conformance check.
      call_budget_s: with ``trusted``: seconds any one model call may take in this process before it
        raises ``ModelContractError`` (``None``: no budget).
      isolate: run the checks in the sandbox (turn off only for bundles you wrote yourself).

    Raises:
      BundleError: a malformed manifest, an unknown format or contract version, a file that is missing, not
        listed, not UTF-8 or whose hash does not match the manifest, a ``twin.py`` without evidence that vouches
        for its bytes and the model's, a ``policy.npz`` that does not read (its array named) or is not the
        game's, a game module neither given nor trusted, ``game`` not being the bundle's game, code the
        sandbox rejects, or a model failing its conformance check.
    """
    path = Path(path)
    manifest = read_manifest(path)
    data = verified_files(path, manifest)
    sources = {name: decode(path, name, data[name]) for name in data if name in CODE_FILES}
    twin = twin_evidence(path, data, sources)  # before any check: a twin without valid evidence is refused
    jax_source = decode(path, JAX_TWIN_FILE, data[JAX_TWIN_FILE]) if JAX_TWIN_FILE in data else None
    jax_evidence = twin_evidence(path, data, {**sources, JAX_TWIN_FILE: jax_source or ""}, target="jax")
    spec = bundle_game(path, manifest, game=game, trust_game_module=trust_game_module)
    train = read_trajectories(path, str(manifest["game"]), data["trajectories.jsonl"])  # the bytes hashed
    stored = stored_report(path, data["check_report.json"])
    policy = policy_of(path, spec, data, sources)
    with Sandbox() if isolate else contextlib.nullcontext() as box:  # one sandbox for every check of the bundle
        report = checked(sources, spec, train, where=str(path), isolate=isolate, random_games=random_games, box=box)
        inference = inference_report(sources, train, isolate=isolate, box=box)
        value = value_report(sources, spec, train, isolate=isolate, box=box)
        if jax_source is not None:
            jax_twin_passes(path, sources, jax_source, spec, train, box)
    if (report.passed, report.executed) != (stored.passed, stored.executed):
        raise BundleError(
            f"{path}: model.py failed its load check: it now passes {report.passed}/{report.executed} checks, "
            f"but {stored.passed}/{stored.executed} when it was exported; it is not the model that was exported")
    model = _trusted_model(path, sources["model.py"], spec, call_budget_s) if trusted else None
    return Bundle(path=path, manifest=manifest, sources=sources, check_report=report, spec=spec, trusted=trusted,
                  _model=model, inference_report=inference, value_report=value, policy=policy, twin_evidence=twin,
                  jax_twin=jax_source, jax_twin_evidence=jax_evidence)


def _trusted_model(path: Path, source: str, spec: games.GameSpec, call_budget_s: float | None) -> WorldModel:
    """The bundle's model loaded into this process (``load_bundle(trusted=True)``), each call under
    ``call_budget_s`` seconds (``None``: no budget).

    Raises:
      BundleError: the model fails to load here.
    """
    try:
        guard = direct_guard if call_budget_s is None else call_budget(call_budget_s)
        return WorldModel(load_source(source, name=f"{spec.name}_model"),
                          codec=ActionCodec.from_game(games.load_game(spec)), name=f"bundle:{path.name}", guard=guard)
    except CwmError as e:
        raise BundleError(f"{path}: model failed its load check: {e}") from e


def jax_twin_passes(path: Path, sources: dict[str, str], jax_source: str, spec: games.GameSpec,
                    train: list[Trajectory], box: Sandbox | None) -> None:
    """A bundle's JAX twin must agree with its model along every stored game (its evidence is the author's
    word), compared as the equivalence check compares (``cwm.sandbox.jax_equivalence.histories_problem``),
    always in sandbox children (a fresh sandbox where the bundle's checks ran in process).

    Raises:
      BundleError: one line naming the first stored game, step and function where they differ.
    """
    with contextlib.nullcontext(box) if box is not None else Sandbox() as sandbox:
        problem = histories_problem(sources["model.py"], jax_source, codec=games.action_codec(spec),
                                    histories=[list(t.action_strings) for t in train],
                                    encoder=sources.get("encoder.py"), sandbox=sandbox)
    if problem is not None:
        raise BundleError(f"{path}: {JAX_TWIN_FILE} fails the stored games: {problem}")


def _agents(method: str, name: str) -> Any:
    """``cwm.agents.<name>``, for the deprecated ``Bundle.<method>`` (kept for one release; the agents package
    sits above this one, so it is found by name, not imported here)."""
    warnings.warn(f"Bundle.{method}() is deprecated; use cwm.agents.{name}(bundle, ...)", DeprecationWarning,
                  stacklevel=3)
    return getattr(importlib.import_module("cwm.agents"), name)
