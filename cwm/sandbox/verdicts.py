"""The sandbox's vocabulary, shared by its host side (``box``, ``session``) and its users: the limits a job runs
under (``Limits``), how a job ended (``JobResult``), and the names of the trusted job servers a child runs
(``"module:function"``, each in ``cwm.sandbox.jobs``)."""

from __future__ import annotations

import dataclasses

from cwm.types import JSON, UsageError

CHECK_JOB = "cwm.sandbox.jobs.check:check_world_model"
CALL_JOB = "cwm.sandbox.jobs.check:call"
INFERENCE_JOB = "cwm.sandbox.jobs.check:check_inference"
RANDOM_PLAY_JOB = "cwm.sandbox.jobs.check:random_play"
VALUE_JOB = "cwm.sandbox.jobs.check:check_value"
ENV_JOB = "cwm.sandbox.jobs.train:env_session"  # a PPO training worker
ENCODE_JOB = "cwm.sandbox.jobs.train:encode_session"  # an observation encoder's worker
SAMPLE_JOB = "cwm.sandbox.jobs.sample:sample_session"  # an inference function's draws
HOST_JOB = "cwm.sandbox.jobs.host:host_session"  # a game hosted in an untrusted world model
PLAN_JOB = "cwm.sandbox.jobs.plan:plan_session"  # a CWM agent's planning worker
ENCODER_JOB = "cwm.sandbox.jobs.check:check_encoder"  # an EncoderReport over (observation, player) pairs
ENCODER_GAMES_JOB = "cwm.sandbox.jobs.check:check_encoder_games"  # a CheckReport over every observation of games
TRACE_JOB = "cwm.sandbox.jobs.twin:trace"  # one model's playout records, for the differential equivalence check
PLAYOUTS_JOB = "cwm.sandbox.jobs.twin:playouts"  # seeded rollouts, stepped or a twin's own playout (the same check)
JAX_TRACE_JOB = "cwm.sandbox.jobs.jax_twin:trace"  # a JAX twin's playout records (run under the jax import policy)
JAX_PLAYOUTS_JOB = "cwm.sandbox.jobs.jax_twin:playouts"  # batched random play in a JAX twin (its benchmark)
PROFILE_JOB = "cwm.sandbox.jobs.twin:profile"  # the CPU time of each contract function over a few random playouts


@dataclasses.dataclass(frozen=True)
class Limits:
    """Limits for one sandboxed job.

    CPU time decides; wall time is only a backstop (``cwm.sandbox.watch``), so a verdict does not depend on
    how busy the machine is.

    Attributes:
      wall_s: the wall-clock backstop's floor: a child is never killed by the wall clock before this, and after
        it only when it got under 2% of a core (the backstop grows as its observed CPU share falls). A child
        asleep (blocked in an interruptible sleep, not on the disk or on its own unread answer) for 10 seconds
        in all is killed too, whatever ``wall_s`` is.
      cpu_s: CPU seconds, watched by the zygote from outside and enforced by ``RLIMIT_CPU`` (whole seconds,
        rounded up).
      memory_mb: address space the job may add on top of the pre-loaded zygote (``RLIMIT_AS``).
      per_call_s: CPU seconds (user time) one call into the candidate may use before it is interrupted.
    """

    wall_s: float = 60.0
    cpu_s: float = 60.0
    memory_mb: int = 2048
    per_call_s: float = 2.0

    def __post_init__(self) -> None:
        for name, value in dataclasses.asdict(self).items():
            if not value > 0:
                raise UsageError(f"Limits.{name} must be > 0, got {value!r}")


@dataclasses.dataclass(frozen=True)
class JobResult:
    """What a sandboxed job returned.

    Attributes:
      ok: the job ran to the end (``kind == "ok"``).
      value: the job's JSON result when ok, else ``None``.
      error: why it did not run to the end: the gate's line and reason, or the limit that was hit (cleaned:
        ``cwm.text.clean``, as the candidate's own exception text may be part of it).
      kind: ``ok``, ``static`` (gate), ``load`` (import-time error or missing function), ``timeout``,
        ``memory``, ``crash`` (killed by a signal or exited without a result) or ``error`` (raised,
        tampered, non-deterministic).
    """

    ok: bool
    value: JSON
    error: str
    kind: str


@dataclasses.dataclass(frozen=True)
class BatchJob:
    """One job of a batch (``Sandbox.run_batch``): the trusted job, the untrusted source it runs on, its
    payload, its limits (``None``: the sandbox's) and whether the static gate runs (turned off only by tests
    of the layers behind it, as ``Sandbox.run``'s ``gate``)."""

    job: str
    source: str
    payload: JSON
    limits: Limits | None = None
    gate: bool = True


DEFAULT_LIMITS = Limits()  # the limits a Sandbox applies unless told otherwise


__all__ = ["CALL_JOB", "CHECK_JOB", "ENCODER_GAMES_JOB", "ENCODER_JOB", "ENCODE_JOB", "ENV_JOB", "HOST_JOB",
           "DEFAULT_LIMITS", "INFERENCE_JOB", "JAX_PLAYOUTS_JOB", "JAX_TRACE_JOB", "PLAN_JOB", "PLAYOUTS_JOB", "PROFILE_JOB", "RANDOM_PLAY_JOB", "SAMPLE_JOB", "TRACE_JOB", "VALUE_JOB",
           "BatchJob", "JobResult", "Limits"]
