"""Unit checks built from trajectories, run on a model; the same functions give the LLM its feedback and gate
a model in pytest.

Open deck: every recorded step is replayed in the model from its initial state, checking the current
player, legal actions, chance outcomes, every player's observation, the transition itself (no exception,
a new state) and the rewards; the terminal state must be terminal. Closed deck (and any model): random
play from the model's initial state must reach a terminal state without breaking the contract.

Every value the model returns goes through the contract's value rules (``cwm.values``), the same functions
``cwm.model.ModelState`` applies in play, and states are handed to the model read-only, so a function
that modifies its input fails here exactly as it would in play. A failure is either a **breach** (the
model broke a rule ``ModelState`` enforces: an exception, a wrong type, an invalid value, a mutation, or,
for a ``WorldModel`` with the game's action codec, an action string that has no action id of the game)
or a mismatch (a valid answer that differs from the ground truth); ``CheckReport.breaches`` counts the
first.
"""

from __future__ import annotations

import functools
import marshal
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from cwm import values
from cwm.model import (
    MODEL_ERRORS,
    WORLD_MODEL_API,
    ActionCodec,
    Guard,
    ModelState,
    OpenCodec,
    WorldModel,
    describe_error,
    direct_guard,
    model_traceback,
)
from cwm.types import (
    CHANCE,
    JSON,
    TERMINAL,
    CheckFailure,
    CheckReport,
    ModelContractError,
    Trajectory,
    TypeStats,
)

_UNSET = object()
_STR = frozenset({str})


# The order of a report's types: the order a replay meets them (kept stable: reports are shown to LLMs).
_REPORT_ORDER = ("current_player", "observations", "legal_actions", "chance_outcomes", "transition", "rewards",
                 "termination", "random_play")


class _Run:
    """Accumulates check outcomes for one report: counts per type, breaches, and the failures kept."""

    def __init__(self, max_failures_per_type: int):
        self.stats: dict[str, list[int]] = {}
        self.failures: list[CheckFailure] = []
        self.shown: dict[str, int] = {}
        self.limit = max_failures_per_type
        self.breaches = 0

    def ok(self, test_type: str) -> bool:
        s = self.stats.get(test_type)
        if s is None:
            s = self.stats[test_type] = [0, 0]
        s[0] += 1
        s[1] += 1
        return True

    def fail(self, failure: Callable[[], CheckFailure], test_type: str, *, breach: bool, count: int = 1) -> bool:
        s = self.stats.setdefault(test_type, [0, 0])
        s[1] += count
        self.breaches += count if breach else 0
        if self.shown.get(test_type, 0) < self.limit:
            self.shown[test_type] = self.shown.get(test_type, 0) + 1
            self.failures.append(failure())
        return False

    def tally(self, test_types: Sequence[str], count: int) -> None:
        """Counts ``count`` passed checks of each type at once (the replay's fast path)."""
        for test_type in test_types:
            s = self.stats.setdefault(test_type, [0, 0])
            s[0] += count
            s[1] += count

    def report(self, transitions_passed: int, transitions_total: int) -> CheckReport:
        order = {t: i for i, t in enumerate(_REPORT_ORDER)}
        return CheckReport(
            by_type={k: TypeStats(*self.stats[k]) for k in sorted(self.stats, key=lambda t: order.get(t, 99))},
            transitions_passed=transitions_passed,
            transitions_total=transitions_total,
            failures=tuple(self.failures),
            breaches=self.breaches,
        )


def _functions(model: Any) -> tuple[dict[str, Callable[..., Any]], Guard]:
    if isinstance(model, WorldModel):
        return model._fns, model.guard
    return {f.name: getattr(model, f.name) for f in WORLD_MODEL_API}, direct_guard


def _codec(model: Any) -> ActionCodec | None:
    """The game's action ids a ``WorldModel`` plays by (``None`` when any string gets one: an ``OpenCodec``,
    or a plain module)."""
    codec = model.codec if isinstance(model, WorldModel) else None
    return None if codec is None or isinstance(codec, OpenCodec) else codec


def normalise(value: Any) -> JSON:
    """The canonical JSON form of a value (``cwm.values.canonical``); raises ``ValueError`` when it is not
    JSON."""
    return values.canonical(value)


def diff(expected: JSON, got: JSON, *, path: str = "", limit: int = 6) -> list[str]:
    """Readable differences between two JSON values, at most ``limit`` lines, each naming where."""
    out: list[str] = []
    _diff(expected, got, path or "value", out, limit)
    return out


def _diff(expected: JSON, got: JSON, path: str, out: list[str], limit: int) -> None:
    if len(out) >= limit or values.same(got, expected):
        return
    if isinstance(expected, dict) and isinstance(got, dict):
        for key in expected.keys() - got.keys():
            out.append(f"{path}: missing key {key!r}")
        for key in got.keys() - expected.keys():
            out.append(f"{path}: unexpected key {key!r}")
        for key in sorted(expected.keys() & got.keys(), key=str):
            _diff(expected[key], got[key], f"{path}[{key!r}]", out, limit)
    elif isinstance(expected, list) and isinstance(got, list) and len(expected) == len(got):
        for i, (e, g) in enumerate(zip(expected, got)):
            _diff(e, g, f"{path}[{i}]", out, limit)
    elif isinstance(expected, str) and isinstance(got, str) and "\n" in expected + got:
        el, gl = expected.splitlines(), got.splitlines()
        for i in range(max(len(el), len(gl))):
            e, g = (el[i] if i < len(el) else "<none>"), (gl[i] if i < len(gl) else "<none>")
            if e != g:
                out.append(f"{path} line {i + 1}: expected {e!r}, got {g!r}")
                break
    else:
        out.append(f"{path}: expected {values.describe(expected, 200)}, got {values.describe(got, 200)}")
    del out[limit:]


def _set_diff(expected: Sequence[str], got: Sequence[str]) -> str:
    missing = [a for a in expected if a not in got]
    extra = [a for a in got if a not in expected]
    parts = []
    if missing:
        parts.append(f"missing {missing[:10]}")
    if extra:
        parts.append(f"not legal but returned {extra[:10]}")
    return "; ".join(parts)


def run_checks(model: Any, trajectories: Sequence[Trajectory], *, max_failures_per_type: int = 20) -> CheckReport:
    """Replays each trajectory in ``model`` and checks every step against the ground truth.

    Args:
      model: a ``WorldModel`` or any object/module with the contract functions.
      trajectories: open-deck trajectories of the ground truth.
      max_failures_per_type: failures kept in the report per test type (all are counted, and every rate
        and ``all_passed`` come from the counts).

    Returns:
      A ``CheckReport``; a model that raises is scored as failing, never crashes the caller.
    """
    fns, guard = _functions(model)
    codec = _codec(model)
    run = _Run(max_failures_per_type)
    passed = total = 0
    for ti, traj in enumerate(trajectories):
        p, t = _Replay(fns, guard, ti, traj, run, codec).run()
        passed += p
        total += t
    return run.report(passed, total)


_FAST_NUMBERS = frozenset({int, float})
_FAST_TYPES = ("current_player", "observations", "legal_actions", "transition", "rewards")


class _Replay:
    """Replays one trajectory in the model, recording each check in ``run``.

    Each step first tries a fast path for the common case (exact types, the right answer) and falls
    back to the full check, which applies the value rule and words the failure, whenever it is unsure.
    """

    def __init__(self, fns: dict[str, Callable[..., Any]], guard: Guard, ti: int, traj: Trajectory, run: _Run,
                 codec: ActionCodec | None = None):
        self.fns, self.guard, self.ti, self.traj, self.run_ = fns, guard, ti, traj, run
        self.codec = codec
        self.n = traj.num_players
        self.history: list[str] = []
        self.si = 0
        # the functions with the guard applied (the fast path calls these; the full checks go through call())
        self.bound = fns if guard is direct_guard else {k: functools.partial(guard, f) for k, f in fns.items()}

    # -- calls and failures -------------------------------------------------------------------------
    def call(self, name: str, *args: Any) -> tuple[Any, str, bool]:
        """``(value, traceback, mutated)``: the model's answer, or ``_UNSET`` and what it raised."""
        try:
            return self.guard(self.fns[name], *args), "", False
        except values.StateMutationError as e:
            return _UNSET, f"{name} tried to modify its input state, which the contract forbids ({e})", True
        except MODEL_ERRORS as e:  # a model bug (exit() and KeyboardInterrupt included) becomes a failing check
            return _UNSET, model_traceback(e), False

    def fail(self, kind: str, call: str, expected: JSON, got: JSON, why: str, *, breach: bool,
             trace: str = "", count: int = 1, step: int | None = None) -> bool:
        si, history = self.si if step is None else step, tuple(self.history)
        return self.run_.fail(lambda: CheckFailure(kind, self.ti, si, call, expected, got, why, trace, history, breach),
                              kind, breach=breach, count=count)

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
    def run(self) -> tuple[int, int]:
        steps = self.traj.steps
        raw, trace, mutated = self.call("get_initial_state")
        state = None if raw is _UNSET else self.frozen(raw, "get_initial_state()")
        if state is None:
            if raw is _UNSET:
                self.raised("transition", "get_initial_state()", None, trace, mutated)
            return 0, len(steps)
        passed = fast = 0
        last_ok = False
        for si, step in enumerate(steps):
            self.si = si
            nxt = self.fast_step(state, step)
            if nxt is not None:
                fast += 1
                last_ok = True
            else:
                ok, offered = self.check_state(state, step)
                nxt = self.check_transition(state, step.action_string, offered)
                if nxt is None:
                    remaining = len(steps) - si - 1
                    if remaining:
                        self.fail("transition", "(not reached)", None, None, f"trajectory stopped at step {si}; "
                                  f"{remaining} later steps count as failed", breach=False, count=remaining,
                                  step=si + 1)
                    break
                self.history.append(step.action_string)
                ok &= self.check_rewards(nxt, step)
                last_ok = bool(ok)
                passed += last_ok
            if len(self.history) == si:
                self.history.append(step.action_string)
            state = nxt
        else:
            self.si = len(steps)
            if steps and not self.check_terminal(state) and last_ok:
                passed -= 1  # the last transition passes only if the state it led to is terminal as recorded
        self.run_.tally(_FAST_TYPES, fast)
        return passed + fast, len(steps)

    def fast_step(self, state: Any, step: Any) -> values.ReadOnlyDict | None:
        """The next state when every check of a decision step passes with exact types and the recorded
        values (nothing is recorded then), else ``None``: the full checks run the step again."""
        fns = self.bound
        try:
            player = fns["get_current_player"](state)
            obs = fns["get_observations"](state)
            legal = fns["get_legal_actions"](state)
            if not (type(player) is int and player == step.player and player != CHANCE and type(legal) is list
                    and set(map(type, legal)) <= _STR and len(set(legal)) == len(legal) and step.legal_set == set(legal)):
                return None
            if marshal.dumps(obs, 2) != step.observations_marshal or step.action_string not in step.legal_set:
                return None
            nxt = fns["apply_action"](state, step.action_string)
            if nxt is state:
                return None
            nxt = values.state(nxt)
            got = fns["get_rewards"](nxt)
            if type(got) is list and set(map(type, got)) <= _FAST_NUMBERS and got == list(step.rewards):
                return nxt  # exact numbers equal to the recorded ones (so finite, and one per player)
        except MODEL_ERRORS:  # the full checks call again and word it (sandbox interrupts pass through)
            return None
        return None

    def check_state(self, state: Any, step: Any) -> tuple[bool, list[str] | None]:
        """Player, observations, legal actions (and chance outcomes) of one recorded step, in full: whether
        all passed, and the actions ``ModelState`` would apply here (the model's chance outcomes at its own
        chance nodes, its legal actions at its decision nodes; ``None`` when there are none or they break the
        rules)."""
        player = self.check_player(state, step.player)
        ok = player is not _UNSET and player == step.player
        ok &= self.check_observations(state, step.observations)
        legal = self.check_legal(state, list(step.legal_action_strings), player, step.player)
        ok &= legal is not None and set(legal) == step.legal_set
        offered = legal if player is not _UNSET and player >= 0 else None
        if step.player == CHANCE or player == CHANCE:  # ModelState asks the model's own chance nodes
            chance_ok, outcomes = self.check_chance(state, step, player)
            ok &= chance_ok
            offered = outcomes if player == CHANCE else offered
        return ok, offered

    def frozen(self, raw: Any, call: str, *, breach: bool = True) -> values.ReadOnlyDict | None:
        try:
            return values.state(raw)
        except values.ValueBreach as e:
            self.fail("transition", call, None, values.describe(raw, 300), f"not a valid state: {e}", breach=breach)
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
            got = values.player(got, self.n)
        except values.ValueBreach as e:
            self.fail("current_player", call, expected, values.describe(got), str(e), breach=True)
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
            obs, bools = values.observations_flagged(got, self.n)
        except values.ValueBreach as e:
            return self.fail(kind, call, want, values.describe(got, 300), str(e), breach=True)
        canon = list(obs)
        if values.same(canon, want, got_bools=bools, expected_bools=values.has_bool(want)):
            return self.run_.ok(kind)
        return self.fail(kind, call, want, canon, "\n".join(diff(values.canonical(want), canon)), breach=False)

    def check_legal(self, state: Any, expected: list[str], player: Any, recorded_player: int) -> list[str] | None:
        """The model's legal actions (``None`` when they break the rules), checked as a set; ``player`` is the
        model's own current player (``_UNSET`` when it has none), whose action ids ``ModelState`` gives them."""
        call = "get_legal_actions(state)"
        got, trace, mutated = self.call("get_legal_actions", state)
        if got is _UNSET:
            self.raised("legal_actions", call, expected, trace, mutated)
            return None
        try:
            got = values.action_strings(got)
        except values.ValueBreach as e:
            self.fail("legal_actions", call, expected, values.describe(got, 300), str(e), breach=True)
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
            why = "no legal actions at a non-terminal state" if empty else unknown or _set_diff(expected, got)
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
            pairs = values.chance_outcomes(got)
            if not pairs and player == CHANCE:
                raise values.ValueBreach("get_chance_outcomes returned no outcomes at a chance node")
        except values.ValueBreach as e:
            return self.fail("chance_outcomes", call, want, values.describe(got, 300), str(e),
                             breach=player == CHANCE), None
        got_map = dict(pairs)
        if got_map.keys() == expected.keys() and all(abs(got_map[a] - p) <= 1e-9 for a, p in expected.items()):
            return self.run_.ok("chance_outcomes"), list(got_map)
        unknown = self.undecodable(player, list(got_map)) if player == CHANCE else ""
        why = unknown or _set_diff(list(expected), list(got_map)) or "\n".join(
            f"P({a!r}): expected {p}, got {got_map[a]}" for a, p in expected.items() if abs(got_map[a] - p) > 1e-9)
        failed = self.fail("chance_outcomes", call, want, [[a, p] for a, p in pairs], why, breach=bool(unknown))
        return failed, None if unknown else list(got_map)

    def check_transition(self, state: Any, action: str, offered: list[str] | None) -> values.ReadOnlyDict | None:
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
            rewards = values.rewards(got, self.n)
        except values.ValueBreach as e:
            return self.fail("rewards", call, expected, values.describe(got), str(e), breach=True)
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
            got = values.action_strings(got)
        except values.ValueBreach as e:
            return self.fail("termination", call, [], values.describe(got, 300), str(e), breach=False) and False
        if got:
            return self.fail("termination", call, [], got, "\n".join(diff([], got)), breach=False)
        return ok & self.run_.ok("termination")


# ---------------------------------------------------------------------------------------------------
# Closed deck: random play


def random_play_checks(model: WorldModel, *, num_games: int = 10, seed: int = 0, max_steps: int = 10_000,
                       max_failures: int = 20) -> CheckReport:
    """Plays ``num_games`` uniformly random games inside ``model`` through ``ModelState``, which enforces
    the contract (a breach, a mutation or a state that is not JSON fails the game); each must also end
    within ``max_steps``. Every state reached is asked what the replay checks ask of a recorded one: its
    player, every player's observation (the terminal state's too), and its legal actions (chance nodes'
    too) and chance outcomes.

    Randomness: ``np.random.default_rng(seed)`` picks actions and samples chance outcomes.
    """
    rng = np.random.default_rng(seed)
    run = _Run(max_failures)
    passed = 0
    for g in range(num_games):
        problem, trace, history, breach = _random_game(model, rng, max_steps)
        if not problem:
            passed += run.ok("random_play")
            continue
        failure = CheckFailure("random_play", g, len(history), "random play", "terminal", None, problem, trace,
                               tuple(history), breach)
        run.fail(lambda f=failure: f, "random_play", breach=breach)  # type: ignore[misc]
    return run.report(passed, num_games)


def _random_game(model: WorldModel, rng: np.random.Generator, max_steps: int) -> tuple[str, str, list[str], bool]:
    history: list[str] = []
    try:
        state: ModelState = model.new_initial_state()
        for _ in range(max_steps):
            state.observations()  # every state's, the terminal one's too (as the replay checks them)
            if state.is_terminal():
                return "", "", history, False
            legal = state.legal_action_strings()  # at chance nodes too, where they are the possible outcomes
            if state.is_chance_node():
                outcomes = state.chance_outcome_strings()
                probs = np.array([p for _, p in outcomes])
                action = outcomes[rng.choice(len(outcomes), p=probs / probs.sum())][0]
            else:
                action = legal[rng.integers(len(legal))]
            state = state.child_from_string(action)
            history.append(action)
        return f"game did not end within {max_steps} steps", "", history, False
    except ModelContractError as e:
        return f"ModelContractError: {e}", _cause(e), history, True


def _cause(e: ModelContractError) -> str:
    cause = e.__cause__
    return model_traceback(cause) if cause is not None else ""


def check_model(model: WorldModel, *, train: Sequence[Trajectory], test: Sequence[Trajectory] = ()) -> dict[str, CheckReport]:
    """Train and (when given) held-out test reports for one model."""
    out = {"train": run_checks(model, train)}
    if test:
        out["test"] = run_checks(model, test)
    return out


__all__ = ["CHANCE", "run_checks", "random_play_checks", "check_model", "describe_error", "diff", "normalise"]
