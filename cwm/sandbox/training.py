"""PPO's games in a hardened worker: ``env_session`` steps an untrusted model and encoder there, and
``ContainedEnvs`` is this process's handle on it (a ``cwm.ppo.train.Envs``).

The model and the encoder are LLM-written, so they run only in a sandbox session (``Sandbox.open_session``,
as planning does in ``cwm.sandbox.jobs.plan``): the worker holds the games (``cwm.ppo.env.VectorEnv``),
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

import types
from collections.abc import Callable
from typing import Any

import numpy as np

from cwm import values
from cwm.codec import ActionCodec
from cwm.contract import ENCODER_API, ENCODER_MODULE
from cwm.model import WorldModel
from cwm.ppo.env import EnvError, EnvStep, VectorEnv
from cwm.sandbox.child import load_extra
from cwm.sandbox.jobs import require
from cwm.types import JSON, CwmError, ModelLoadError

ENV_JOB = "cwm.sandbox.training:env_session"
_REASON_CHARS = 2000
_MAX_ENVS = 4096  # games one worker holds in one batch: a message may not ask for unbounded memory
_KEPT = 4  # batches a worker holds (training's and the evaluations'); making another drops the least recently used


def env_session(module: types.ModuleType, payload: dict[str, Any]) -> Callable[[JSON], JSON]:
    """The server of one training worker (see the module docstring).

    Raises:
      ModelLoadError: the model or the encoder misses a contract function (the session does not start).
    """
    require(module)
    codec = payload["codec"]
    model = WorldModel(module, name=str(payload["name"]), codec=ActionCodec.from_table(
        codec["table"], num_distinct_actions=codec["num_distinct_actions"],
        max_chance_outcomes=codec["max_chance_outcomes"], prefixed=codec["prefixed"]))
    encoder = load_extra(payload["encoder"], ENCODER_MODULE)
    require(encoder, ENCODER_API)
    return _Server(model, vars(encoder)["encode"]).answer


class _Server:
    def __init__(self, model: WorldModel, encode: Callable[[Any, int], Any]):
        self.model, self.encode = model, encode
        self.envs: dict[str, VectorEnv] = {}

    def answer(self, message: JSON) -> JSON:
        if not isinstance(message, dict) or message.get("op") not in ("make", "reset", "step"):
            raise ModelLoadError(f"the training worker got a message it does not know: {values.describe(message)}")
        try:
            return self._answer(message)
        except (CwmError, EnvError, values.ValueBreach) as e:  # the model or the encoder broke its contract
            return {"refused": str(e)[:_REASON_CHARS]}

    def _answer(self, message: dict[str, Any]) -> JSON:
        name = str(message["env"])
        if message["op"] == "make":
            num_envs = int(message["num_envs"])
            if not 0 < num_envs <= _MAX_ENVS:
                raise ModelLoadError(f"the training worker holds 1 to {_MAX_ENVS} games, not {num_envs}")
            while len(self.envs) >= _KEPT:
                del self.envs[next(iter(self.envs))]
            self.envs[name] = VectorEnv(self.model.new_initial_state, lambda s, p: s.observation(p), self.encode,
                                        num_actions=self.model.codec.num_distinct_actions, num_envs=num_envs,
                                        seed=int(message["seed"]))
            return {"made": name}
        env = self.envs.pop(name)  # unknown: a KeyError, the worker's error
        self.envs[name] = env  # now the most recently used: the training batch outlives any number of evaluations
        step = env.reset() if message["op"] == "reset" else env.step([int(a) for a in message["actions"]])
        return step.to_json()


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
        from cwm.agents.worker import codec_payload
        from cwm.sandbox import pool

        self._own = sandbox is None
        self._box = sandbox or pool.acquire()
        codec = codec_payload(game)
        self.num_actions = int(codec["num_distinct_actions"])  # type: ignore[call-overload]
        payload = {"name": f"model[{game}]", "codec": codec, "encoder": encoder_source}
        self._session = self._box.open_session(ENV_JOB, model_source, payload, move_cpu_s=step_cpu_s)
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
        from cwm.sandbox import pool

        self._session.close()
        if self._own and self._box is not None:
            pool.release(self._box)
            self._box = None

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


ENCODE_JOB = "cwm.sandbox.training:encode_session"


def encode_session(module: types.ModuleType, payload: dict[str, Any]) -> Callable[[JSON], JSON]:
    """The server of an encoder worker: ``{"op": "encode", "observation", "player"}`` is answered by
    ``{"vector": [float]}``, or ``{"refused": why}`` when the encoder raised or returned something else.

    Raises:
      ModelLoadError: the module does not define ``encode``.
    """
    require(module, ENCODER_API)
    encode = vars(module)["encode"]

    def answer(message: JSON) -> JSON:
        if not isinstance(message, dict) or message.get("op") != "encode":
            raise ModelLoadError(f"the encoder worker got a message it does not know: {values.describe(message)}")
        try:
            vector = encode(values.canonical(message["observation"], where="the observation"), int(message["player"]))
        except Exception as e:  # the encoder's bug: the agent forfeits with the reason
            return {"refused": f"encode(...) raised {type(e).__name__}: {str(e)[:_REASON_CHARS]}"}
        if not isinstance(vector, list) or not all(type(x) in (int, float) for x in vector):
            return {"refused": f"encode(...) returned {type(vector).__name__}, not a list of floats"}
        return {"vector": [float(x) for x in vector]}

    return answer


class ContainedEncoder:
    """An untrusted encoder called in a hardened worker, one pipe round trip per call (``encode_session``).

    Args:
      source: the encoder's code.
      call_cpu_s: CPU seconds one call may use.
    """

    def __init__(self, source: str, *, call_cpu_s: float = 5.0):
        self.source, self.call_cpu_s = source, call_cpu_s
        self._box: Any = None
        self._session: Any = None

    def __call__(self, observation: JSON, player: int) -> list[float]:
        """The encoder's vector.

        Raises:
          TrainingRefused: the encoder did not load, raised, returned something else or ran past its limit.
        """
        if self._session is None:
            from cwm.sandbox import pool

            self._box = pool.acquire()
            self._session = self._box.open_session(ENCODE_JOB, self.source, {}, move_cpu_s=self.call_cpu_s)
            if not self._session.alive:
                opened = self._session.opened
                self.close()
                raise TrainingRefused(f"the encoder worker did not start ({opened.kind}): {opened.error}")
        result = self._session.ask({"op": "encode", "observation": observation, "player": player})
        if not result.ok:
            self._session = None
            self.close()
            raise TrainingRefused(f"the encoder worker failed ({result.kind}): {result.error}")
        if "refused" in result.value:
            raise TrainingRefused(f"the encoder failed: {result.value['refused']}")
        return list(result.value["vector"])

    def close(self) -> None:
        """Ends the worker (the next call starts another)."""
        from cwm.sandbox import pool

        session, self._session = self._session, None
        if session is not None:
            session.close()
        if self._box is not None:
            pool.release(self._box)
            self._box = None
