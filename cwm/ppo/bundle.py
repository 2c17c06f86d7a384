"""Training a bundle's PPO policy inside the bundle's own world model (the JAX extra): the encoder checked, the
cost projected, several seeds trained (resumable), and the best policy added to the bundle.

The model and the encoder are untrusted, so training steps them in a hardened training worker
(``cwm.sandbox.training.ContainedEnvs``); JAX stays in this process. The run directory holds each seed's
checkpoints (``seed-N/``), the best policy as a policy directory (``policy/``) and the learning curves
(``curve.png``); running again with the same directory and settings continues from the checkpoints. The
best policy is then written into the bundle in place (``cwm.bundle.policy.save_policy``: ``policy.npz``,
``encoder.py``, the manifest re-hashed last), replacing an earlier one, as the value function's tournament
writes ``value.py``. ``cwm train ppo`` (``cwm.commands.train``) is the command.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from cwm.arena.cost import RAY_CORES, duration
from cwm.bundle import Bundle, BundleError
from cwm.bundle.policy import ENCODER_FILE, load_policy, save_policy
from cwm.executors import InlineExecutor, JobCrashed
from cwm.games import trajectories
from cwm.ppo.contained import time_twin_contained
from cwm.ppo.seeds import EnvSource, train_seeds
from cwm.ppo.train import CHECKPOINT, TrainConfig, TrainResult, read_checkpoint, time_update
from cwm.sandbox.checkers import sandbox_check_encoder
from cwm.text import counted
from cwm.types import JSON


@dataclasses.dataclass(frozen=True)
class TrainingEstimate:
    """A training run's projected cost on this machine: one update timed, projected onto every update left.

    Attributes:
      update_s: CPU seconds of one update (a rollout of ``num_envs`` x ``rollout`` steps and its gradient steps).
      updates_left: updates still to run, over every seed (checkpointed ones are done).
      seeds_left: seeds with updates left (they run side by side on ``workers``).
      workers: the executor's parallel workers.
    """

    update_s: float
    updates_left: int
    seeds_left: int
    workers: int

    @property
    def cpu_s(self) -> float:
        return self.update_s * self.updates_left

    @property
    def wall_s(self) -> float:
        """Projected wall seconds on otherwise idle cores: the seeds run side by side, one per worker."""
        return self.cpu_s / max(1, min(self.workers, self.seeds_left))

    def lines(self) -> list[str]:
        if not self.updates_left:
            return ["cost estimate: every seed's checkpoint is complete; nothing left to train"]
        ray = ", ".join(f"{n} cores {duration(self.cpu_s / max(1, min(n, self.seeds_left)))}" for n in RAY_CORES)
        return [f"cost estimate: {duration(self.update_s)} per update; {counted(self.updates_left, 'update')} left over "
                f"{counted(self.seeds_left, 'seed')}",
                f"  CPU {duration(self.cpu_s)}, wall {duration(self.wall_s)} on {self.workers} workers here "
                f"(on a Ray cluster: {ray}); evaluations not counted"]

    def to_json(self) -> dict[str, JSON]:
        return dataclasses.asdict(self) | {"cpu_s": self.cpu_s, "wall_s": self.wall_s}


def training_source(bundle: Bundle, encoder_source: str | None = None, *, twin_source: str = "") -> EnvSource:
    """What to train in: the bundle's model with ``encoder_source`` (default: the bundle's ``encoder.py``),
    both contained; the encoder is checked first (``cwm.checks.encoder``) on the bundle's stored games. With
    ``twin_source`` (the bundle's ``jax_twin.py``, checked at load against the model and the bundle's encoder),
    the seeds train on the twin entirely in JAX, contained (``cwm.ppo.contained``).

    Raises:
      BundleError: no encoder given and none in the bundle, or an encoder that fails its checks (the first
        problem named).
    """

    source = encoder_source if encoder_source is not None else bundle.sources.get(ENCODER_FILE)
    if source is None:
        raise BundleError(f"{bundle.path}: the bundle has no {ENCODER_FILE}; give the observation encoder to "
                          f"train with (--encoder FILE)")
    report = sandbox_check_encoder(source, trajectories.load_open(bundle.path / "trajectories.jsonl"))
    if not report.ok:
        why = report.problems[0] if report.problems else "no observation was encoded"
        raise BundleError(f"the encoder fails its checks on {bundle.path}'s stored games "
                          f"({len(report.problems)} problems): {why}")
    return EnvSource(game=bundle.spec.name, encoder_source=source, model_source=bundle.sources["model.py"],
                     twin_source=twin_source)


def updates_done(out_dir: str | Path, seed: int) -> int:
    """Updates a seed's checkpoint in ``out_dir`` holds (0 without one)."""
    file = Path(out_dir) / f"seed-{seed}" / CHECKPOINT
    if not file.is_file():
        return 0
    meta, _ = read_checkpoint(file, arrays=False)
    return int(meta["update"])


def estimate_training(source: EnvSource, config: TrainConfig, seeds: Sequence[int], *, out_dir: str | Path,
                      workers: int, executor: Any = None) -> TrainingEstimate:
    """Times one update in the bundle's model (``cwm.ppo.train.time_update``) and projects the updates the
    seeds in ``out_dir`` have left; nothing is timed when none are left.

    The update is timed as a job of ``executor`` (``None``: here), where the seeds will train: JAX is then
    first run in a worker, never in a process that a process pool forks afterwards (a fork of a process
    running JAX's threads deadlocks), and a Ray job is timed on the cluster's machine.

    Raises:
      JobCrashed: the worker timing it died.
    """

    left = [max(0, config.updates - updates_done(out_dir, s)) for s in seeds]
    if not any(left):
        return TrainingEstimate(0.0, 0, 0, workers)
    (update_s,) = list((executor or InlineExecutor()).imap_unordered(_time_update, [(source, config)]))
    if isinstance(update_s, JobCrashed):
        raise update_s
    return TrainingEstimate(float(update_s), sum(left), sum(1 for n in left if n), workers)


def _time_update(job: tuple[EnvSource, TrainConfig]) -> float:
    """One timed update (a top-level function: executors pickle it)."""
    source, config = job
    if source.twin_source:
        return time_twin_contained(source.twin_source, config, game=source.game)
    with source.open() as envs:
        return time_update(envs, config)


def train_bundle(bundle: Bundle, source: EnvSource, config: TrainConfig, seeds: Sequence[int], *,
                 out_dir: str | Path, executor: Any = None, progress: bool = True) -> TrainResult:
    """Trains ``seeds`` (``cwm.ppo.seeds.train_seeds`` into ``out_dir``) and writes the best against random
    into ``bundle`` in place, with the run in its manifest's ``provenance.ppo``.

    Raises:
      TrainingRefused: the model or encoder broke its contract or a worker limit while training.
      BundleError: the bundle changed on disk since it was loaded (its files no longer match its manifest).
    """
    out = Path(out_dir)
    best = train_seeds(source, config, seeds, out_dir=out, executor=executor, progress=progress)
    params, policy, record = load_policy(out / "policy")
    provenance: dict[str, JSON] = {"seeds": list(seeds), "best_seed": best.seed, "best_score": best.best_score,
                                   "total_steps": config.total_steps, "recurrent": config.recurrent,
                                   "run_dir": str(out.resolve())}
    save_policy(bundle.path, params, policy, encoder_source=source.encoder_source, record=record,
                provenance=provenance)
    return best


__all__ = ["TrainingEstimate", "estimate_training", "train_bundle", "training_source", "updates_done"]
