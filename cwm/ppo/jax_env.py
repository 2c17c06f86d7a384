"""PPO's games on a JAX twin: many games stepped together as arrays, the learner against a random opponent.

A JAX twin (the contract: ``cwm.jax_contract``) is a module of pure, fixed-shape functions. ``TwinEnv`` plays it as
``planners.env.VectorEnv`` plays a Python model, but as jittable functions of one game that are vmapped
over the batch: in each game the learner holds one seat (seats rotate game by game over the players, the
first game of env ``i`` in seat ``i mod NUM_PLAYERS``), chance outcomes are drawn by ``chance_probs`` with
explicit keys, the opponents play uniformly at random among their legal actions until the learner's turn,
and a finished game restarts at once (auto-reset). For self-play the opponents' policy is an argument
(the learner's network, ``cwm.ppo.jax_train``). The learner's reward of a step is the sum of its
``rewards`` entries over every move from its decision to its next one (the return, in games that pay
only at the end).

The twin is untrusted: ``twin_shape`` checks its constants and every function's output shapes and dtypes
by tracing alone (``jax.eval_shape``), and every step computes ``breach`` flags (a non-finite reward or
observation, a player to move with no legal action, a chance distribution that is not one, a player id out
of range, a game that never returns to the learner or ends before its first decision); the trainer
refuses the twin, in one line, as soon as a batch raised one (``breach_message``).
"""

from __future__ import annotations

import dataclasses
import math
import types
from collections.abc import Callable
from typing import Any

import jax
import jax.numpy as jnp

from cwm.jax_contract import required_functions
from cwm.types import CHANCE, TERMINAL, CwmError

MAX_AUTO_MOVES = 1024  # opponent and chance moves between two learner decisions before the twin is refused
# Breach flags (bits), each with the sentence that names it.
BREACHES = {
    1: "a reward that is not finite",
    2: "an observation that is not finite",
    4: "a player to move with no legal action",
    8: "chance probabilities that are negative, not finite or do not sum to 1",
    16: "a chance node in a twin with MAX_CHANCE_OUTCOMES = 0",
    32: "a current player that is not a seat, -1 (chance) or -4 (terminal)",
    64: f"more than {MAX_AUTO_MOVES} moves of the others without the learner's turn",
    128: "a new game that ended before the learner's first decision",
    256: "a learner action that its own legal mask refused",
}


Opponent = Callable[[jax.Array, jax.Array, jax.Array], jax.Array]  # (observation, legal mask, key) -> action


class TwinContractError(CwmError, ValueError):
    """A JAX twin that breaks its contract (a constant, a function's shape or dtype, or a breach in play)."""


@dataclasses.dataclass(frozen=True)
class TwinShape:
    """A twin's constants, checked."""

    num_players: int
    num_actions: int
    max_chance: int
    obs_shape: tuple[int, ...]

    @property
    def obs_size(self) -> int:
        return math.prod(self.obs_shape)


def twin_shape(twin: types.ModuleType, *, num_actions: int | None = None) -> TwinShape:
    """The twin's constants, after checking them and every contract function's output by tracing.

    Args:
      twin: the twin module.
      num_actions: the game's codec's action count, when known: the twin's must equal it.

    Raises:
      TwinContractError: a constant or function missing or of the wrong type, value, shape or dtype (one line).
    """
    found = vars(twin)
    shape = TwinShape(_constant(found, "NUM_PLAYERS", 1), _constant(found, "NUM_DISTINCT_ACTIONS", 1),
                      _constant(found, "MAX_CHANCE_OUTCOMES", 0), _obs_shape(found.get("OBSERVATION_SHAPE")))
    for function in required_functions(shape.max_chance):
        if function.name != "decode" and not callable(found.get(function.name)):
            raise TwinContractError(f"JAX twin: no function {function.name}()")
    if num_actions is not None and shape.num_actions != num_actions:
        raise TwinContractError(f"JAX twin: NUM_DISTINCT_ACTIONS is {shape.num_actions}, the game's codec has "
                                f"{num_actions}")
    state = _traced("init", twin.init)
    expect = {"current_player": ((), "i"), "legal_mask": ((shape.num_actions,), "b"),
              "rewards": ((shape.num_players,), "f")} | ({"chance_probs": ((shape.max_chance,), "f")}
                                                         if shape.max_chance else {})
    for name, (dims, kind) in expect.items():
        _check_out(name, _traced(name, found[name], state), dims, kind)
    _check_out("observation_tensor", _traced("observation_tensor", twin.observation_tensor, state, jnp.int32(0)),
               shape.obs_shape, "f")
    stepped = _traced("step", twin.step, state, jnp.int32(0))
    structure: Any = jax.tree_util.tree_structure(state)
    if jax.tree_util.tree_structure(stepped) != structure or any(
            (a.shape, a.dtype) != (b.shape, b.dtype)
            for a, b in zip(jax.tree_util.tree_leaves(stepped), jax.tree_util.tree_leaves(state), strict=True)):
        raise TwinContractError("JAX twin: step() returns a state of another structure, shape or dtype than init()'s")
    return shape


def _constant(found: dict[str, Any], name: str, least: int) -> int:
    value = found.get(name)
    if type(value) is not int or value < least:
        raise TwinContractError(f"JAX twin: {name} must be an int >= {least}, got {type(value).__name__} {value!r:.60}")
    return value


def _obs_shape(value: Any) -> tuple[int, ...]:
    if type(value) is not tuple or not value or not all(type(d) is int and d >= 1 for d in value):
        raise TwinContractError(f"JAX twin: OBSERVATION_SHAPE must be a non-empty tuple of positive ints, got "
                                f"{type(value).__name__} {value!r:.60}")
    return value


def _traced(name: str, fn: Any, *args: Any) -> Any:
    try:
        return jax.eval_shape(fn, *args)
    except Exception as e:  # the twin's code: whatever it raised becomes the refusal
        text = " ".join(str(e).split())[:200]
        raise TwinContractError(f"JAX twin: {name}() does not trace ({type(e).__name__}: {text})") from None


def _check_out(name: str, out: Any, dims: tuple[int, ...], kind: str) -> None:
    kinds = {"i": "an integer", "b": "a bool", "f": "a float"}
    if not hasattr(out, "shape") or tuple(out.shape) != dims or out.dtype.kind != kind:
        got = f"{out.dtype}{list(out.shape)}" if hasattr(out, "shape") else type(out).__name__
        raise TwinContractError(f"JAX twin: {name}() must return {kinds[kind]} array of shape {list(dims)}, got {got}")


def breach_message(flags: int) -> str:
    """The one-line refusal for a batch's OR of breach flags (0: none)."""
    named = [text for bit, text in BREACHES.items() if flags & bit]
    return "JAX twin broke its contract in play: " + "; ".join(named)


class TwinEnv:
    """Jittable, vmappable functions of one game of a twin (see the module docstring); ``reset``/``step``
    map them over a batch. Env state: ``{"state": twin state, "seat": int32}``.

    Args:
      twin: the twin module (``twin_shape`` has checked it).
      shape: its constants.
      opponent: the others' policy, ``(observation [obs_size], legal mask, key) -> action`` (self-play: the
        learner's network); ``None``: uniformly random among the legal actions.
    """

    def __init__(self, twin: types.ModuleType, shape: TwinShape, *, opponent: Opponent | None = None):
        self.twin, self.shape, self.opponent = twin, shape, opponent

    def reset(self, key: jax.Array, num_envs: int) -> tuple[dict[str, Any], dict[str, jax.Array]]:
        """Fresh games (env ``i`` in seat ``i mod NUM_PLAYERS``): ``(env, view)``; the view's ``flags``
        are the breaches met."""
        seats = jnp.arange(num_envs, dtype=jnp.int32) % self.shape.num_players
        return jax.vmap(self._fresh_view)(jax.random.split(key, num_envs), seats)

    def step(self, env: dict[str, Any], actions: jax.Array, key: jax.Array) -> tuple[dict[str, Any], dict[str, jax.Array]]:
        """The learner's ``actions``, then the others' moves to its next decision (a finished game restarts
        in the next seat): ``(env, view)`` with ``reward`` and ``done`` of the game the action was in."""
        return jax.vmap(self._step_one)(env, actions, jax.random.split(key, actions.shape[0]))

    def _fresh_view(self, key: jax.Array, seat: jax.Array) -> tuple[dict[str, Any], dict[str, jax.Array]]:
        state, _, flags = self._fresh(seat, key)
        return self._view(state, seat, jnp.float32(0.0), jnp.bool_(False), flags)

    def _fresh(self, seat: jax.Array, key: jax.Array) -> tuple[Any, jax.Array, jax.Array]:
        state, reward, flags = self._advance(self.twin.init(), seat, key)
        flags |= jnp.where(self.twin.current_player(state) == TERMINAL, 128, 0)
        return state, reward, flags

    def _step_one(self, env: dict[str, Any], action: jax.Array, key: jax.Array) -> tuple[dict[str, Any], dict[str, jax.Array]]:
        twin, state, seat = self.twin, env["state"], env["seat"]
        k_play, k_fresh = jax.random.split(key)
        flags = jnp.where(twin.legal_mask(state)[action], 0, 256)
        state = twin.step(state, action)
        paid = twin.rewards(state)
        flags |= _reward_flags(paid)
        state, later, more = self._advance(state, seat, k_play)
        reward, flags = paid[seat] + later, flags | more
        done = twin.current_player(state) == TERMINAL
        next_seat = jnp.where(done, (seat + 1) % self.shape.num_players, seat).astype(jnp.int32)
        fresh, _, fresh_flags = self._fresh(next_seat, k_fresh)
        state = jax.tree_util.tree_map(lambda a, b: jnp.where(done, a, b), fresh, state)
        return self._view(state, next_seat, reward, done, flags | jnp.where(done, fresh_flags, 0))

    def _advance(self, state: Any, seat: jax.Array, key: jax.Array) -> tuple[Any, jax.Array, jax.Array]:
        """Chance and the random opponents move until ``seat``'s turn or the end: ``(state, seat's rewards
        summed, flags)``."""
        twin, shape = self.twin, self.shape

        def waiting(carry: tuple[Any, ...]) -> jax.Array:
            state, _, _, moves, flags = carry
            player = twin.current_player(state)
            return (player != seat) & (player != TERMINAL) & (moves < MAX_AUTO_MOVES) & (flags & 32 == 0)

        def move(carry: tuple[Any, ...]) -> tuple[Any, ...]:
            state, reward, key, moves, flags = carry
            key, k_chance, k_opp = jax.random.split(key, 3)
            player = twin.current_player(state)
            mask = twin.legal_mask(state)
            flags |= jnp.where((player >= shape.num_players) | ((player < CHANCE) & (player != TERMINAL)), 32, 0)
            if self.opponent is None:
                opponent = jax.random.categorical(k_opp, jnp.where(mask, 0.0, -jnp.inf))
            else:
                seen = twin.observation_tensor(state, jnp.maximum(player, 0)).reshape(-1).astype(jnp.float32)
                opponent = self.opponent(seen, mask, k_opp)
            flags |= jnp.where((player >= 0) & ~mask.any(), 4, 0)
            action, chance_flags = self._chance(state, k_chance)
            action = jnp.where(player == CHANCE, action, opponent)
            flags |= jnp.where(player == CHANCE, chance_flags, 0)
            state = twin.step(state, action)
            paid = twin.rewards(state)
            return state, reward + paid[seat], key, moves + 1, flags | _reward_flags(paid)

        carry = (state, jnp.float32(0.0), key, jnp.int32(0), jnp.int32(0))
        state, reward, _, moves, flags = jax.lax.while_loop(waiting, move, carry)
        player = twin.current_player(state)
        flags |= jnp.where((moves >= MAX_AUTO_MOVES) & (player != seat) & (player != TERMINAL), 64, 0)
        return state, reward, flags

    def _chance(self, state: Any, key: jax.Array) -> tuple[jax.Array, jax.Array]:
        """An outcome id drawn by ``chance_probs`` (explicit key), and the flags of a bad distribution."""
        if self.shape.max_chance == 0:
            return jnp.int32(0), jnp.int32(16)
        probs = self.twin.chance_probs(state)
        bad = ~jnp.all(jnp.isfinite(probs)) | jnp.any(probs < 0) | (jnp.abs(probs.sum() - 1.0) > 1e-4)
        outcome = jax.random.categorical(key, jnp.where(probs > 0, jnp.log(jnp.where(probs > 0, probs, 1.0)), -jnp.inf))
        return outcome.astype(jnp.int32), jnp.where(bad, 8, 0).astype(jnp.int32)

    def _view(self, state: Any, seat: jax.Array, reward: jax.Array, done: jax.Array,
              flags: jax.Array) -> tuple[dict[str, Any], dict[str, jax.Array]]:
        obs = self.twin.observation_tensor(state, seat).reshape(-1).astype(jnp.float32)
        mask = self.twin.legal_mask(state)
        flags |= jnp.where(jnp.all(jnp.isfinite(obs)), 0, 2) | jnp.where(mask.any(), 0, 4)
        view = {"obs": obs, "mask": mask, "reward": reward.astype(jnp.float32), "done": done, "seat": seat,
                "flags": flags.astype(jnp.int32)}
        return {"state": state, "seat": seat}, view


def _reward_flags(paid: jax.Array) -> jax.Array:
    return jnp.where(jnp.all(jnp.isfinite(paid)), 0, 1).astype(jnp.int32)
