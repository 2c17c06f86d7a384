"""The full checks of one recorded step (``StepChecks``): each calls the model once, applies the contract's
value rule to the answer, and records a pass, a breach or a mismatch, worded for the LLM."""

from __future__ import annotations

import functools
import json
from collections.abc import Callable, Sequence
from typing import Any

from cwm import value_rules
from cwm.checks.report import Tally, diff, set_diff
from cwm.codec import ActionCodec
from cwm.model import MODEL_ERRORS, REST, Beat, Guard, direct_guard, model_traceback, no_beat
from cwm.types import CHANCE, JSON, TERMINAL, CheckFailure, ModelContractError, Trajectory

_UNSET = object()
_FAST_NUMBERS = frozenset({int, float})


def state_text(state: Any, limit: int = 600) -> str:
    """A model's state as compact JSON for a failure report, cut at ``limit`` characters."""
    try:
        text = json.dumps(value_rules.canonical(state), separators=(", ", ": "), ensure_ascii=False)
    except (TypeError, ValueError):  # not JSON (a breach reported on its own)
        return value_rules.describe(state, limit)
    return text if len(text) <= limit else text[:limit] + f"... ({len(text)} characters)"


class StepChecks:
    """The checks of a replay: each records in ``run`` (a ``Tally``) what it found, naming the trajectory,
    the step and the actions so far."""

    def __init__(self, fns: dict[str, Callable[..., Any]], guard: Guard, ti: int, traj: Trajectory, run: Tally,
                 codec: ActionCodec | None = None):
        self.fns, self.guard, self.ti, self.traj, self.run_ = fns, guard, ti, traj, run
        self.codec = codec
        self.n = traj.num_players
        self.history: list[str] = []
        self.si = 0
        # the model's own state the current check reads (shown in a failure beside the real game's view)
        self.state: Any = None
        # the functions with the guard applied (the fast path calls these; the full checks go through call())
        self.bound = fns if guard is direct_guard else {k: functools.partial(guard, f) for k, f in fns.items()}
        # inside a stretch of the guard (``timed``): the bare functions, each call announced by ``beat``
        self.timed = False
        self.beat: Beat = no_beat
        self.passes: tuple[type[BaseException], ...] = ()  # what a call lets through (the guard's ``passes``)

    def in_stretch(self, beat: Beat) -> None:
        """Calls the model through ``beat`` and the bare functions from now on (``guard.stretch`` runs the
        replay), letting through what the guard's stretch words itself (``passes``)."""
        self.timed, self.beat, self.bound = True, beat, self.fns
        self.passes = getattr(self.guard, "passes", ())

    # -- calls and failures -------------------------------------------------------------------------
    def call(self, name: str, *args: Any) -> tuple[Any, str, bool]:
        """``(value, traceback, mutated)``: the model's answer, or ``_UNSET`` and what it raised."""
        try:
            if self.timed:
                self.beat(name)
                try:
                    answer = self.fns[name](*args)
                finally:
                    self.beat(REST)  # what follows is the checks' own work, counted against no call
            else:
                answer = self.guard(self.fns[name], *args)
            if args:
                value_rules.untouched(args[0])  # an unbound dict/list method changed nothing, but it was tried
            return answer, "", False
        except value_rules.StateMutationError as e:
            return _UNSET, f"{name} tried to modify its input state, which the contract forbids ({e})", True
        except self.passes:  # the stretch's own verdict (a sandbox child's memory limit)
            raise
        except MODEL_ERRORS as e:  # a model bug (exit() and KeyboardInterrupt included) becomes a failing check
            return _UNSET, model_traceback(e), False

    def fail(self, kind: str, call: str, expected: JSON, got: JSON, why: str, *, breach: bool,
             trace: str = "") -> bool:
        """Records one failed check of type ``kind`` at the current step (``False``)."""
        return self._fail(kind, call, (expected, got, why, trace), breach=breach)

    def fail_rest(self, step: int, remaining: int, why: str) -> bool:
        """Records the ``remaining`` steps from ``step`` on, which the trajectory never reached, as failed."""
        return self._fail("transition", "(not reached)", (None, None, why, ""), breach=False, count=remaining,
                          step=step)

    def _fail(self, kind: str, call: str, shown: tuple[JSON, JSON, str, str], *, breach: bool, count: int = 1,
              step: int | None = None) -> bool:
        expected, got, why, trace = shown
        si, history, state = self.si if step is None else step, tuple(self.history), self.state
        return self.run_.fail(lambda: CheckFailure(kind, self.ti, si, call, expected, got, why, trace, history, breach,
                                                   **self._context(kind, si, state)),
                              kind, breach=breach, count=count)

    def _context(self, kind: str, si: int, state: Any) -> dict[str, Any]:
        """What a failure shows of the position: the real game's observations there (unless the failure
        is about observations, whose expected value they are) and the model's own state."""
        out: dict[str, Any] = {"state": state_text(state) if state is not None else ""}
        at = si + 1 if kind == "rewards" else si  # get_rewards reads the state after the step's action
        if kind != "observations" and at <= len(self.traj.steps):
            out["observed"] = list(self.traj.steps[at].observations if at < len(self.traj.steps)
                                   else self.traj.final_observations)
        return out

    def undecodable(self, player: Any, strings: list[str]) -> str:
        """Why ``ModelState`` could not give ``player``'s ``strings`` action ids ('' when it can, or when the
        model's own player is unknown)."""
        if self.codec is None or player is _UNSET or player == TERMINAL or not strings:
            return ""
        try:
            ids = self.codec.to_ids(player, strings)
        except ModelContractError as e:
            return str(e)
        return "" if len(set(ids)) == len(ids) else f"two of the actions {strings[:20]} decode to the same action id"

    def raised(self, kind: str, call: str, expected: JSON, trace: str, mutated: bool, *, breach: bool = True) -> bool:
        why = "tried to modify its input state (the contract forbids it)" if mutated else "raised an exception"
        return self.fail(kind, call, expected, None, why, breach=breach, trace="" if mutated else trace)

    # -- one trajectory -----------------------------------------------------------------------------
    def frozen(self, raw: Any, call: str, *, breach: bool = True) -> value_rules.ReadOnlyDict | None:
        try:
            return value_rules.state(raw)
        except value_rules.ValueBreach as e:
            self.fail("transition", call, None, value_rules.describe(raw, 300), f"not a valid state: {e}", breach=breach)
            return None

    # -- the checks -----------------------------------------------------------------------------------
    def check_player(self, state: Any, expected: int) -> Any:
        """The model's current player (``_UNSET`` when it has none), checked against ``expected``."""
        call = "get_current_player(state)"
        got, trace, mutated = self.call("get_current_player", state)
        if got is _UNSET:
            self.raised("current_player", call, expected, trace, mutated)
            return _UNSET
        try:
            got = value_rules.player(got, self.n)
        except value_rules.ValueBreach as e:
            self.fail("current_player", call, expected, value_rules.describe(got), str(e), breach=True)
            return _UNSET
        if got == expected:
            return self.run_.ok("current_player") and got
        self.fail("current_player", call, expected, got, f"value: expected {expected}, got {got}", breach=False)
        return got

    def check_observations(self, state: Any, expected: Sequence[JSON], kind: str = "observations") -> bool:
        call = "get_observations(state)"
        got, trace, mutated = self.call("get_observations", state)
        want = list(expected)
        if got is _UNSET:
            return self.raised(kind, call, want, trace, mutated)
        try:
            obs, bools = value_rules.observations_flagged(got, self.n)
        except value_rules.ValueBreach as e:
            return self.fail(kind, call, want, value_rules.describe(got, 300), str(e), breach=True)
        canon = list(obs)
        if value_rules.same(canon, want, got_bools=bools, expected_bools=value_rules.has_bool(want)):
            return self.run_.ok(kind)
        return self.fail(kind, call, want, canon, "\n".join(diff(value_rules.canonical(want), canon)), breach=False)

    def check_legal(self, state: Any, expected: list[str], player: Any, recorded_player: int) -> list[str] | None:
        """The model's legal actions (``None`` when they break the rules), checked as a set; ``player`` is the
        model's own current player (``_UNSET`` when it has none), whose action ids ``ModelState`` gives them."""
        call = "get_legal_actions(state)"
        got, trace, mutated = self.call("get_legal_actions", state)
        if got is _UNSET:
            self.raised("legal_actions", call, expected, trace, mutated)
            return None
        try:
            got = value_rules.action_strings(got)
        except value_rules.ValueBreach as e:
            self.fail("legal_actions", call, expected, value_rules.describe(got, 300), str(e), breach=True)
            return None
        same = set(got) == set(expected)
        # ModelState gives the strings ids for its own current player: the recorded ones decode for the
        # recorded player, any others may not (a chance node's ids are those of its chance outcomes)
        unknown = "" if (same and player == recorded_player) or player == CHANCE else self.undecodable(player, got)
        if same and not unknown:
            self.run_.ok("legal_actions")
        else:
            # an empty list where the model's own current player acts is a breach: ModelState refuses it, as
            # it refuses a string that is not one of the game's actions (no action id)
            empty = not got and player is not _UNSET and player != TERMINAL
            why = "no legal actions at a non-terminal state" if empty else unknown or set_diff(expected, got)
            self.fail("legal_actions", call, expected, got, why, breach=empty or bool(unknown))
        return got

    def check_chance(self, state: Any, step: Any, player: Any) -> tuple[bool, list[str] | None]:
        """Whether the model's chance outcomes are the recorded ones, and their strings (``None`` when they
        break the rules)."""
        call = "get_chance_outcomes(state)"
        expected = {c.action_string: c.probability for c in step.chance_outcomes}
        want: JSON = [[a, p] for a, p in expected.items()]
        got, trace, mutated = self.call("get_chance_outcomes", state)
        if got is _UNSET:
            return self.raised("chance_outcomes", call, want, trace, mutated, breach=player == CHANCE), None
        try:
            pairs = value_rules.chance_outcomes(got)
            if not pairs and player == CHANCE:
                raise value_rules.ValueBreach("get_chance_outcomes returned no outcomes at a chance node")
        except value_rules.ValueBreach as e:
            return self.fail("chance_outcomes", call, want, value_rules.describe(got, 300), str(e),
                             breach=player == CHANCE), None
        got_map = dict(pairs)
        if got_map.keys() == expected.keys() and all(abs(got_map[a] - p) <= 1e-9 for a, p in expected.items()):
            return self.run_.ok("chance_outcomes"), list(got_map)
        unknown = self.undecodable(player, list(got_map)) if player == CHANCE else ""
        why = unknown or set_diff(list(expected), list(got_map)) or "\n".join(
            f"P({a!r}): expected {p}, got {got_map[a]}" for a, p in expected.items() if abs(got_map[a] - p) > 1e-9)
        failed = self.fail("chance_outcomes", call, want, [[a, p] for a, p in pairs], why, breach=bool(unknown))
        return failed, None if unknown else list(got_map)

    def check_transition(self, state: Any, action: str, offered: list[str] | None) -> value_rules.ReadOnlyDict | None:
        """The state after the recorded ``action``; ``offered``: the actions ``ModelState`` would apply here."""
        call = f"apply_action(state, {action!r})"
        # ModelState applies only what the model offers: failing on another action (raising, modifying the
        # state, returning it or no valid state) follows from a wrong legal-action list (a mismatch); failing
        # on one it offers is a breach, as in play
        breach = offered is not None and action in offered
        nxt, trace, mutated = self.call("apply_action", state, action)
        if nxt is _UNSET:
            self.raised("transition", call, None, trace, mutated, breach=breach)
            return None
        if nxt is state:
            self.fail("transition", call, None, None, "returned the input state object; apply_action must return a "
                      "new state", breach=breach)
            return None
        frozen = self.frozen(nxt, call, breach=breach)
        if frozen is not None:
            self.run_.ok("transition")
        return frozen

    def check_rewards(self, nxt: Any, step: Any) -> bool:
        call = "get_rewards(next_state)"
        expected = list(step.rewards)
        got, trace, mutated = self.call("get_rewards", nxt)
        if type(got) is list and set(map(type, got)) <= _FAST_NUMBERS and got == expected and len(got) == self.n:
            return self.run_.ok("rewards")  # exact numbers equal to the recorded ones (finite: they are)
        if got is _UNSET:
            return self.raised("rewards", call, expected, trace, mutated)
        try:
            rewards = value_rules.rewards(got, self.n)
        except value_rules.ValueBreach as e:
            return self.fail("rewards", call, expected, value_rules.describe(got), str(e), breach=True)
        if all(abs(g - e) <= 1e-9 for g, e in zip(rewards, expected)):
            return self.run_.ok("rewards")
        return self.fail("rewards", call, expected, list(rewards),
                         "\n".join(diff(expected, list(rewards))), breach=False)

    def check_terminal(self, state: Any) -> bool:
        player = self.check_player(state, TERMINAL)
        ok = player is not _UNSET and player == TERMINAL
        ok &= self.check_observations(state, self.traj.final_observations)
        call = "get_legal_actions(terminal_state)"
        got, trace, mutated = self.call("get_legal_actions", state)
        if got is _UNSET:
            return self.raised("termination", call, [], trace, mutated, breach=False) and False
        try:
            got = value_rules.action_strings(got)
        except value_rules.ValueBreach as e:
            return self.fail("termination", call, [], value_rules.describe(got, 300), str(e), breach=False) and False
        if got:
            return self.fail("termination", call, [], got, "\n".join(diff([], got)), breach=False)
        return ok & self.run_.ok("termination")




