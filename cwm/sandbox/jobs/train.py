"""The servers of PPO's workers: ``env_session`` steps an untrusted model's games with an untrusted encoder
(``planners.env.VectorEnv``), and ``encode_session`` calls an untrusted encoder alone. The host side is
``cwm.sandbox.training`` (``ContainedEnvs``, ``ContainedEncoder``), which says what crosses the pipe.
"""

from __future__ import annotations

import types
from collections.abc import Callable
from typing import Any

from cwm import value_rules
from cwm.codec import ActionCodec
from cwm.contract import ENCODER_API, ENCODER_MODULE
from cwm.model import WorldModel
from cwm.sandbox.child import load_extra
from cwm.sandbox.jobs.check import require
from cwm.types import JSON, CwmError, ModelLoadError
from planners.env import EnvError, VectorEnv

_REASON_CHARS = 2000
_MAX_ENVS = 4096  # games one worker holds in one batch: a message may not ask for unbounded memory
_KEPT = 4  # batches a worker holds (training's and the evaluations'); making another drops the least recently used


def env_session(module: types.ModuleType, payload: dict[str, Any]) -> Callable[[JSON], JSON]:
    """The server of one training worker (see the module docstring).

    Raises:
      ModelLoadError: the model or the encoder misses a contract function (the session does not start).
    """
    require(module)
    model = WorldModel(module, name=str(payload["name"]), codec=ActionCodec.from_json(payload["codec"]))
    encoder = load_extra(payload["encoder"], ENCODER_MODULE)
    require(encoder, ENCODER_API)
    return _Server(model, vars(encoder)["encode"]).answer


class _Server:
    def __init__(self, model: WorldModel, encode: Callable[[Any, int], Any]):
        self.model, self.encode = model, encode
        self.envs: dict[str, VectorEnv] = {}

    def answer(self, message: JSON) -> JSON:
        if not isinstance(message, dict) or message.get("op") not in ("make", "reset", "step"):
            raise ModelLoadError(f"the training worker got a message it does not know: {value_rules.describe(message)}")
        try:
            return self._answer(message)
        except (CwmError, EnvError, value_rules.ValueBreach) as e:  # the model or the encoder broke its contract
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
            raise ModelLoadError(f"the encoder worker got a message it does not know: {value_rules.describe(message)}")
        try:
            vector = encode(value_rules.canonical(message["observation"], where="the observation"), int(message["player"]))
        except Exception as e:  # the encoder's bug: the agent forfeits with the reason
            return {"refused": f"encode(...) raised {type(e).__name__}: {str(e)[:_REASON_CHARS]}"}
        if not isinstance(vector, list) or not all(type(x) in (int, float) for x in vector):
            return {"refused": f"encode(...) returned {type(vector).__name__}, not a list of floats"}
        return {"vector": [float(x) for x in vector]}

    return answer


__all__ = ["encode_session", "env_session"]
