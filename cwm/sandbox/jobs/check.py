"""Trusted harness functions that ``Sandbox.run`` calls in a child as ``job(module, payload) -> JSON``.

Every call into the candidate module goes through ``cwm.sandbox.child.call_guard``, or a world model's
guard from ``cwm.sandbox.child.child_guard``, which apply the per-call time budget inside a sandbox child
(and are plain calls elsewhere, so these jobs also run in-process); with the latter, a replayed trajectory
or a rollout is one stretch of calls under one timer. Jobs may live in any module of the ``cwm`` package
(the zygote can import those); a new job should wrap model calls the same way.
"""

from __future__ import annotations

import dataclasses
import types
from collections.abc import Callable
from typing import Any

from cwm.checks.encoder import check_encoder as check_encoder_pairs
from cwm.checks.encoder import encoder_check_report, observation_sites
from cwm.checks.inference import run_inference_checks
from cwm.checks.report import merge
from cwm.checks.value import run_value_checks
from cwm.checks.world_model import normalise, random_play_checks, run_checks
from cwm.contract import (
    ENCODER_API,
    INFERENCE_API,
    STATE_INFERENCE_API,
    VALUE_API,
    WORLD_MODEL_MODULE,
    missing_functions,
    resampler,
)
from cwm.model import WORLD_MODEL_API, ContractFunction, WorldModel
from cwm.sandbox.child import call_guard, child_guard, load_extra
from cwm.types import JSON, CheckFailure, CheckReport, ModelLoadError

# The contracts ``load_contract`` can verify, by the name a payload gives.
CONTRACTS: dict[str, tuple[ContractFunction, ...]] = {
    "world_model": WORLD_MODEL_API, "inference": INFERENCE_API, "value": VALUE_API, "encoder": ENCODER_API,
}


def _guard(fn: Any, *args: Any) -> Any:
    return call_guard(fn, *args)  # the child's guard when running in one, else a plain call


def _report_serialiser() -> Callable[[CheckReport], dict[str, JSON]]:
    """``CheckReport.to_json`` rebuilt from the instances' own attribute dicts, with everything it uses bound
    here, at import (in the zygote, before any candidate runs): a model that patches ``CheckReport``,
    ``dataclasses`` or their fields while it runs cannot change what the report says."""
    vars_, tuple_ = vars, tuple
    failure_fields = tuple_(f.name for f in dataclasses.fields(CheckFailure))

    def to_json(report: CheckReport) -> dict[str, JSON]:
        own = vars_(report)
        by_type = {k: {"passed": vars_(v)["passed"], "total": vars_(v)["total"]} for k, v in own["by_type"].items()}
        failures = [{name: vars_(f)[name] for name in failure_fields if name != "not_kept" or vars_(f)[name]}
                    for f in own["failures"]]  # as CheckReport.to_json: a failure that kept every value as before
        return {"by_type": by_type, "transitions_passed": own["transitions_passed"],
                "transitions_total": own["transitions_total"], "failures": failures, "error": own["error"],
                "breaches": own["breaches"]}

    return to_json


_REPORT_JSON = _report_serialiser()


def require(module: types.ModuleType, api: tuple[ContractFunction, ...] = WORLD_MODEL_API) -> None:
    """Raises ``ModelLoadError`` naming the contract functions ``module`` does not define."""
    missing = missing_functions(vars(module), api)
    if missing:
        raise ModelLoadError(f"{module.__name__}: missing contract function(s): {', '.join(missing)}")


def load_contract(module: types.ModuleType, payload: dict[str, Any]) -> JSON:
    """Verifies that the candidate (already loaded by the child, under the gate) defines one contract.

    Args:
      module: the loaded candidate.
      payload: ``{"contract": name}``, a key of ``CONTRACTS``.

    Returns:
      the names of the contract's functions, all of which the module defines.

    Raises:
      ModelLoadError: a contract function is missing.
    """
    api = CONTRACTS[payload["contract"]]
    require(module, api)
    if api == INFERENCE_API:
        return [resampler(module)[0]]
    return [f.name for f in api]


def check_world_model(module: types.ModuleType, payload: dict[str, Any]) -> JSON:
    """``cwm.checks.run_checks`` on the candidate world model.

    Args:
      module: the loaded candidate.
      payload: ``{"trajectories": [Trajectory, ...], "max_failures_per_type": int (optional), "stretch": bool
        (optional, default true: one timer per replayed trajectory; false: one per call, the slower path kept
        for benchmarks/bench_guard.py)}``.

    Returns:
      ``CheckReport.to_json()``.
    """
    to_json = _REPORT_JSON  # taken before the model runs
    require(module)
    model = WorldModel(module, name=module.__name__, guard=child_guard() if payload.get("stretch", True) else _guard)
    report = run_checks(model, payload["trajectories"],
                        max_failures_per_type=payload.get("max_failures_per_type", 20))
    return to_json(report)


def check_inference(module: types.ModuleType, payload: dict[str, Any]) -> JSON:
    """``cwm.checks.inference.run_inference_checks`` on a candidate inference function (and, for a closed-deck
    candidate that defines its world model too, random play in it).

    Args:
      module: the candidate: an inference module, or one that defines both the world model and inference.
      payload: ``{"closed": [ClosedTrajectory, ...], "model_source": world model source or None (then the
        candidate is both), "terminal": bool, "random_games": int, "max_steps": int, "max_failures_per_type": int,
        "kind": "state" to check ``resample_state`` whatever else the module defines}`` (all but ``closed``
        optional; without ``kind`` the module's own kind, ``cwm.contract.resampler``).

    Returns:
      ``CheckReport.to_json()``.
    """
    to_json = _REPORT_JSON  # taken before the model runs
    require(module, INFERENCE_API)
    world = module
    if payload.get("model_source"):
        world = load_extra(payload["model_source"], WORLD_MODEL_MODULE)
    require(world)
    model = WorldModel(world, name=world.__name__, guard=child_guard())
    limit = payload.get("max_failures_per_type", 20)
    kind, resample = resampler(module)
    if payload.get("kind") == "state":  # a state-inference target: its own function, whatever else is defined
        require(module, STATE_INFERENCE_API)
        kind, resample = "state", vars(module)["resample_state"]
    report = run_inference_checks(model, resample, payload["closed"], kind=kind,  # type: ignore[arg-type]
                                  terminal=bool(payload.get("terminal")), guard=_guard, max_failures_per_type=limit)
    if payload.get("random_games"):
        report = merge(report, random_play_checks(model, num_games=int(payload["random_games"]), seed=0,
                                                  max_steps=int(payload.get("max_steps", 10_000)),
                                                  max_failures=limit))
    return to_json(report)


def random_play(module: types.ModuleType, payload: dict[str, Any]) -> JSON:
    """``cwm.checks.random_play_checks`` on the candidate (closed deck: no ground-truth steps to compare).

    Args:
      payload: ``{"num_games": int, "seed": int, "max_steps": int}``, each optional (defaults 10, 0, 10000).

    Returns:
      ``CheckReport.to_json()``.
    """
    to_json = _REPORT_JSON  # taken before the model runs
    require(module)
    model = WorldModel(module, name=module.__name__, guard=child_guard())
    report = random_play_checks(model, num_games=payload.get("num_games", 10), seed=payload.get("seed", 0),
                                max_steps=payload.get("max_steps", 10_000))
    return to_json(report)


def call(module: types.ModuleType, payload: dict[str, Any]) -> JSON:
    """Calls one function of the candidate and returns its result in JSON form.

    Args:
      payload: ``{"function": name, "args": [JSON, ...]}``.

    Raises:
      ModelLoadError: the function is not defined.
      TypeError: the result is not JSON-serialisable.
    """
    name = payload["function"]
    fn = vars(module).get(name)
    if not callable(fn):
        raise ModelLoadError(f"{module.__name__}: no function {name!r}")
    value = _guard(fn, *payload.get("args", ()))
    try:
        return normalise(value)
    except (TypeError, ValueError) as e:
        raise TypeError(f"{name}(...) returned a value that is not JSON-serialisable: {e}") from None


def check_encoder(module: types.ModuleType, payload: dict[str, Any]) -> JSON:
    """``cwm.checks.encoder.check_encoder`` on a candidate observation encoder.

    Args:
      payload: ``{"observations": [[observation, player], ...], "call_s": float}``.

    Returns:
      ``EncoderReport.to_json()``.
    """
    require(module, ENCODER_API)
    encode = vars(module)["encode"]
    pairs = [(obs, int(player)) for obs, player in payload["observations"]]
    return check_encoder_pairs(lambda obs, player: _guard(encode, obs, player), pairs,
                               call_s=float(payload["call_s"])).to_json()


def check_encoder_games(module: types.ModuleType, payload: dict[str, Any]) -> JSON:
    """``cwm.checks.encoder.check_encoder`` on a candidate encoder over every observation of some games, as a
    ``CheckReport`` (what synthesis scores a candidate by).

    Args:
      module: the candidate (defines ``encode``), loaded by the child under every layer.
      payload: ``{"trajectories": [Trajectory, ...], "call_s": float}``.

    Returns:
      ``CheckReport.to_json()`` (serialised with the functions bound before the candidate ran).
    """
    to_json = _REPORT_JSON
    require(module, ENCODER_API)
    encode = vars(module)["encode"]
    sites = observation_sites(payload["trajectories"])
    report = check_encoder_pairs(lambda obs, player: _guard(encode, obs, player),
                                 [(s.observation, s.player) for s in sites], call_s=float(payload["call_s"]))
    return to_json(encoder_check_report(report, sites))


def check_value(module: types.ModuleType, payload: dict[str, Any]) -> JSON:
    """``cwm.checks.value.run_value_checks`` on a candidate value module.

    Args:
      module: the candidate (defines ``get_value``), loaded by the child under every layer.
      payload: ``{"model_source": str, "trajectories": [Trajectory, ...], "utility": [lo, hi], "call_s": float,
        "max_failures_per_type": int (optional)}``.

    Returns:
      ``CheckReport.to_json()`` (serialised with the functions bound before the candidate ran).
    """
    to_json = _REPORT_JSON
    require(module, VALUE_API)
    world = load_extra(payload["model_source"], WORLD_MODEL_MODULE)
    require(world)
    model = WorldModel(world, name=WORLD_MODEL_MODULE, guard=child_guard())
    lo, hi = payload["utility"]
    report = run_value_checks(model, vars(module)["get_value"], payload["trajectories"], utility=(float(lo), float(hi)),
                              call_s=float(payload["call_s"]), guard=_guard,
                              max_failures_per_type=int(payload.get("max_failures_per_type", 20)))
    return to_json(report)
