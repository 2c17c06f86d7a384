"""Random rollouts and the small sampling helpers shared by the tree searches (``planners.evaluators`` turns
rollouts into a leaf evaluator).

Rollouts are the hot loop of MCTS, so they are written per state kind: OpenSpiel states are cloned once
and moved in place; CWM model states (``cwm.model.ModelState``) are walked on their raw JSON states by
action string (no copies, no wrapper objects, no id round trips), or, for a twin planned with its own
checked playout loop (``WorldModel(..., playout=True)``, ``cwm.contract.PLAYOUT``), played by one call of it;
anything else is walked with ``child``.
"""

from __future__ import annotations

import random
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np
import pyspiel

from cwm import value_rules
from cwm.model import MODEL_ERRORS, Beat, ModelState, describe_error, no_beat
from cwm.types import CHANCE, TERMINAL, ModelContractError
from planners.settings import DEFAULT_MAX_ROLLOUT_STEPS


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
    state: Any, rollouts: int, rng: random.Random, max_steps: int = DEFAULT_MAX_ROLLOUT_STEPS, *,
    value_fn: Callable[[Any, int], float] | None = None,
) -> list[float]:
    """Mean returns of ``rollouts`` uniformly random playouts from ``state`` (left unchanged).

    Chance nodes are sampled by their distribution. A playout stops after ``max_steps`` moves (the
    rollout cutoff, ``SearchConfig.max_rollout_steps``: a long game's leaf then costs ``max_steps`` moves,
    not a whole game) and is scored by ``value_fn`` at the state it reached, one call per player, when
    there is one; else by the game's neutral value, the returns accumulated so far: nothing more is
    assumed to happen, which in a zero-sum game that pays only at the end is 0 for every player, a draw.
    """
    if type(state) is ModelState:  # the common case first, by exact type (no isinstance through pybind11)
        play = _play_model
    elif isinstance(state, pyspiel.State):
        play = _play_openspiel
    elif isinstance(state, ModelState):
        play = _play_model
    else:
        play = _play_generic
    returns, cut = play(state, rng, max_steps)
    total = list(returns) if cut is None or value_fn is None else _scored(returns, cut, value_fn)
    for _ in range(rollouts - 1):
        for i, r in enumerate(_scored(*play(state, rng, max_steps), value_fn)):
            total[i] += r
    if rollouts > 1:
        total = [t / rollouts for t in total]
    return total


def playout(state: Any, rng: random.Random, max_steps: int = DEFAULT_MAX_ROLLOUT_STEPS) -> tuple[list[float], Any]:
    """One uniformly random playout from ``state`` (left unchanged), as ``rollout_returns`` plays each: its returns
    and the state where ``max_steps`` cut it off, or ``None`` when the game ended.

    Randomness: exactly one ``rng.random()`` per move; a player's move is ``legal[int(u * len(legal))]`` of the
    legal actions in the state's order, a chance move the first outcome whose running sum of probabilities
    exceeds ``u`` (the last when none does).
    """
    if isinstance(state, pyspiel.State):
        return _play_openspiel(state, rng, max_steps)
    if isinstance(state, ModelState):
        return _play_model(state, rng, max_steps)
    return _play_generic(state, rng, max_steps)


def model_rollout(state: ModelState, rng: random.Random, max_steps: int = DEFAULT_MAX_ROLLOUT_STEPS) -> list[float]:
    """``rollout_returns(state, 1, rng, max_steps)`` for a model state (exact type) and no value function: the
    same playout, draws and returns, without the dispatch (the evaluator's path at every leaf of a search)."""
    return list(_play_model(state, rng, max_steps)[0])


def _scored(returns: list[float], cut: Any, value_fn: Callable[[Any, int], float] | None) -> list[float]:
    """A playout's score: its returns, or where it was cut off (``cut``, a state) the value function's."""
    if cut is None or value_fn is None:
        return list(returns)
    return [float(value_fn(cut, p)) for p in range(len(returns))]


# Each playout returns (returns, the state where it was cut off at the step limit, or None if it ended).
def _play_openspiel(state: pyspiel.State, rng: random.Random, limit: int) -> tuple[list[float], Any]:
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
    return s.returns(), s if player != TERMINAL else None


def _play_model(state: ModelState, rng: random.Random, limit: int) -> tuple[list[float], Any]:
    """A playout on the model's raw JSON states: no wrapper objects, no id round trips, no copies.

    The playout is one stretch of model calls (``WorldModel.stretch``): under a per-call time budget each
    call still has its full budget, timed from a beat instead of a guard per call. Any exception a model
    function raises becomes a ``ModelContractError`` that names the rollout.
    """
    model = state.model
    body = _fused_playout if model.fused else _model_playout
    try:
        if model.timed:
            returns, raw = model.stretch(lambda beat, fns: body(state, fns, beat, rng, limit))
        else:  # what stretch would do, without its two calls
            returns, raw = body(state, model.bound, no_beat, rng, limit)
        return returns, None if raw is None else ModelState(model, raw, returns=tuple(returns))
    except ModelContractError as e:
        raise ModelContractError(f"{model.name}: in a rollout: {e}") from e
    except value_rules.ValueBreach as e:  # a value that breaks the contract's rules
        raise ModelContractError(f"{model.name}: in a rollout: {e}") from None
    except value_rules.StateMutationError as e:
        raise ModelContractError(f"{model.name}: in a rollout, a model function tried to modify its input "
                                 f"state ({e})") from None
    except MemoryError:  # the memory limit (a planning worker's memory verdict), as WorldModel.call lets it pass
        raise
    except MODEL_ERRORS as e:  # the model's own bug, named as a contract breach like WorldModel.call does
        raise ModelContractError(f"{model.name}: in a rollout, a model function raised {describe_error(e)}") from e


def _model_playout(state: ModelState, fns: dict[str, Callable[..., Any]], beat: Beat, rng: random.Random,
                   limit: int) -> tuple[list[float], Any]:
    """The playout's returns and, when the step limit cut it off, the raw state it reached. A rewards list of
    the objects checked last (a model's constant ``[0.0, 0.0]``) costs two identity tests, any other the rule."""
    current, legal_of, chance_of = fns["get_current_player"], fns["get_legal_actions"], fns["get_chance_outcomes"]
    apply, rewards_of = fns["apply_action"], fns["get_rewards"]
    timed = beat is not no_beat  # a branch per call is cheaper than calling a beat that does nothing
    codec = state.model.codec  # every action taken must be one of the game's, as in the tree (one lookup)
    known, check = (codec.knows(), codec.to_id) if codec is not None else ((), None)
    returns = state.returns()
    n = len(returns)
    players = frozenset((CHANCE, TERMINAL, *range(n)))  # what get_current_player may answer (exact ints)
    # The first and last items of the last rewards list that passed the rule (one or two players), and whether
    # it pays: a list of the very same objects (exact numbers are immutable) is not checked again.
    first, last, paid = _NEVER, _NEVER, False
    raw, player, steps, random = state.raw, state.current_player(), 0, rng.random
    legal: list[str] | None = state.legal_action_strings() if player >= 0 else None  # cached on the state
    while player != TERMINAL and steps < limit:
        if player == CHANCE:
            if timed:
                beat("get_chance_outcomes")
            action = sample_outcome(value_rules.chance_outcomes(chance_of(raw)) or _no_outcomes(), rng)
        else:
            if legal is None:
                if timed:
                    beat("get_legal_actions")
                legal = legal_of(raw)
                if type(legal) is not list:
                    legal = value_rules.action_strings(legal)
                if not legal:
                    raise ModelContractError("no legal actions at a non-terminal state")
            action = legal[int(random() * len(legal))]  # type: ignore[index]
            legal = None
            if type(action) is not str:  # a str subclass becomes a plain str, its methods never called
                action = value_rules.action_strings([action])[0]
        if check is not None and (player, action) not in known:
            check(player, action)
        if timed:
            beat("apply_action")
        raw = apply(raw, action)
        if timed:
            beat("get_rewards")
        rewards = rewards_of(raw)
        if type(rewards) is not list or len(rewards) != n or rewards[0] is not first or rewards[-1] is not last:
            if type(rewards) is list and len(rewards) == n and value_rules.finite_numbers(rewards):
                if n <= 2:  # exact numbers: remembered by identity
                    first, last = rewards[0], rewards[-1]
            else:  # anything but exact finite numbers: the contract's rule (its floats are not remembered)
                rewards = value_rules.rewards(rewards, n)
                first = last = _NEVER
            paid = any(rewards)
        if paid:
            returns = [a + b for a, b in zip(returns, rewards)]
        steps += 1
        if timed:
            beat("get_current_player")
        player = current(raw)
        if type(player) is not int or player not in players:
            player = value_rules.player(player, n)
    return returns, raw if player != TERMINAL else None


def _fused_playout(state: ModelState, fns: dict[str, Callable[..., Any]], beat: Beat, rng: random.Random,
                   limit: int) -> tuple[list[float], Any]:
    """The playout as one call of the model's own loop (``cwm.contract.PLAYOUT``: a twin whose ``playout`` the
    equivalence check compared with ``_model_playout`` on the checked model), its answer held to the contract:
    a pair of the returns, exactly ``n`` finite numbers (exact ints or floats), and ``None`` or the state
    reached (made read-only, as the tree's states are)."""
    returns = state.returns()
    n = len(returns)
    if beat is not no_beat:
        beat("playout")
    got = fns["playout"](state.raw, returns, rng.random, limit)
    if type(got) is not tuple and type(got) is not list or len(got) != 2:
        raise ModelContractError(f"playout must return a pair (returns, state or None), got {value_rules.describe(got)}")
    out, end = got
    if type(out) is not list or len(out) != n:
        raise _bad_playout_returns(out, n)
    for x in out:
        if type(x) is not float or x - x != 0.0:  # not all exact finite floats (inf - inf, nan - nan are nan)
            if not value_rules.finite_numbers(out):
                raise _bad_playout_returns(out, n)
            out = [float(x) for x in out]  # exact ints: as floats, as stepping adds them
            break
    return out, None if end is None else value_rules.state(end)


def _bad_playout_returns(out: Any, n: int) -> ModelContractError:
    return ModelContractError(f"playout must return a list of {n} finite numbers as its returns, got "
                              f"{value_rules.describe(out)}")


_NEVER = object()  # no model returns this object: an identity test against it always fails


def _no_outcomes() -> list[tuple[str, float]]:
    raise ModelContractError("get_chance_outcomes returned no outcomes at a chance node")


def _play_generic(state: Any, rng: random.Random, limit: int) -> tuple[list[float], Any]:
    s = state
    steps = 0
    while not s.is_terminal() and steps < limit:
        if s.is_chance_node():
            s = s.child(sample_outcome(s.chance_outcomes(), rng))
        else:
            legal = s.legal_actions()
            s = s.child(legal[int(rng.random() * len(legal))])
        steps += 1
    return s.returns(), s if not s.is_terminal() else None
