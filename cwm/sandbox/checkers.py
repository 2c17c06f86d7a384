"""Checkers: a candidate's source in, its ``CheckReport`` out, with the check run where untrusted code must
run: in a hardened sandbox child (a ``Sandbox``), or in this process behind the static gate and a per-call
time budget (``load_source`` + ``call_budget``: trusted or test code only). A refused candidate's report
reads the same in both (``ModelLoadError.verdict``), so the LLM's feedback does not depend on where the
check ran. One factory per synthesis target: world model, inference (open deck or joint), value, encoder.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Iterable, Sequence
from typing import Any

from cwm.checks.encoder import (
    DEFAULT_CALL_S as ENCODER_CALL_S,
)
from cwm.checks.encoder import (
    EncoderReport,
    check_encoder,
    encoder_check_report,
    observation_sites,
    observations_of,
)
from cwm.checks.inference import run_inference_checks
from cwm.checks.random_play import random_play_checks
from cwm.checks.report import merge
from cwm.checks.value import DEFAULT_CALL_S as VALUE_CALL_S
from cwm.checks.value import run_value_checks
from cwm.checks.world_model import run_checks
from cwm.contract import (
    CANDIDATE_MODULE,
    ENCODER_API,
    INFERENCE_API,
    STATE_INFERENCE_API,
    VALUE_API,
    WORLD_MODEL_MODULE,
    resampler,
)
from cwm.model import WorldModel
from cwm.sandbox import pool
from cwm.sandbox.box import CHECK_JOB, ENCODER_GAMES_JOB, ENCODER_JOB, VALUE_JOB, BatchJob
from cwm.sandbox.budget import call_budget
from cwm.sandbox.jobs.check import require
from cwm.sandbox.load import load_source
from cwm.types import CheckReport, ClosedTrajectory, ModelLoadError, Trajectory, error_report

Checker = Callable[[str], CheckReport]


@dataclasses.dataclass(frozen=True)
class BatchChecker:
    """A checker that can also score several candidates at once: ``many`` runs them in one sandbox child
    while they pass (``Sandbox.check_batch``), each with the report ``one`` gives it alone."""

    one: Checker
    many: Callable[[Sequence[str]], list[CheckReport]]

    def __call__(self, source: str) -> CheckReport:
        return self.one(source)


def check_many(check: Checker, sources: Sequence[str]) -> list[CheckReport]:
    """The reports of ``sources`` by ``check``: in one batch when it is a ``BatchChecker``, else one by one."""
    if isinstance(check, BatchChecker):
        return check.many(sources)
    return [check(source) for source in sources]


def _batched(sandbox: Any, one: Checker, job: str, payload: Callable[[], Any], limits: Any) -> Checker:
    """``one``, with a ``many`` that runs ``job`` on several sources through ``sandbox.check_batch`` (a
    ``Sandbox``; another object gets no batch), each source in a child of its own: the sources are different
    untrusted programs, and one child shared between them would let one change what a later one computes
    (through library state no tamper check lists) and make its CPU limit depend on the one before
    (``Sandbox.run_batch``, docs/security.md "Batches")."""
    if not hasattr(sandbox, "check_batch"):
        return one
    return BatchChecker(one, lambda sources: sandbox.check_batch([BatchJob(job, s, payload(), limits)
                                                                 for s in sources], one_child=False))
RANDOM_GAMES = 10  # random-play games a closed-deck candidate's model must finish
IN_PROCESS_CALL_S = 2.0  # the per-call budget of a model checked in this process


def world_model_checker(train: Sequence[Trajectory], *, sandbox: Any = None, limits: Any = None) -> Checker:
    """A checker running ``cwm.checks.run_checks`` on the given trajectories.

    Args:
      train: open-deck trajectories to check against.
      sandbox: a ``cwm.sandbox.Sandbox``; each candidate is checked in a forked, limited child (several at
        once, ``check_many``, in one child while they pass: ``Sandbox.check_batch``). Without
        one, candidates are loaded in this process behind the static gate and a 2 s per-call time budget
        (``cwm.sandbox.budget.call_budget``): only for trusted or test code.
      limits: ``cwm.sandbox.Limits`` for each check (default: the sandbox's own).
    """
    trajs = list(train)
    if sandbox is not None:
        one = lambda source: sandbox.check_world_model(source, trajs, limits=limits)  # noqa: E731
        return _batched(sandbox, one, CHECK_JOB, lambda: sandbox.trajectory_payload(trajs), limits)
    return lambda source: _world_model_in_process(source, trajs)


def _world_model_in_process(source: str, trajs: list[Trajectory]) -> CheckReport:
    try:
        module = load_source(source, name=CANDIDATE_MODULE)
    except ModelLoadError as e:
        return error_report(e.verdict)  # worded as the sandbox words it
    return run_checks(WorldModel(module, name=CANDIDATE_MODULE, guard=call_budget(IN_PROCESS_CALL_S)), trajs)


def inference_checker(closed: Sequence[ClosedTrajectory], *, world_model: str | None, sandbox: Any = None,
                      limits: Any = None, kind: str | None = None, terminal: bool | None = None) -> Checker:
    """Scores a candidate: its inference checks (and, without ``world_model``, random play in the
    candidate's own model). In ``sandbox`` (a ``cwm.sandbox.Sandbox``), else in-process behind the static
    gate: only for trusted or test code. ``kind="state"`` checks ``resample_state`` (default: whichever
    inference function the candidate defines). ``terminal``: also check at the end of each game (default:
    only without ``world_model``, as a closed-deck candidate is checked)."""
    views = list(closed)
    joint = world_model is None
    at_end = joint if terminal is None else terminal
    steps = random_play_steps(views)
    if sandbox is not None:
        return lambda source: sandbox.check_inference(source, views, model_source=world_model, terminal=at_end,
                                                      random_games=RANDOM_GAMES if joint else 0, max_steps=steps,
                                                      limits=limits, kind=kind)
    return lambda source: _inference_in_process(source, views, world_model, steps, kind, at_end)


def random_play_steps(closed: Sequence[ClosedTrajectory]) -> int:
    """How long a random game in a candidate's model may run: ten times the longest recorded game (at
    least 1,000 moves), so a model that never ends fails in seconds, not after 10,000 moves a game."""
    longest = max((len(ct.events) for ct in closed), default=0)
    return max(1000, 10 * longest)


def _inference_in_process(source: str, views: list[ClosedTrajectory], world_model: str | None, steps: int,
                          kind: str | None, terminal: bool) -> CheckReport:
    try:
        candidate = load_source(source, name=CANDIDATE_MODULE,
                                api=STATE_INFERENCE_API if kind == "state" else INFERENCE_API)
        world = candidate if world_model is None else load_source(world_model, name=WORLD_MODEL_MODULE)
        require(world)  # a joint candidate defines the world-model API too, as the sandbox's job requires
    except ModelLoadError as e:
        return error_report(e.verdict)  # worded as the sandbox words it
    guard = call_budget(IN_PROCESS_CALL_S)
    model = WorldModel(world, name=world.__name__, guard=guard)
    found, resample = ("state", candidate.resample_state) if kind == "state" else resampler(candidate)
    report = run_inference_checks(model, resample, views, terminal=terminal, guard=guard,  # type: ignore[arg-type]
                                  kind=found)
    if world_model is None:
        report = merge(report, random_play_checks(model, num_games=RANDOM_GAMES, seed=0, max_steps=steps))
    return report


def value_checker(world_model: str, games: Sequence[Trajectory], *, utility: tuple[float, float],
                  call_s: float = VALUE_CALL_S, sandbox: Any = None, limits: Any = None) -> Checker:
    """Scores a candidate value module by ``cwm.checks.value.run_value_checks``: in ``sandbox`` (a
    ``cwm.sandbox.Sandbox``; each call also under a hard limit of ten budgets), else in this process behind
    the static gate (trusted or test code only)."""
    items = list(games)
    if sandbox is None:
        return lambda source: _value_in_process(source, world_model, items, utility, call_s)
    limits = limits or dataclasses.replace(sandbox.limits, per_call_s=max(10 * call_s, 0.5))
    payload = {"model_source": world_model, "trajectories": items, "utility": list(utility), "call_s": call_s}
    return lambda source: sandbox.check(VALUE_JOB, source, payload, limits=limits)


def _value_in_process(source: str, world_model: str, games: list[Trajectory], utility: tuple[float, float],
                      call_s: float) -> CheckReport:
    try:
        module = load_source(source, name=CANDIDATE_MODULE, api=VALUE_API)
        world = load_source(world_model, name=WORLD_MODEL_MODULE)
    except ModelLoadError as e:
        return error_report(e.verdict)  # worded as the sandbox words it
    model = WorldModel(world, name=WORLD_MODEL_MODULE, guard=call_budget(IN_PROCESS_CALL_S))
    return run_value_checks(model, module.get_value, games, utility=utility, call_s=call_s,
                            guard=call_budget(max(10 * call_s, 0.5)))


def encoder_checker(games: Sequence[Trajectory], *, call_s: float = ENCODER_CALL_S, sandbox: Any = None,
                    limits: Any = None) -> Checker:
    """Scores a candidate encoder by ``cwm.checks.encoder`` as a ``CheckReport``: in ``sandbox`` (a
    ``cwm.sandbox.Sandbox``; each call also under a hard limit of ten budgets, at least half a second), else
    in this process behind the static gate (trusted or test code only)."""
    items = list(games)
    if sandbox is None:
        return lambda source: _encoder_in_process(source, items, call_s)
    limits = limits or dataclasses.replace(sandbox.limits, per_call_s=max(10 * call_s, 0.5))
    payload = {"trajectories": items, "call_s": call_s}
    return lambda source: sandbox.check(ENCODER_GAMES_JOB, source, payload, limits=limits)


def _encoder_in_process(source: str, games: list[Trajectory], call_s: float) -> CheckReport:
    try:
        module = load_source(source, name=CANDIDATE_MODULE, api=ENCODER_API)
    except ModelLoadError as e:
        return error_report(e.verdict)  # worded as the sandbox words it
    guard, encode = call_budget(max(10 * call_s, 0.5)), module.encode
    sites = observation_sites(games)
    report = check_encoder(lambda obs, player: guard(encode, obs, player),
                           [(s.observation, s.player) for s in sites], call_s=call_s)
    return encoder_check_report(report, sites)


def sandbox_check_encoder(source: str, trajectories: Iterable[Trajectory], *, sandbox: Any = None,
                          call_s: float = ENCODER_CALL_S) -> EncoderReport:
    """``check_encoder`` on untrusted encoder ``source`` in a hardened sandbox child (``cwm.sandbox``).

    A source that the gate refuses, that does not load, or that runs past a limit gets a report whose one
    problem says so.
    """
    box = sandbox or pool.acquire()
    try:
        payload = {"observations": [[obs, p] for obs, p in observations_of(trajectories)], "call_s": call_s}
        result = box.run(ENCODER_JOB, source, payload)
    finally:
        if sandbox is None:
            pool.release(box)
    if not result.ok:
        return EncoderReport(0, 0, (f"{result.kind}: {result.error}",), 0.0)
    return EncoderReport.from_json(result.value)  # type: ignore[arg-type]


__all__ = ["RANDOM_GAMES", "BatchChecker", "Checker", "check_many", "encoder_checker", "inference_checker", "random_play_steps",
           "sandbox_check_encoder", "value_checker", "world_model_checker"]
