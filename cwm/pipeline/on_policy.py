"""On-policy accuracy: a synthesized model checked on the states its own agent reached in arena play.

Train and test accuracy measure a model on random and MCTS play of the real game; a planner steers into
states neither covers, and a wrong belief can hide behind a perfect transition score. Each arena match the
CWM agent finished is replayed in the ground truth from its recorded actions (``MatchResult.actions``) into
an open-deck trajectory; the bundle's model is checked on those games in the sandbox (transition accuracy,
any game) and, where the bundle carries an inference function, so is its inference on the agent's own seat
at every state where it acted (inference accuracy).
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator, Mapping, Sequence
from typing import Any

import pyspiel

from cwm import games
from cwm.arena.types import MatchResult
from cwm.games import trajectories
from cwm.sandbox import Sandbox
from cwm.sandbox.checkers import inference_checker
from cwm.types import JSON, CheckReport, ClosedTrajectory, CwmError, Trajectory


class ReplayError(CwmError, ValueError):
    """A match's recorded actions do not replay in the ground truth (another game, or a damaged record)."""


def replay_states(game: str | games.GameSpec, actions: Sequence[int], *,
                  key: str = "match") -> Iterator[tuple[pyspiel.State, int]]:
    """Each ground-truth state of the game played with exactly ``actions`` (chance outcomes included), with the
    action played there, in play order. The state yielded is the live one, moved on after the consumer's next
    step: clone it to keep it.

    Raises:
      ReplayError: an action is illegal where it is played, or the actions end before or after the game (found
        when the consumer asks past the last action, so read the generator to its end).
    """
    state = games.load_game(game).new_initial_state()
    for k, action in enumerate(actions):
        if state.is_terminal():
            raise ReplayError(f"{key}: the game ends after {k} of its {len(actions)} recorded actions")
        legal = [a for a, _ in state.chance_outcomes()] if state.is_chance_node() else state.legal_actions()
        if action not in legal:
            raise ReplayError(f"{key}: recorded action {k} ({action}) is not legal where it is played")
        yield state, action
        state.apply_action(action)
    if not state.is_terminal():
        raise ReplayError(f"{key}: the game does not end after its {len(actions)} recorded actions")


def replay(game: str | games.GameSpec, actions: Sequence[int], *, key: str = "match") -> Trajectory:
    """The ground-truth game played with exactly ``actions`` (chance outcomes included), recorded open deck:
    ``trajectories.record`` takes every move from ``replay_states``, which checks them.

    Raises:
      ReplayError: an action is illegal where it is played, or the actions end before or after the game.
    """
    moves = replay_states(game, actions, key=key)

    def pick(state: Any, rng: Any) -> int:
        del state, rng
        return next(moves)[1]

    played = trajectories.record(game, seed=0, policy=pick, chance_policy=pick, policy_name=f"arena:{key}",
                                 max_steps=len(actions) + 1)  # one past: the generator says why it stops
    for _ in moves:  # the recorded game ended: any action left over is an error the generator reports
        pass
    return played


def finished(results: Sequence[MatchResult], label: str) -> Iterator[tuple[MatchResult, tuple[int, ...]] | None]:
    """Per match ``label`` played, in order: the record and the seats it held, or ``None`` where the match
    cannot replay (a forfeit or a void match ends before the game does; a record may have no actions)."""
    for r in results:
        seats = tuple(i for i, s in enumerate(r.seats) if s == label)
        if seats:
            yield None if r.forfeit_seat is not None or r.void or not r.actions else (r, seats)


def agent_games(game: str | games.GameSpec, results: Sequence[MatchResult],
                label: str) -> tuple[list[tuple[Trajectory, tuple[int, ...]]], int]:
    """The finished matches ``label`` played, replayed, each with the seats it held; and how many were left
    out (a forfeit or a void match ends before the game does, and a record without actions cannot replay)."""
    found = list(finished(results, label))
    played = [(replay(game, m[0].actions, key=m[0].key), m[1]) for m in found if m is not None]
    return played, len(found) - len(played)


def on_policy_accuracy(sources: Mapping[str, str], game: str | games.GameSpec, results: Sequence[MatchResult],
                       label: str, *, box: Any = None) -> dict[str, JSON]:
    """A bundle's model (and inference) checked on the games its agent ``label`` finished in ``results``.

    Args:
      sources: the bundle's code files (``model.py``, ``inference.py`` when it has one).
      game: the real game the matches were played in.
      results: the arena's match records.
      label: the agent's label in the arena.
      box: the sandbox the untrusted code runs in (default: one of its own).

    Returns:
      ``matches`` used and ``skipped``, ``transition_accuracy``, ``pass_rate``, ``checks`` and ``transitions``
      (``"passed/checked"``) of the model;
      ``inference_accuracy`` and ``inference_checks`` when the bundle has inference; ``None`` rates when no
      match could be used.
    """
    played, skipped = agent_games(game, results, label)
    record: dict[str, JSON] = {"matches": len(played), "skipped": skipped, "transition_accuracy": None,
                               "pass_rate": None}
    if not played:
        return record
    with contextlib.nullcontext(box) if box is not None else Sandbox() as box:
        report = box.check_world_model(sources["model.py"], [t for t, _ in played])
        record |= _rates(report, "")
        if "inference.py" in sources:
            views: list[ClosedTrajectory] = [trajectories.closed_view(t, seat) for t, seats in played for seat in seats]
            check = inference_checker(views, world_model=sources["model.py"], sandbox=box)
            record |= _rates(check(sources["inference.py"]), "inference_")
    return record


def _rates(report: CheckReport, prefix: str) -> dict[str, JSON]:
    rates: dict[str, JSON] = {f"{prefix}checks": f"{report.passed}/{report.executed}"}
    if prefix:
        rates[f"{prefix}accuracy"] = report.pass_rate if report.executed else None
    else:
        rates |= {"transition_accuracy": report.transition_accuracy, "pass_rate": report.pass_rate,
                  "transitions": f"{report.transitions_passed}/{report.transitions_total}"}
    if report.error:
        rates[f"{prefix}error"] = report.error.splitlines()[0][:300]
    return rates
