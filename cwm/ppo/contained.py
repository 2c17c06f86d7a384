"""PPO on an LLM-written JAX twin, contained: the whole JAX training (``cwm.ppo.jax_train.train_twin``) runs in
one hardened sandbox child started with the ``jax`` import policy (JAX is up before the layers are; the twin
may import only ``jax.numpy``, ``jax.lax``, ``jax.random`` and ``math``), and only numbers come back, checked
here before anything uses them.

``train_job`` is the child's side. Payload: ``{"config": TrainConfig's fields, "game": str, "num_actions":
int}``. It returns ``{"policy": base64 of a policy.npz (the best weights), "best_score": float, "curve":
[row]}``, or ``{"refused": line}`` when the twin broke its contract. No checkpoint is written (the child
writes no file): a contained run is one job, under one CPU budget.

``train_twin_contained`` is the host's side: the policy is read as untrusted input
(``cwm.bundle.policy.read_policy``: names, shapes, finiteness, bounded archive) and must be of the game's
action count and the run's network; the score and every curve row must be finite numbers, each row's fields
among those an evaluation writes (``CURVE_FIELDS``), and an evaluation's counts per seat (``losses_seat0``,
``games_seat0``, ..., and a stop check's ``check_`` ones) whole numbers that add up to the games the run's
settings play (required when ``TrainConfig.keep`` or ``stop_games`` asks for them).
"""

from __future__ import annotations

import base64
import binascii
import dataclasses
import math
import types
from typing import Any

from cwm import games
from cwm.bundle.policy import MAX_ARCHIVE_BYTES, PolicyConfig, PolicyError, policy_bytes, read_policy
from cwm.ppo.jax_env import TwinContractError, twin_shape
from cwm.ppo.jax_train import time_twin_update, train_twin
from cwm.ppo.train import SEAT_COUNTS, TrainConfig, TrainResult
from cwm.sandbox import Limits, Sandbox, pool
from cwm.sandbox.training import TrainingRefused
from cwm.types import JSON

TWIN_TRAIN_JOB = "cwm.ppo.contained:train_job"
_REASON_CHARS = 500
_MAX_CURVE_ROWS = 100_000


def train_job(module: types.ModuleType, payload: dict[str, Any]) -> JSON:
    """Trains on the twin ``module`` in this (sandbox) process (with ``"time": true`` in the payload, times one
    update instead: ``{"update_s": CPU seconds}``); see the module docstring."""
    config = TrainConfig(**payload["config"])
    try:
        twin_shape(module, num_actions=int(payload["num_actions"]))
        if payload.get("time"):
            return {"update_s": time_twin_update(module, config)[0]}
        result = train_twin(module, config, out_dir=None, game=str(payload["game"]), progress=False)
    except TwinContractError as e:
        return {"refused": str(e)[:_REASON_CHARS]}
    data = policy_bytes(result.params, result.policy)
    return {"policy": base64.b64encode(data).decode("ascii"), "best_score": result.best_score,
            "curve": result.curve}  # type: ignore[dict-item]


def default_cpu_s(config: TrainConfig) -> float:
    """A contained run's CPU budget: 10 minutes (JAX's start and compilation) plus 1 ms per environment step,
    some 30 times what tic-tac-toe's twin takes (docs/ppo.md), evaluations included."""
    return 600.0 + 1e-3 * config.updates * config.num_envs * config.rollout


def train_twin_contained(twin_source: str, config: TrainConfig, *, game: str, cpu_s: float | None = None,
                         memory_mb: int = 8192, sandbox: Sandbox | None = None) -> TrainResult:
    """Trains one seed on an untrusted JAX twin in a sandbox child; the best policy and the curve, checked.

    Args:
      twin_source: the twin's source (``jax_twin.py``).
      config: the run's settings (``TrainConfig``).
      game: the game (a registry name): its codec's action count must be the twin's.
      cpu_s: CPU seconds the whole run may take (JAX's start, compiling, training, evaluations; default
        ``default_cpu_s``); the wall clock is only the sandbox's generous backstop.
      memory_mb: address space the child may add (JAX reserves much of it up front).
      sandbox: the sandbox to use (default: one from this process's pool, given back after).

    Raises:
      TrainingRefused: the twin broke its contract, the child ran past a limit, or what came back is not a
        policy of this game and network with finite numbers (one line each).
    """
    value = _run(twin_source, config, game, {}, Limits(wall_s=60.0, cpu_s=cpu_s or default_cpu_s(config),
                                                       memory_mb=memory_mb), sandbox)
    return _checked(value, config, game, games.action_codec(games.resolve(game)).num_distinct_actions)


def time_twin_contained(twin_source: str, config: TrainConfig, *, game: str, memory_mb: int = 8192,
                        sandbox: Sandbox | None = None) -> float:
    """CPU seconds of one update of ``train_twin_contained`` at ``config``, timed in a sandbox child
    (``cwm.ppo.jax_train.time_twin_update``: after an untimed one that compiles).

    Raises:
      TrainingRefused: as ``train_twin_contained``, or an answer that is not a finite positive number.
    """
    value = _run(twin_source, config, game, {"time": True}, Limits(wall_s=60.0, cpu_s=600.0, memory_mb=memory_mb),
                 sandbox)
    if type(value) is dict and set(value) == {"refused"}:
        raise TrainingRefused(_line(str(value["refused"])))
    if type(value) is not dict or set(value) != {"update_s"} or not _number(value["update_s"], "update_s") > 0:
        raise TrainingRefused("JAX twin training: the timing child's answer is not {update_s: seconds}")
    return float(value["update_s"])  # type: ignore[arg-type]


def _run(twin_source: str, config: TrainConfig, game: str, extra: dict[str, JSON], limits: Limits,
         sandbox: Sandbox | None) -> JSON:
    config.check()
    num_actions = games.action_codec(games.resolve(game)).num_distinct_actions
    payload = {"config": dataclasses.asdict(config), "game": game, "num_actions": num_actions} | extra
    box = sandbox or pool.acquire()
    try:
        result = box.run(TWIN_TRAIN_JOB, twin_source, payload, limits=limits, policy="jax")
    finally:
        if sandbox is None:
            pool.release(box)
    if not result.ok:
        raise TrainingRefused(f"JAX twin training stopped ({result.kind}): {_line(result.error)}")
    return result.value


def _checked(value: JSON, config: TrainConfig, game: str, num_actions: int) -> TrainResult:
    """What the child returned, as a ``TrainResult``, after checking every part of it."""
    if type(value) is dict and set(value) == {"refused"}:
        raise TrainingRefused(_line(str(value["refused"])))
    if type(value) is not dict or set(value) != {"policy", "best_score", "curve"}:
        raise TrainingRefused("JAX twin training: the child's answer is not {policy, best_score, curve}")
    encoded = value["policy"]
    if type(encoded) is not str or len(encoded) > MAX_ARCHIVE_BYTES * 4 // 3 + 4:
        raise TrainingRefused("JAX twin training: the policy is not a base64 text within the policy file bound")
    try:
        data = base64.b64decode(encoded, validate=True)
    except binascii.Error as e:
        raise TrainingRefused(f"JAX twin training: the policy is not valid base64 ({_line(str(e))})") from None
    try:
        params, policy, _ = read_policy(data, where="the JAX twin's policy")
    except PolicyError as e:
        raise TrainingRefused(f"JAX twin training: {_line(str(e))}") from None
    expected = PolicyConfig(policy.obs_size, num_actions, config.hidden, config.recurrent, game)
    if policy != expected:
        raise TrainingRefused(f"JAX twin training: the policy is {dataclasses.asdict(policy)}, not of this game "
                              f"and network ({dataclasses.asdict(expected)})")
    return TrainResult(params, policy, _number(value["best_score"], "best_score"), _curve(value["curve"], config),
                       config.seed)


# The fields of a curve row: the update and its steps, then an evaluation's figures (``cwm.ppo.train.summary``),
# its counts per seat and those of its stop check.
CURVE_FIELDS = frozenset({"update", "steps", "mean_return", "win_rate", "loss_rate", "score", "mean_return_seat0",
                          "mean_return_seat1", "loss_rate_seat0", "loss_rate_seat1",
                          *SEAT_COUNTS, *(f"check_{k}" for k in SEAT_COUNTS)})


def _curve(rows: JSON, config: TrainConfig) -> list[dict[str, float]]:
    if type(rows) is not list or len(rows) > _MAX_CURVE_ROWS:
        raise TrainingRefused("JAX twin training: the curve is not a list of rows")
    out = []
    for i, row in enumerate(rows):
        if type(row) is not dict or not all(type(k) is str for k in row):
            raise TrainingRefused(f"JAX twin training: curve row {i} is not an object")
        unknown = next((k for k in row if k not in CURVE_FIELDS), None)
        if unknown is not None:
            raise TrainingRefused(f"JAX twin training: curve row {i} has an unknown field {unknown!r:.40}")
        out.append({k: _number(v, f"curve row {i}, {k!r:.40}") for k, v in row.items()})
        _seat_counts(out[-1], i, config)
    return out


def _seat_counts(row: dict[str, float], i: int, config: TrainConfig) -> None:
    """An evaluation row's counts per seat: all or none (all when the settings use them), whole numbers, the
    losses within the games, the games those the evaluation (or its stop check) plays, the rates theirs."""
    required = config.keep != "score" or config.stop_games > 0
    for prefix, played in (("", config.eval_games), ("check_", 2 * config.stop_games)):
        present = [prefix + k in row for k in SEAT_COUNTS]
        if not any(present) and (prefix or not required):
            continue
        if not all(present):
            raise TrainingRefused(f"JAX twin training: curve row {i} lacks some of {prefix}{', '.join(SEAT_COUNTS)}")
        if required and not prefix and not all(f"loss_rate_seat{seat}" in row for seat in (0, 1)):
            raise TrainingRefused(f"JAX twin training: curve row {i} lacks loss_rate_seat0 or loss_rate_seat1")
        counts = [row[prefix + k] for k in SEAT_COUNTS]
        if not all(type(c) is int and c >= 0 for c in counts) or counts[2] + counts[3] != played \
                or counts[0] > counts[2] or counts[1] > counts[3]:
            raise TrainingRefused(f"JAX twin training: curve row {i}: {prefix}losses and games per seat "
                                  f"{counts} are not whole numbers of losses within {played} games")
        for seat in (0, 1):
            rate = row.get(f"loss_rate_seat{seat}") if not prefix else None
            if rate is not None and counts[seat + 2] and abs(rate - counts[seat] / counts[seat + 2]) > 1e-9:
                raise TrainingRefused(f"JAX twin training: curve row {i}: loss_rate_seat{seat} {rate!r:.40} is not "
                                      f"{counts[seat]} of {counts[seat + 2]} games")


def _number(value: JSON, where: str) -> float:
    if type(value) not in (int, float) or not math.isfinite(value):  # type: ignore[arg-type]
        raise TrainingRefused(f"JAX twin training: {where} is not a finite number")
    return value  # type: ignore[return-value]


def _line(text: str) -> str:
    return " ".join(text.split())[:_REASON_CHARS]
