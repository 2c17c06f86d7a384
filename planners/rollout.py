"""Random rollouts and the small sampling helpers shared by the tree searches.

Rollouts are the hot loop of MCTS, so they are written per state kind: OpenSpiel states are cloned once
and moved in place; CWM model states (``cwm.model.ModelState``) are walked on their raw JSON states by
action string (no copies, no wrapper objects, no id round trips); anything else is walked with ``child``.
"""

from __future__ import annotations

import functools
import random
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np
import pyspiel

from cwm.model import ModelState
from cwm.model import direct_guard as _DIRECT
from cwm.types import CHANCE, TERMINAL, ModelContractError


def rng_from(seed: int | np.random.Generator | random.Random | None) -> random.Random:
    """A ``random.Random`` for the hot loops, from an int seed, a numpy Generator (one draw) or ``None``."""
    if isinstance(seed, random.Random):
        return seed
    if isinstance(seed, np.random.Generator):
        return random.Random(int(seed.integers(2**63)))
    return random.Random(seed)


def sample_outcome(outcomes: Sequence[tuple[Any, float]], rng: random.Random) -> Any:
    """Draws one outcome of ``[(outcome, probability), ...]`` by its probability."""
    r = rng.random()
    acc = 0.0
    for a, p in outcomes:
        acc += p
        if r < acc:
            return a
    return outcomes[-1][0]  # rounding: probabilities may sum to slightly under 1


def rollout_returns(
    state: Any, rollouts: int, rng: random.Random, max_steps: int | None = None
) -> list[float]:
    """Mean returns of ``rollouts`` uniformly random playouts from ``state`` (left unchanged).

    Chance nodes are sampled by their distribution. A playout cut by ``max_steps`` scores the returns
    accumulated so far.
    """
    if isinstance(state, pyspiel.State):
        play = _play_openspiel
    elif isinstance(state, ModelState):
        play = _play_model
    else:
        play = _play_generic
    limit = max_steps if max_steps is not None else 1 << 62
    total = list(play(state, rng, limit))
    for _ in range(rollouts - 1):
        for i, r in enumerate(play(state, rng, limit)):
            total[i] += r
    if rollouts > 1:
        total = [t / rollouts for t in total]
    return total


def _play_openspiel(state: pyspiel.State, rng: random.Random, limit: int) -> list[float]:
    s = state.clone()
    steps = 0
    player = s.current_player()
    while player != TERMINAL and steps < limit:
        if player == CHANCE:
            s.apply_action(sample_outcome(s.chance_outcomes(), rng))
        else:
            legal = s.legal_actions()
            s.apply_action(legal[int(rng.random() * len(legal))])
        steps += 1
        player = s.current_player()
    return s.returns()


def _play_model(state: ModelState, rng: random.Random, limit: int) -> list[float]:
    """A playout on the model's raw JSON states: no wrapper objects, no id round trips, no copies.

    The model's functions are called directly (through its guard when it has one, e.g. a per-call time
    budget); any exception they raise becomes a ``ModelContractError`` that names the rollout.
    """
    model = state.model
    fns = model.functions
    calls: list[Callable[..., Any]] = [fns.get_current_player, fns.get_legal_actions, fns.get_chance_outcomes,
                                       fns.apply_action, fns.get_rewards]
    if model.guard is not _DIRECT:  # a guard (per-call time budget) wraps every call, as in WorldModel.call
        calls = [functools.partial(model.guard, f) for f in calls]
    current, legal_of, chance_of, apply, rewards_of = calls
    returns = state.returns()
    n = len(returns)
    raw = state.raw
    player = state.current_player()
    steps = 0
    first: list[str] | None = state.legal_action_strings() if player >= 0 else None  # cached on the state
    try:
        while player != TERMINAL and steps < limit:
            if player == CHANCE:
                action = sample_outcome(chance_of(raw), rng)
            else:
                legal = first if first is not None else legal_of(raw)
                first = None
                action = legal[int(rng.random() * len(legal))]
            raw = apply(raw, action)
            rewards = rewards_of(raw)
            if len(rewards) != n:
                raise ModelContractError(f"get_rewards returned {rewards!r:.100}, expected {n} numbers")
            returns = [a + b for a, b in zip(returns, rewards)]
            steps += 1
            player = current(raw)
    except ModelContractError as e:
        raise ModelContractError(f"{model.name}: in a rollout: {e}") from e
    except Exception as e:  # the model's own bug, named as a contract breach like WorldModel.call does
        raise ModelContractError(f"{model.name}: in a rollout, a model function raised "
                                 f"{type(e).__name__}: {e}") from e
    return returns


def _play_generic(state: Any, rng: random.Random, limit: int) -> list[float]:
    s = state
    steps = 0
    while not s.is_terminal() and steps < limit:
        if s.is_chance_node():
            s = s.child(sample_outcome(s.chance_outcomes(), rng))
        else:
            legal = s.legal_actions()
            s = s.child(legal[int(rng.random() * len(legal))])
        steps += 1
    return s.returns()
