"""The JAX side of the differential equivalence check (``cwm.sandbox.equivalence.check_jax_equivalence``):
``trace(module, payload)`` replays the reference's playouts in an untrusted JAX twin (``cwm.jax_contract``),
inside a sandbox child started with the ``jax`` import policy, and writes down what the twin says at every
state, in the terms of the game's action codec.

A state's record: ``player`` (``current_player``), ``legal`` (the strings of the ids ``legal_mask`` marks,
sorted; a digest unless ``detail``), ``chance`` (``[outcome string, probability]`` of every id with a positive
``chance_probs``, sorted), ``rewards``, ``decoded`` (``decode(state)``, canonical JSON) and ``tensors``
(``observation_tensor(state, p)`` of every player, flattened). Every array the twin returns is checked for its
contract's shape and dtype kind and read into plain Python numbers here; every twin function runs jitted under
the child's per-call budget (tracing and compiling included).

Payload: ``{"codec": ActionCodec.to_json(), "num_players": int, "playouts": [{"kind": "replay", "actions": [str]}],
"max_steps": int, "detail": step or None}``. Returns as ``cwm.sandbox.jobs.twin.trace`` does.
"""

from __future__ import annotations

import math
import time
import types
from typing import Any

from cwm import value_rules
from cwm.codec import ActionCodec
from cwm.jax_contract import constant_problems, random_playouts_fn, required_functions
from cwm.sandbox.child import child_guard
from cwm.sandbox.jobs.check import require
from cwm.sandbox.jobs.twin import digest
from cwm.types import CHANCE, JSON, TERMINAL, CwmError, ModelContractError, ModelLoadError

_ERROR_CHARS = 2000


class Twin:
    """A loaded JAX twin's functions, jitted once, each call under the child's per-call budget, each answer
    checked against the contract and turned into Python values."""

    def __init__(self, module: types.ModuleType, codec: ActionCodec, num_players: int):
        import jax

        namespace = vars(module)
        require(module, required_functions(codec.max_chance_outcomes))
        problems = constant_problems(namespace, num_players=num_players,
                                     num_distinct_actions=codec.num_distinct_actions,
                                     max_chance_outcomes=codec.max_chance_outcomes)
        if problems:
            raise ModelLoadError(f"{module.__name__}: {'; '.join(problems)}")
        self.codec, self.guard = codec, child_guard()
        self.players: int = namespace["NUM_PLAYERS"]
        self.shape: tuple[int, ...] = namespace["OBSERVATION_SHAPE"]
        self.fns = {name: jax.jit(namespace[name]) for name in
                    ("current_player", "legal_mask", "step", "rewards", "observation_tensor")}
        self.fns["init"] = jax.jit(namespace["init"])
        if codec.max_chance_outcomes:
            self.fns["chance_probs"] = jax.jit(namespace["chance_probs"])
        self.decode = namespace["decode"]

    def call(self, name: str, *args: Any) -> Any:
        """``name(*args)`` of the twin, jitted, as a host numpy array (the computation finished)."""
        import numpy as np

        return np.asarray(self.guard(self.fns[name], *args))

    def array(self, name: str, *args: Any, shape: tuple[int, ...], kind: str) -> Any:
        """A twin function's array, checked: ``shape`` exactly, dtype kind among ``kind`` (numpy's codes)."""
        value = self.call(name, *args)
        if value.shape != shape or value.dtype.kind not in kind:
            raise ModelContractError(f"{name} returned {value.dtype}{list(value.shape)}, the contract says "
                                     f"{'/'.join(kind)} of shape {list(shape)}")
        return value

    def record(self, state: Any, *, full: bool) -> dict[str, JSON]:
        """What the twin says at ``state`` (module docstring)."""
        player = int(self.array("current_player", state, shape=(), kind="iu"))
        if player not in (CHANCE, TERMINAL) and not 0 <= player < self.players:
            raise ModelContractError(f"current_player returned {player}, not a player, {CHANCE} or {TERMINAL}")
        legal = chance = None
        mask = self.array("legal_mask", state, shape=(self.codec.num_distinct_actions,), kind="b")
        if player >= 0:
            legal = sorted(self._string(player, int(i)) for i in mask.nonzero()[0])
        elif mask.any():
            raise ModelContractError(f"legal_mask marks actions where current_player is {player} (no one acts)")
        if player == CHANCE:
            chance = self.chance(state)
        elif self.codec.max_chance_outcomes and self.call("chance_probs", state).any():
            raise ModelContractError(f"chance_probs is not all zeros where current_player is {player} (no chance)")
        rewards = self.array("rewards", state, shape=(self.players,), kind="f")
        tensors = [self.array("observation_tensor", state, p, shape=self.shape, kind="f").ravel().tolist()
                   for p in range(self.players)]
        numbers = [float(r) for r in rewards] + [x for t in tensors for x in t]
        if not all(math.isfinite(x) for x in numbers):
            raise ModelContractError("rewards or observation_tensor returned a value that is not finite")
        decoded = value_rules.canonical(self.guard(self.decode, state), where="decode(state)")
        return {"player": player, "legal": legal if full or legal is None else digest(legal), "chance": chance,
                "rewards": [float(r) for r in rewards], "decoded": decoded, "tensors": tensors}

    def chance(self, state: Any) -> list[list[JSON]]:
        """The chance distribution at ``state``: ``[string, probability]`` of each id with a positive one."""
        probs = self.array("chance_probs", state, shape=(self.codec.max_chance_outcomes,), kind="f")
        if not all(math.isfinite(float(p)) and p >= 0 for p in probs):
            raise ModelContractError("chance_probs returned a negative or non-finite probability")
        return sorted([self._string(CHANCE, int(i)), float(probs[i])] for i in probs.nonzero()[0])

    def _string(self, player: int, action: int) -> str:
        try:
            return self.codec.name(player, action)
        except ModelContractError:
            who = "chance outcome" if player == CHANCE else f"action of player {player}"
            raise ModelContractError(f"id {action} is marked possible but is no {who} of the game's codec") from None

    def follow(self, state: Any, record: dict[str, Any], action: str) -> Any:
        """The state after the reference's ``action`` (a string), refused when the twin does not allow it."""
        player = record["player"]
        if player == TERMINAL:
            raise ModelContractError(f"the game is over for the twin, the reference plays {action!r}")
        aid = self.codec.to_id(player, action)
        allowed = (self.call("chance_probs", state)[aid] > 0) if player == CHANCE else bool(
            self.call("legal_mask", state)[aid])
        if not allowed:
            raise ModelContractError(f"the twin does not allow the reference's {action!r} (id {aid}) here")
        import jax.numpy as jnp

        return self.guard(self.fns["step"], state, jnp.int32(aid))


def trace(module: types.ModuleType, payload: dict[str, Any]) -> JSON:
    """Replays the payload's playouts in the twin ``module`` and records every state (module docstring).

    Raises:
      ModelLoadError: the module misses a contract function or its constants disagree with the codec.
    """
    twin = Twin(module, ActionCodec.from_json(payload["codec"]), int(payload["num_players"]))
    max_steps, detail = int(payload["max_steps"]), payload.get("detail")
    if detail is not None:
        return _detail(twin, [str(a) for a in payload["playouts"][0]["actions"]], int(detail))
    return [_playout(twin, [str(a) for a in spec["actions"]], max_steps) for spec in payload["playouts"]]


def _playout(twin: Twin, actions: list[str], max_steps: int) -> dict[str, JSON]:
    states: list[JSON] = []
    done: list[str] = []
    try:
        state = twin.guard(twin.fns["init"])
        for action in [*actions[:max_steps], None]:
            record = twin.record(state, full=False)
            states.append(record)
            if action is None:
                break
            state = twin.follow(state, record, action)
            done.append(action)
        return {"actions": done, "states": states, "error": None}  # type: ignore[dict-item]
    except (CwmError, value_rules.ValueBreach, TypeError, ValueError, IndexError) as e:
        return {"actions": done, "states": states, "error": f"{type(e).__name__}: {e}"[:_ERROR_CHARS]}  # type: ignore[dict-item]


def _detail(twin: Twin, actions: list[str], step: int) -> dict[str, JSON]:
    """The full record of state ``step`` of one replayed playout."""
    history: list[str] = []
    try:
        state = twin.guard(twin.fns["init"])
        for action in actions[:step]:
            state = twin.follow(state, twin.record(state, full=False), action)
            history.append(action)
        return {"record": twin.record(state, full=True), "history": history, "error": None}  # type: ignore[dict-item]
    except (CwmError, value_rules.ValueBreach, TypeError, ValueError, IndexError) as e:
        return {"record": None, "history": history, "error": f"{type(e).__name__}: {e}"[:_ERROR_CHARS]}  # type: ignore[dict-item]


def playouts(module: types.ModuleType, payload: dict[str, Any]) -> JSON:
    """Batched random play in the twin ``module`` (``cwm.jax_contract.random_playouts_fn``): ``repeats`` runs
    of ``batch`` games for ``steps`` steps each, the first run compiling; for the benchmark, which measures
    this child's CPU from outside.

    Payload: ``{"codec": ..., "num_players": int, "batch": int, "steps": int, "repeats": int, "seed": int}``.

    Returns:
      ``{"transitions": [per run], "episodes": [per run], "cpu_s": [per run]}`` (the CPU seconds this child
      measured around each run: a cross-check of the measurement from outside, never a verdict).
    """
    import jax

    twin = Twin(module, ActionCodec.from_json(payload["codec"]), int(payload["num_players"]))
    play = random_playouts_fn(module, batch=int(payload["batch"]), steps=int(payload["steps"]))
    key = jax.random.PRNGKey(int(payload["seed"]))
    transitions, episodes, inside = [], [], []
    for r in range(int(payload["repeats"])):
        start = time.process_time()
        live, ended, _ = twin.guard(lambda k: jax.block_until_ready(play(k)), jax.random.fold_in(key, r))
        inside.append(time.process_time() - start)
        transitions.append(int(live))
        episodes.append(int(ended))
    return {"transitions": transitions, "episodes": episodes, "cpu_s": inside}  # type: ignore[dict-item]
