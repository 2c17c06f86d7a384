"""Value checks: is ``get_value(state, player_id)`` a usable leaf evaluator for MCTS on a world model?

Every state of the recorded games is replayed in the (already synthesized) world model, and the value
function is asked about it for every player. Each call is checked by six rules, one test type each:

- ``value_number``: it returns a finite number (an int or a float, not a bool) without raising;
- ``value_mutation``: it leaves the state alone (states are read-only; a write raises at once);
- ``value_range``: the number lies within the game's utility range;
- ``value_terminal``: at a terminal state it is the player's true return there;
- ``value_determinism``: asked again about the same state, it answers the same number;
- ``value_time``: the call used at most ``call_s`` CPU seconds (MCTS calls it at every leaf).

A failure names the game, the step and the call, so the LLM (and a person) can find it. The same checks
gate a synthesized candidate (``cwm.synthesis.value_target``) and a bundle's ``value.py`` at load; in the
sandbox they run in a hardened child (the job ``cwm.sandbox.jobs.check.check_value``).
"""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from typing import Any

from cwm import value_rules
from cwm.checks.report import Tally
from cwm.model import MODEL_ERRORS, Guard, WorldModel, direct_guard, model_traceback
from cwm.model_state import ModelState
from cwm.types import JSON, CheckFailure, CheckReport, ModelContractError, Trajectory

DEFAULT_CALL_S = 0.01  # CPU seconds one get_value call may use (a thousand leaves a move: ten seconds at most)
VALUE_TYPES = ("value_number", "value_mutation", "value_range", "value_terminal", "value_determinism", "value_time")
_TOLERANCE = 1e-9

GetValue = Callable[[Any, int], Any]


def run_value_checks(model: WorldModel, get_value: GetValue, games: Sequence[Trajectory], *,
                     utility: tuple[float, float], call_s: float = DEFAULT_CALL_S, guard: Guard = direct_guard,
                     max_failures_per_type: int = 20) -> CheckReport:
    """Checks ``get_value`` at every state of ``games`` replayed in ``model``, for every player.

    Args:
      model: the world model the games are replayed in.
      get_value: the value function, ``get_value(state, player_id) -> float``.
      games: recorded games of the model's game (their action strings are replayed).
      utility: the game's (minimum, maximum) utility.
      call_s: CPU seconds one call may use.
      guard: runs each call (a hard per-call time limit in the sandbox).
      max_failures_per_type: failures kept per test type (all are counted).

    Returns:
      A ``CheckReport`` with the ``VALUE_TYPES``; its transition counts are the (state, player) pairs whose
      every check passed.

    Raises:
      ModelContractError: the world model itself cannot replay a recorded game (it is checked before).
    """
    tally = Tally(max_failures_per_type)
    passed = total = 0
    for gi, game in enumerate(games):
        for step, state in enumerate(_replay(model, game)):
            for player in range(model.num_players):
                case = _Case(gi, step, player, tuple(game.action_strings[:step]))
                passed += case.check(state, get_value, guard, tally, utility=utility, call_s=call_s)
                total += 1
    return tally.report(passed, total)


def _replay(model: WorldModel, game: Trajectory) -> list[ModelState]:
    state = model.new_initial_state()
    states = [state]
    for action in game.action_strings:
        state = state.child_from_string(action)
        states.append(state)
    return states


class _Case:
    """One (state, player) pair of one recorded game: its checks and how their failures are named."""

    def __init__(self, game: int, step: int, player: int, history: tuple[str, ...]):
        self.game, self.step, self.player, self.history = game, step, player, history
        self.call = f"get_value(state, player_id={player})"

    def fail(self, tally: Tally, kind: str, why: str, *, expected: JSON = None, got: JSON = None, trace: str = "",
             breach: bool = True) -> bool:
        return tally.fail(lambda: CheckFailure(kind, self.game, self.step, self.call, expected, got, why, trace,
                                               self.history, breach), kind, breach=breach)

    def check(self, state: ModelState, get_value: GetValue, guard: Guard, tally: Tally, *,
              utility: tuple[float, float], call_s: float) -> bool:
        first = self._ask(state, get_value, guard, tally)
        if first is None:
            return False
        value, spent = first
        ok = True
        if spent > call_s:
            ok = self.fail(tally, "value_time", f"the call used {spent:.4f} s of CPU time; the budget is {call_s:g} s",
                           expected=call_s, got=round(spent, 6))
        else:
            tally.ok("value_time")
        lo, hi = utility
        if not lo - _TOLERANCE <= value <= hi + _TOLERANCE:
            ok = self.fail(tally, "value_range", f"{value} lies outside the game's utility range [{lo}, {hi}]",
                           expected=[lo, hi], got=value)
        else:
            tally.ok("value_range")
        if state.is_terminal():
            truth = state.returns()[self.player]
            if abs(value - truth) > _TOLERANCE:
                ok = self.fail(tally, "value_terminal", f"at a terminal state the value must be the player's return "
                                                        f"{truth}, got {value}", expected=truth, got=value)
            else:
                tally.ok("value_terminal")
        again = self._ask(state, get_value, guard, tally, counted=False)
        if again is not None and again[0] != value:
            ok = self.fail(tally, "value_determinism", f"asked twice about the same state it answered {value}, then "
                                                       f"{again[0]}", expected=value, got=again[0])
        elif again is not None:
            tally.ok("value_determinism")
        return ok and again is not None

    def _ask(self, state: ModelState, get_value: GetValue, guard: Guard, tally: Tally, *,
             counted: bool = True) -> tuple[float, float] | None:
        """The call's value and the CPU seconds it used, or ``None`` after recording why it failed."""
        start = time.process_time()
        try:
            got = guard(get_value, state.raw, self.player)
        except value_rules.StateMutationError as e:
            self.fail(tally, "value_mutation", f"get_value tried to modify its input state, which the contract "
                                               f"forbids ({e})")
            return None
        except ModelContractError as e:  # the guard's per-call limit
            self.fail(tally, "value_time", str(e))
            return None
        except MODEL_ERRORS as e:
            self.fail(tally, "value_number", "get_value raised an exception", trace=model_traceback(e))
            return None
        spent = time.process_time() - start
        if counted:
            tally.ok("value_mutation")
        try:
            number = value_rules.number(got, "get_value")
        except value_rules.ValueBreach as e:
            self.fail(tally, "value_number", str(e), got=value_rules.describe(got))
            return None
        if counted:
            tally.ok("value_number")
        return number, spent


__all__ = ["DEFAULT_CALL_S", "VALUE_TYPES", "run_value_checks"]
