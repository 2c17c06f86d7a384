"""PPO's games in a hardened worker, the host side: ``ContainedEnvs`` is this process's handle on a training
worker (a ``cwm.ppo.train.Envs``) and ``ContainedEncoder`` on an encoder worker; their servers are
``cwm.sandbox.jobs.train``.

The model and the encoder are LLM-written, so they run only in a sandbox session (``Sandbox.open_session``,
as planning does in ``cwm.sandbox.jobs.plan``): the worker holds the games (``planners.env.VectorEnv``),
plays the random opponent and chance, encodes the learner's observations and answers each batch step
with plain JSON (vectors, masks, rewards). JAX stays in the trusted process: the network, its gradients
and the optimiser never share a process with the model, and the worker needs nothing beyond numpy. One
pipe round trip per batch step; ``benchmarks/bench_ppo.py`` measures what that costs.

Payload: ``{"name", "codec": {"table", "num_distinct_actions", "max_chance_outcomes", "prefixed"},
"encoder": source}``. Messages: ``{"op": "make", "env": id, "num_envs", "seed"}``, ``{"op": "reset", "env": id}``
and ``{"op": "step", "env": id, "actions": [int]}``, answered by ``EnvStep.to_json()`` (``{"made": id}`` for
``make``), or ``{"refused": why}`` when the model or the encoder broke its contract.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from cwm import games
from cwm.sandbox import pool
from cwm.sandbox.box import ENCODE_JOB, ENV_JOB
from cwm.types import JSON, CwmError
from planners.env import EnvStep


class TrainingRefused(CwmError):
    """The training worker stopped: the model or the encoder broke its contract, or ran past a limit."""


class ContainedEnvs:
    """Games of an untrusted model and encoder, stepped in one hardened worker (``env_session``).

    Args:
      model_source, encoder_source: the untrusted code.
      game: the real game (its action codec: ids match the real game's).
      step_cpu_s: CPU seconds the worker may use per batch step.
      sandbox: the sandbox to use (default: one from this process's pool, returned by ``close``).
    """

    def __init__(self, model_source: str, encoder_source: str, game: str, *, step_cpu_s: float = 60.0,
                 sandbox: Any = None):
        self._worker = pool.Lease(sandbox)
        codec = games.action_codec(games.resolve(game)).to_json()
        self.num_actions = int(codec["num_distinct_actions"])  # type: ignore[call-overload]
        payload = {"name": f"model[{game}]", "codec": codec, "encoder": encoder_source}
        self._session = self._worker.open(ENV_JOB, model_source, payload, move_cpu_s=step_cpu_s)
        if not self._session.alive:
            opened = self._session.opened
            self.close()
            raise TrainingRefused(f"the training worker did not start ({opened.kind}): {opened.error}")
        self._made = 0

    def ask(self, message: dict[str, Any]) -> dict[str, Any]:
        """One exchange with the worker.

        Raises:
          TrainingRefused: the worker refused (a contract breach) or failed (a limit, a crash).
        """
        result = self._session.ask(message)
        if not result.ok:
            raise TrainingRefused(f"the training worker failed ({result.kind}): {result.error}")
        answer = result.value if isinstance(result.value, dict) else {}
        if "refused" in answer:
            raise TrainingRefused(f"the world model or its encoder failed: {answer['refused']}")
        return answer

    def make(self, num_envs: int, seed: int) -> _ContainedEnv:
        self._made += 1
        name = f"env-{self._made}"
        self.ask({"op": "make", "env": name, "num_envs": num_envs, "seed": seed})
        return _ContainedEnv(self, name, num_envs)

    def close(self) -> None:
        self._worker.close()

    def __enter__(self) -> ContainedEnvs:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


class _ContainedEnv:
    """One batch of games in the worker (``cwm.ppo.train.Env``); every answer is checked here."""

    def __init__(self, owner: ContainedEnvs, name: str, num_envs: int):
        self.owner, self.name, self.num_envs = owner, name, num_envs
        self.obs_size = 0

    def reset(self) -> EnvStep:
        return self._checked(self.owner.ask({"op": "reset", "env": self.name}))

    def step(self, actions: np.ndarray) -> EnvStep:
        return self._checked(self.owner.ask({"op": "step", "env": self.name, "actions": [int(a) for a in actions]}))

    def _checked(self, answer: dict[str, Any]) -> EnvStep:
        """The worker's answer as an ``EnvStep``, refused unless every array has its shape and finite values and
        every game has a legal action (the worker runs hostile code: its answers are not taken on trust)."""
        try:
            step = EnvStep.from_json(answer)
        except (KeyError, TypeError, ValueError) as e:
            raise TrainingRefused(f"the training worker's answer is malformed ({type(e).__name__}: {e})") from None
        n = self.num_envs
        self.obs_size = self.obs_size or (step.obs.shape[1] if step.obs.ndim == 2 else 0)
        shapes = {"obs": (n, self.obs_size), "mask": (n, self.owner.num_actions), "reward": (n,), "done": (n,),
                  "seat": (n,)}
        for field, shape in shapes.items():
            if getattr(step, field).shape != shape:
                raise TrainingRefused(f"the training worker's {field} has shape {getattr(step, field).shape}, "
                                      f"not {shape}")
        if not (np.isfinite(step.obs).all() and np.isfinite(step.reward).all()) or not step.mask.any(axis=1).all():
            raise TrainingRefused("the training worker answered a number that is not finite or a game with no "
                                  "legal action")
        return step


class ContainedEncoder:
    """An untrusted encoder called in a hardened worker, one pipe round trip per call (``encode_session``).

    Args:
      source: the encoder's code.
      call_cpu_s: CPU seconds one call may use.
    """

    def __init__(self, source: str, *, call_cpu_s: float = 5.0):
        self.source, self.call_cpu_s = source, call_cpu_s
        self._worker = pool.Lease()

    def __call__(self, observation: JSON, player: int) -> list[float]:
        """The encoder's vector.

        Raises:
          TrainingRefused: the encoder did not load, raised, returned something else or ran past its limit.
        """
        session = self._worker.session
        if session is None:
            session = self._worker.open(ENCODE_JOB, self.source, {}, move_cpu_s=self.call_cpu_s)
            if not session.alive:
                self.close()
                raise TrainingRefused(f"the encoder worker did not start ({session.opened.kind}): "
                                      f"{session.opened.error}")
        result = session.ask({"op": "encode", "observation": observation, "player": player})
        if not result.ok:
            self.close()
            raise TrainingRefused(f"the encoder worker failed ({result.kind}): {result.error}")
        if "refused" in result.value:
            raise TrainingRefused(f"the encoder failed: {result.value['refused']}")
        return list(result.value["vector"])

    def close(self) -> None:
        """Ends the worker (the next call starts another)."""
        self._worker.close()
