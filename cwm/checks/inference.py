"""Inference checks: does ``resample_history`` give histories that the world model turns into exactly what the
player saw and did?

At every state where a player acted (and, with ``terminal``, at the end of the game), the inference
function gets that player's events so far (``cwm.events``: its observation at each state and its own
actions, the last event's action ``None``: it has not acted there yet; at the end of the game the last event
also carries ``"terminal": true`` and the player's ``"return"``) and returns a full history, chance and every player included. The history is replayed in the model through ``ModelState`` (the contract enforced); it passes
when the replay has one state per event, the player's observation at each equals the event's, the
player moves exactly where it moved and plays exactly its own actions, and the last state is the
player's turn (or, at the end, a terminal state paying the player its recorded return). If all pass, every
sample lies in the support of the model's posterior; whether it is drawn with the right probabilities is
what ``cwm.checks.posterior`` measures.

Open deck: every player of every recorded game, from ``trajectories.closed_view``. Closed deck: the one
player each closed trajectory belongs to, with ``terminal`` on, plus random play (``random_play_checks``).

The hidden-state variant (``kind="state"``, ``resample_state``) is checked at the same points, on the state
it returns alone: the player's observation there must be its latest one, and it must be the player's turn
with its recorded action legal (at the end: a terminal state). Nothing says that state is reachable.
"""

from __future__ import annotations

import dataclasses
import hashlib
from collections.abc import Callable, Sequence
from typing import Any

from cwm import events as player_events
from cwm import value_rules
from cwm.checks.report import Tally, diff
from cwm.model import MODEL_ERRORS, Guard, WorldModel, direct_guard, model_traceback
from cwm.model_state import ModelState
from cwm.types import JSON, TERMINAL, CheckFailure, CheckReport, ClosedTrajectory, ModelContractError

Resample = Callable[[list[JSON], int, int], Any]


def decision_points(ct: ClosedTrajectory, *, terminal: bool) -> list[int]:
    """The event indices where the player acted, and the last one (the end of the game) with ``terminal``."""
    points = [k for k, e in enumerate(ct.events) if e.action is not None]
    if terminal:
        points.append(len(ct.events) - 1)
    return points


def check_seed(ti: int, player: int, k: int) -> int:
    """The seed handed to ``resample_history`` for one check: fixed by where the check is, so reruns agree."""
    digest = hashlib.blake2b(f"{ti}/{player}/{k}".encode(), digest_size=4).digest()
    return int.from_bytes(digest, "big") & 0x7FFFFFFF


def run_inference_checks(model: WorldModel, resample: Resample, closed: Sequence[ClosedTrajectory], *,
                         terminal: bool = False, guard: Guard = direct_guard, max_failures_per_type: int = 20,
                         kind: str = "history") -> CheckReport:
    """Checks ``resample`` against the players' views ``closed`` by replaying its histories in ``model``.

    Args:
      model: the world model the histories are replayed in (its own guard times its calls).
      resample: the inference function, ``resample_history(events, player_id, seed)``.
      closed: one player's view per item (``trajectories.closed_view`` of open-deck games, or closed-deck
        recordings).
      terminal: also check at the end of each game (closed deck: the terminal observation and return).
      guard: runs each call of ``resample`` (a per-call time budget in the sandbox).
      max_failures_per_type: failures kept per test type (all are counted).
      kind: ``"history"`` (``resample`` is ``resample_history``) or ``"state"`` (``resample_state``).

    Returns:
      A ``CheckReport`` with the types ``inference`` (the states where the player acted) and
      ``inference_terminal``; its transition counts are the inference checks.
    """
    tally = Tally(max_failures_per_type)
    passed = total = 0
    for ti, ct in enumerate(closed):
        for k in decision_points(ct, terminal=terminal):
            at_end = terminal and k == len(ct.events) - 1
            ok = _check_one(_Checked(model, resample, guard, kind), ct, (ti, k), at_end, tally)
            passed += ok
            total += 1
    return tally.report(passed, total)


@dataclasses.dataclass(frozen=True)
class _Checked:
    """What is checked: the inference function ``resample`` of ``kind`` (run under ``guard``) and the model its
    draws are replayed in."""

    model: WorldModel
    resample: Resample
    guard: Guard
    kind: str


def _check_one(checked: _Checked, ct: ClosedTrajectory, where: tuple[int, int], at_end: bool, tally: Tally) -> bool:
    """One check of ``resample_history`` (``kind="history"``) or ``resample_state`` (``"state"``) at event ``k`` of
    view ``ti`` (``where``): the call under ``guard``, the value rule of what it drew, then whether it fits what
    the player saw."""
    model, resample, guard, kind = checked.model, checked.resample, checked.guard, checked.kind
    ti, k = where
    test = "inference_terminal" if at_end else "inference"
    seed, name = check_seed(ti, ct.player, k), f"resample_{kind}"
    call = f"{name}({_given(k, at_end)}, player_id={ct.player}, seed={seed})"

    def fail(why: str, *, history: Sequence[str] = (), expected: JSON = None, got: JSON = None, trace: str = "",
             breach: bool = False) -> bool:
        return tally.fail(lambda: CheckFailure(test, ti, k, call, expected, got, why, trace, tuple(history), breach),
                          test, breach=breach)

    convert = value_rules.history if kind == "history" else value_rules.state
    try:
        drawn = guard(lambda: convert(resample(_events(ct, k, at_end), ct.player, seed)))
    except value_rules.ValueBreach as e:
        return fail(str(e) if kind == "history" else f"{name}: {e}", breach=True)
    except MODEL_ERRORS as e:
        return fail(f"{name} raised an exception", trace=model_traceback(e), breach=True)
    problem = (_replay(model, ct, k, drawn, at_end) if kind == "history"
               else _sampled_state_problem(model, drawn, ct, k, at_end))
    if problem is None:
        return tally.ok(test)
    why, expected, got = problem
    return fail(why, history=drawn if kind == "history" else (), expected=expected, got=got)


def _sampled_state_problem(model: WorldModel, raw: Any, ct: ClosedTrajectory, k: int,
                           at_end: bool) -> tuple[str, JSON, JSON] | None:
    """Why a state drawn by ``resample_state`` is not one the player could be in at event ``k``, if it is not."""
    try:
        state = ModelState(model, raw)
        return _same_view(state, ct, k, ct.player) or _drawn_turn(state, ct, k, at_end)
    except ModelContractError as e:
        return f"the sampled state breaks the world model's contract: {e}", None, None


def _drawn_turn(state: ModelState, ct: ClosedTrajectory, k: int, at_end: bool) -> tuple[str, JSON, JSON] | None:
    """Why a sampled state is not where the player stood at event ``k``: its turn, its action legal."""
    mover = state.current_player()
    if at_end:
        return None if mover == TERMINAL else (f"the sampled state of the game's end is not terminal (player "
                                               f"{mover} to move)", TERMINAL, mover)
    if mover != ct.player:
        return f"the sampled state is player {mover}'s turn, not the player's ({ct.player})", ct.player, mover
    own = ct.events[k].action
    legal = state.legal_action_strings()
    if own is not None and own not in legal:
        return f"the player played {own!r} here, which the sampled state does not allow", own, legal[:20]
    return None


def _events(ct: ClosedTrajectory, k: int, at_end: bool) -> list[JSON]:
    """The player's first ``k + 1`` events as the inference function gets them (the last one's action hidden,
    and flagged ``terminal`` with the player's return at the end of the game)."""
    events: list[JSON] = [player_events.event(value_rules.thaw(e.observation), e.action) for e in ct.events[:k]]
    events.append(player_events.event(value_rules.thaw(ct.events[k].observation),
                                      final_return=ct.player_return if at_end else None))
    return events


def _given(k: int, at_end: bool) -> str:
    """How a failure names the events a check handed over."""
    return "events (the last flagged terminal)" if at_end else f"events[:{k + 1}]"


def _replay(model: WorldModel, ct: ClosedTrajectory, k: int, history: list[str],
            at_end: bool) -> tuple[str, JSON, JSON] | None:
    """Why the replay of ``history`` does not reproduce the player's first ``k + 1`` events, or ``None``."""
    if len(history) != k:
        return (f"the history has {len(history)} actions; the player saw {k + 1} states, so it needs exactly {k} "
                f"(every observation consumed, none more)", k, len(history))
    player = ct.player
    try:
        state: ModelState = model.new_initial_state()
        for j, action in enumerate(history):
            problem = _same_view(state, ct, j, player)
            if problem is not None:
                return problem
            mover, own = state.current_player(), ct.events[j].action
            if (mover == player) != (own is not None):
                return (f"at state {j} the player {'acted' if own is not None else 'did not act'} in the recording, "
                        f"but the replayed state's current player is {mover}", own, mover)
            if own is not None and action != own:
                return f"at state {j} the player played {own!r}, but the history plays {action!r}", own, action
            state = state.child_from_string(action)
        problem = _same_view(state, ct, k, player)
        if problem is not None:
            return problem
        return _last_state(state, ct, player, at_end)
    except ModelContractError as e:
        return f"replaying the history breaks the world model's contract: {e}", None, None


def _same_view(state: ModelState, ct: ClosedTrajectory, j: int, player: int) -> tuple[str, JSON, JSON] | None:
    got = state.observation(player)
    want = value_rules.thaw(ct.events[j].observation)
    if value_rules.same(got, want):
        return None
    return (f"at state {j} the player's observation differs: " + "; ".join(diff(value_rules.canonical(want), got)),
            want, got)


def _last_state(state: ModelState, ct: ClosedTrajectory, player: int, at_end: bool) -> tuple[str, JSON, JSON] | None:
    mover = state.current_player()
    if not at_end:
        if mover != player:
            return f"the replay ends where player {mover} is to move, not the player ({player})", player, mover
        return None
    if mover != TERMINAL:
        return f"the replay of the whole game ends at a state that is not terminal (player {mover} to move)", -4, mover
    got = state.returns()[player]
    if abs(got - ct.player_return) > 1e-9:
        return (f"the replayed game pays the player {got}, the recorded game {ct.player_return}", ct.player_return,
                got)
    return None


__all__ = ["Resample", "check_seed", "decision_points", "run_inference_checks"]
