"""The JAX twin contract: what an LLM-written ``jax_twin.py`` defines (one definition for the prompt, the gate and
the checks), and the trusted helpers cwm builds on it (chance sampled with an explicit key, auto-stepping through
chance, batched random playouts).

A JAX twin is a second form of a checked world model: the same game as fixed-shape arrays, so thousands of
states step at once in one jitted, vmapped scan. Its ids are the game's action codec's
(``cwm.games.action_codec``): player actions ``0..NUM_DISTINCT_ACTIONS-1``, chance outcomes
``0..MAX_CHANCE_OUTCOMES-1``. JAX is an optional dependency: the helpers import it when called, and only a
sandbox worker calls them on an LLM-written twin.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence
from typing import Any

from cwm.contract import ContractFunction
from cwm.types import CHANCE, TERMINAL

# The modules a twin may import (the sandbox gate enforces it; the prompt shows it).
JAX_TWIN_IMPORTS: tuple[str, ...] = ("jax.numpy", "jax.lax", "jax.random", "math")

# The module name a twin runs under in a worker (tracebacks read the same wherever it ran).
JAX_TWIN_MODULE = "cwm_jax_twin"


@dataclasses.dataclass(frozen=True)
class ContractConstant:
    """One module-level constant of the contract: its name, Python type and meaning."""

    name: str
    kind: type
    doc: str


JAX_TWIN_CONSTANTS: tuple[ContractConstant, ...] = (
    ContractConstant("NUM_PLAYERS", int, "The number of players."),
    ContractConstant("NUM_DISTINCT_ACTIONS", int,
                     "The number of player action ids (the codec's num_distinct_actions)."),
    ContractConstant("MAX_CHANCE_OUTCOMES", int,
                     "The number of chance outcome ids (the codec's max_chance_outcomes; 0 when there is no chance)."),
    ContractConstant("OBSERVATION_SHAPE", tuple, "The shape of observation_tensor's result (a tuple of ints)."),
)

JAX_TWIN_API: tuple[ContractFunction, ...] = (
    ContractFunction("init", "init() -> State",
                     "The state before any move (chance included). State is a pytree (dict or tuple) of "
                     "fixed-shape jax arrays."),
    ContractFunction("current_player", "current_player(state: State) -> int32",
                     f"Who acts: a player id, {CHANCE} at a chance node, {TERMINAL} once the game is over."),
    ContractFunction("legal_mask", "legal_mask(state: State) -> bool[NUM_DISTINCT_ACTIONS]",
                     "True at the ids of the current player's legal actions; all False at chance and terminal states."),
    ContractFunction("chance_probs", "chance_probs(state: State) -> float32[MAX_CHANCE_OUTCOMES]",
                     "The probability of each chance outcome id at a chance node (zeros where impossible); "
                     "all zeros elsewhere. Omitted when MAX_CHANCE_OUTCOMES is 0."),
    ContractFunction("step", "step(state: State, action: int32) -> State",
                     "The state after `action`: a player action id, or at a chance node the chance outcome "
                     "id. Deterministic."),
    ContractFunction("rewards", "rewards(state: State) -> float32[NUM_PLAYERS]",
                     "The rewards of the move that led to `state` (all zeros for the initial state)."),
    ContractFunction("observation_tensor", "observation_tensor(state: State, player: int32) -> "
                     "float32[OBSERVATION_SHAPE]", "What `player` sees at `state`, as a fixed-shape tensor."),
    ContractFunction("decode", "decode(state: State) -> dict",
                     "The Python world model's state dict for `state` (plain Python values, read from the "
                     "arrays; called outside jit on one unbatched state)."),
)

# Every function must be jittable and vmappable (all but ``decode``): no Python branching on array values,
# no data-dependent shapes.
JITTED: frozenset[str] = frozenset(f.name for f in JAX_TWIN_API) - {"decode"}


def required_functions(max_chance_outcomes: int) -> tuple[ContractFunction, ...]:
    """The functions a twin of a game with ``max_chance_outcomes`` chance ids must define."""
    if max_chance_outcomes:
        return JAX_TWIN_API
    return tuple(f for f in JAX_TWIN_API if f.name != "chance_probs")


def constant_problems(namespace: dict[str, object], *, num_players: int, num_distinct_actions: int,
                      max_chance_outcomes: int) -> list[str]:
    """What is wrong with a twin's constants against the game's (empty when they agree). Types are checked
    exactly (``type(x) is int``), so a subclass cannot lie through ``__eq__`` or ``__str__``."""
    expected = {"NUM_PLAYERS": num_players, "NUM_DISTINCT_ACTIONS": num_distinct_actions,
                "MAX_CHANCE_OUTCOMES": max_chance_outcomes}
    problems = []
    for name, want in expected.items():
        value = namespace.get(name)
        if type(value) is not int:
            problems.append(f"{name} must be an int (got {type(value).__name__})")
        elif value != want:
            problems.append(f"{name} is {value}, the game's codec has {want}")
    shape = namespace.get("OBSERVATION_SHAPE")
    if type(shape) is not tuple or not shape or not all(type(d) is int and d > 0 for d in shape):
        problems.append("OBSERVATION_SHAPE must be a non-empty tuple of positive ints")
    return problems


def constants_block() -> str:
    """The constants as Python stubs, for prompts and documentation."""
    return "\n".join(f"{c.name}: {c.kind.__name__}  # {c.doc}" for c in JAX_TWIN_CONSTANTS)


# ---------------------------------------------------------------------------------------------------
# Trusted helpers (cwm's own code, run inside the worker on a loaded twin). ``twin`` is the twin module.


def sample_chance(twin: Any, state: Any, key: Any) -> Any:
    """A chance outcome id drawn from ``twin.chance_probs(state)`` with ``key`` (``jax.random.categorical``
    on the log probabilities; impossible outcomes have log 0 = -inf)."""
    import jax
    import jax.numpy as jnp

    probs = twin.chance_probs(state)
    return jax.random.categorical(key, jnp.log(probs)).astype(jnp.int32)


def random_action(twin: Any, state: Any, key: Any) -> Any:
    """A uniformly random legal action id at ``state`` (0 where none is legal)."""
    import jax
    import jax.numpy as jnp

    mask = twin.legal_mask(state)
    logits = jnp.where(mask, 0.0, -jnp.inf)
    return jnp.where(mask.any(), jax.random.categorical(key, logits), 0).astype(jnp.int32)


def resolve_chance(twin: Any, state: Any, key: Any, *, max_chance_steps: int = 256) -> tuple[Any, Any]:
    """Steps through chance nodes with outcomes drawn from ``key`` (a ``lax.while_loop``, at most
    ``max_chance_steps``); returns the first non-chance state and the rewards summed over those steps."""
    import jax
    import jax.numpy as jnp
    from jax import lax

    zero = jnp.zeros((twin.NUM_PLAYERS,), jnp.float32)
    if not twin.MAX_CHANCE_OUTCOMES:
        return state, zero

    def more(carry: tuple[Any, Any, Any, Any]) -> Any:
        s, _, _, n = carry
        return (twin.current_player(s) == CHANCE) & (n < max_chance_steps)

    def one(carry: tuple[Any, Any, Any, Any]) -> tuple[Any, Any, Any, Any]:
        s, k, total, n = carry
        k, sub = jax.random.split(k)
        s = twin.step(s, sample_chance(twin, s, sub))
        return s, k, total + twin.rewards(s), n + 1

    state, _, total, _ = lax.while_loop(more, one, (state, key, zero, jnp.int32(0)))
    return state, total


def reset(twin: Any, key: Any) -> tuple[Any, Any]:
    """``twin.init()`` with any opening chance resolved from ``key``; and the rewards of those chance steps."""
    return resolve_chance(twin, twin.init(), key)


def auto_step(twin: Any, state: Any, action: Any, key: Any) -> tuple[Any, Any]:
    """``twin.step(state, action)`` followed by the chance nodes after it, resolved from ``key``; returns the
    next decision (or terminal) state and the rewards of the action plus those chance steps."""
    state = twin.step(state, action)
    after, total = resolve_chance(twin, state, key)
    return after, twin.rewards(state) + total


@dataclasses.dataclass(frozen=True)
class PlayoutTotals:
    """What a batch of random playouts did: transitions stepped (player actions), episodes finished, and the
    rewards summed per player over every finished and unfinished episode."""

    transitions: int
    episodes: int
    reward_sums: Sequence[float]


def random_playouts_fn(twin: Any, *, batch: int, steps: int) -> Any:
    """A jitted ``key -> (transitions, episodes, reward_sums)``: ``batch`` games played at once with uniformly
    random legal actions for ``steps`` steps (``vmap`` over the batch inside one ``lax.scan``); a finished game
    restarts from ``reset``. Consumes ``key`` only."""
    import jax
    import jax.numpy as jnp
    from jax import lax

    def one_step(carry: tuple[Any, Any], _: Any) -> tuple[tuple[Any, Any], tuple[Any, Any, Any]]:
        state, key = carry
        key, k_act, k_chance, k_reset = jax.random.split(key, 4)
        done = twin.current_player(state) == TERMINAL
        nxt, rew = auto_step(twin, state, random_action(twin, state, k_act), k_chance)
        fresh, _ = reset(twin, k_reset)
        ended = twin.current_player(nxt) == TERMINAL
        state = jax.tree_util.tree_map(lambda a, b: jnp.where(done, a, b), fresh, nxt)
        live = (~done).astype(jnp.int32)
        return (state, key), (live, (ended & ~done).astype(jnp.int32), jnp.where(done, 0.0, rew))

    def play(key: Any) -> tuple[Any, Any, Any]:
        keys = jax.random.split(key, batch + 1)
        states, _ = jax.vmap(lambda k: reset(twin, k))(keys[1:])
        step_keys = jax.random.split(keys[0], batch)
        scan = jax.vmap(lambda s, k: lax.scan(one_step, (s, k), None, length=steps)[1])
        live, ended, rew = scan(states, step_keys)
        return live.sum(), ended.sum(), rew.sum(axis=(0, 1))

    return jax.jit(play)


def random_playouts(twin: Any, key: Any, *, batch: int, steps: int) -> PlayoutTotals:
    """Runs ``random_playouts_fn`` once and returns its totals as Python numbers."""
    live, ended, rew = random_playouts_fn(twin, batch=batch, steps=steps)(key)
    return PlayoutTotals(int(live), int(ended), tuple(float(r) for r in rew))
