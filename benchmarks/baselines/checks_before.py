"""The check suite as it was before the contract values module (commit a93943c), kept unchanged as the baseline
that benchmarks/bench_checks.py measures the current one against. Not used by the library.

a model in pytest.

Open deck: every recorded step is replayed in the model from its initial state, checking the current
player, legal actions, chance outcomes, every player's observation, the transition itself (no exception,
a new JSON-serialisable state, input not mutated) and the rewards; the terminal state must be terminal.
Closed deck (and any model): random play from the model's initial state must reach a terminal state
without breaking the contract.
"""

from __future__ import annotations

import json
import traceback as tb
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from cwm.model import MODEL_ERRORS, WORLD_MODEL_API, Guard, ModelState, WorldModel, direct_guard
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


class _Run:
    """Accumulates check outcomes for one report."""

    def __init__(self, max_failures_per_type: int):
        self.stats: dict[str, list[int]] = {}
        self.failures: list[CheckFailure] = []
        self.shown: dict[str, int] = {}
        self.limit = max_failures_per_type

    def record(self, ok: bool, failure: Callable[[], CheckFailure], test_type: str) -> bool:
        s = self.stats.setdefault(test_type, [0, 0])
        s[1] += 1
        if ok:
            s[0] += 1
        elif self.shown.get(test_type, 0) < self.limit:
            self.shown[test_type] = self.shown.get(test_type, 0) + 1
            self.failures.append(failure())
        return ok

    def report(self, transitions_passed: int, transitions_total: int) -> CheckReport:
        return CheckReport(
            by_type={k: TypeStats(p, t) for k, (p, t) in self.stats.items()},
            transitions_passed=transitions_passed,
            transitions_total=transitions_total,
            failures=tuple(self.failures),
        )


def _functions(model: Any) -> tuple[dict[str, Callable[..., Any]], Guard]:
    if isinstance(model, WorldModel):
        return model._fns, model.guard
    return {f.name: getattr(model, f.name) for f in WORLD_MODEL_API}, direct_guard


def normalise(value: Any) -> JSON:
    """The JSON form of a value (tuples become lists); raises ``TypeError`` when it is not JSON-able."""
    return json.loads(json.dumps(value, allow_nan=False))


def diff(expected: JSON, got: JSON, *, path: str = "", limit: int = 6) -> list[str]:
    """Readable differences between two JSON values, at most ``limit`` lines, each naming where."""
    out: list[str] = []
    _diff(expected, got, path or "value", out, limit)
    return out


def _diff(expected: JSON, got: JSON, path: str, out: list[str], limit: int) -> None:
    if len(out) >= limit or expected == got:
        return
    if isinstance(expected, dict) and isinstance(got, dict):
        for key in expected.keys() - got.keys():
            out.append(f"{path}: missing key {key!r}")
        for key in got.keys() - expected.keys():
            out.append(f"{path}: unexpected key {key!r}")
        for key in expected.keys() & got.keys():
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
        out.append(f"{path}: expected {expected!r:.200}, got {got!r:.200}")
    del out[limit:]


def _set_diff(expected: Sequence[str], got: Sequence[str]) -> str:
    missing = [a for a in expected if a not in got]
    extra = [a for a in got if a not in expected]
    parts = []
    if missing:
        parts.append(f"missing {missing[:10]}")
    if extra:
        parts.append(f"not legal but returned {extra[:10]}")
    if not parts and len(expected) != len(got):
        parts.append(f"duplicates: expected {len(expected)} actions, got {len(got)}")
    return "; ".join(parts)


def run_checks(model: Any, trajectories: Sequence[Trajectory], *, max_failures_per_type: int = 20) -> CheckReport:
    """Replays each trajectory in ``model`` and checks every step against the ground truth.

    Args:
      model: a ``WorldModel`` or any object/module with the contract functions.
      trajectories: open-deck trajectories of the ground truth.
      max_failures_per_type: failures kept in the report per test type (all are counted).

    Returns:
      A ``CheckReport``; a model that raises is scored as failing, never crashes the caller.
    """
    fns, guard = _functions(model)
    run = _Run(max_failures_per_type)
    passed = total = 0
    for ti, traj in enumerate(trajectories):
        p, t = _check_trajectory(fns, guard, ti, traj, run)
        passed += p
        total += t
    return run.report(passed, total)


def _call(guard: Guard, fns: dict[str, Callable[..., Any]], name: str, *args: Any) -> tuple[Any, str]:
    try:
        return guard(fns[name], *args), ""
    except MODEL_ERRORS:  # a model bug (exit() and KeyboardInterrupt included) becomes a failing check
        return _UNSET, tb.format_exc(limit=-6)


def _check_trajectory(fns: dict, guard: Guard, ti: int, traj: Trajectory, run: _Run) -> tuple[int, int]:
    state, err = _call(guard, fns, "get_initial_state")
    history: list[str] = []

    def fail(kind: str, step: int, call: str, expected: JSON, got: JSON, d: str, trace: str = "") -> CheckFailure:
        return CheckFailure(kind, ti, step, call, expected, got, d, trace, tuple(history))

    if state is _UNSET:
        run.record(False, lambda: fail("transition", 0, "get_initial_state()", None, None, "raised", err), "transition")
        return 0, len(traj.steps)
    passed = 0
    n = len(traj.steps)
    for si, step in enumerate(traj.steps):
        ok = _check_state(fns, guard, state, step.player, step.observations, si, run, fail)
        ok &= _check_legal(fns, guard, state, list(step.legal_action_strings), si, run, fail)
        if step.player == CHANCE:
            ok &= _check_chance(fns, guard, state, step, si, run, fail)
        nxt, ok_t = _check_transition(fns, guard, state, step.action_string, si, run, fail)
        if not ok_t:
            remaining = n - si - 1
            if remaining:
                run.stats["transition"][1] += remaining
                run.failures.append(fail("transition", si + 1, "(not reached)", None, None,
                                         f"trajectory stopped at step {si}; {remaining} later steps count as failed"))
            return passed, n
        history.append(step.action_string)
        rewards, err = _call(guard, fns, "get_rewards", nxt)
        ok &= _compare(run, "rewards", si, "get_rewards(next_state)", list(step.rewards), rewards, err, fail,
                       numeric=True)
        if si == n - 1:
            ok &= _check_terminal(fns, guard, nxt, traj, n, run, fail)
        passed += bool(ok)
        state = nxt
    return passed, n


def _compare(run: _Run, kind: str, si: int, call: str, expected: JSON, got: Any, err: str, fail: Callable,
             *, numeric: bool = False) -> bool:
    if got is _UNSET:
        return run.record(False, lambda: fail(kind, si, call, expected, None, "raised an exception", err), kind)
    try:
        norm = normalise(got)
    except (TypeError, ValueError) as e:
        why = f"not JSON-serialisable: {e}"
        return run.record(False, lambda: fail(kind, si, call, expected, repr(got)[:300], why), kind)
    if numeric:
        ok = isinstance(norm, list) and len(norm) == len(expected) and all(
            isinstance(g, (int, float)) and not isinstance(g, bool) and abs(g - e) <= 1e-9
            for g, e in zip(norm, expected))
    else:
        ok = norm == expected
    return run.record(ok, lambda: fail(kind, si, call, expected, norm, "\n".join(diff(expected, norm))), kind)


def _check_state(fns: dict, guard: Guard, state: Any, player: int, observations: Sequence[JSON], si: int,
                 run: _Run, fail: Callable) -> bool:
    got, err = _call(guard, fns, "get_current_player", state)
    ok = _compare(run, "current_player", si, "get_current_player(state)", player, got, err, fail)
    got, err = _call(guard, fns, "get_observations", state)
    return ok & _compare(run, "observations", si, "get_observations(state)", list(observations), got, err, fail)


def _check_legal(fns: dict, guard: Guard, state: Any, expected: list[str], si: int, run: _Run,
                 fail: Callable) -> bool:
    got, err = _call(guard, fns, "get_legal_actions", state)
    call = "get_legal_actions(state)"
    if got is _UNSET or not isinstance(got, list):
        return _compare(run, "legal_actions", si, call, expected, got, err or "not a list", fail)
    ok = sorted(map(str, got)) == sorted(expected) and all(isinstance(a, str) for a in got)
    return run.record(ok, lambda: fail("legal_actions", si, call, expected, got, _set_diff(expected, got)),
                      "legal_actions")


def _check_chance(fns: dict, guard: Guard, state: Any, step: Any, si: int, run: _Run, fail: Callable) -> bool:
    expected = {c.action_string: c.probability for c in step.chance_outcomes}
    got, err = _call(guard, fns, "get_chance_outcomes", state)
    call = "get_chance_outcomes(state)"
    try:
        got_map = {str(a): float(p) for a, p in got}
        ok = got_map.keys() == expected.keys() and all(abs(got_map[a] - p) <= 1e-9 for a, p in expected.items())
        d = _set_diff(list(expected), list(got_map)) or "\n".join(
            f"P({a!r}): expected {p}, got {got_map[a]}" for a, p in expected.items() if abs(got_map[a] - p) > 1e-9)
        shown: JSON = [[a, p] for a, p in got_map.items()]
    except Exception as e:  # anything that is not (action, probability) pairs is a failed check
        ok, d, shown = False, f"not a list of (action, probability) pairs: {type(e).__name__}: {e}", repr(got)[:300]
    exp_pairs = [[a, p] for a, p in expected.items()]
    return run.record(ok, lambda: fail("chance_outcomes", si, call, exp_pairs, shown, d, err), "chance_outcomes")


def _check_transition(fns: dict, guard: Guard, state: Any, action: str, si: int, run: _Run,
                      fail: Callable) -> tuple[Any, bool]:
    call = f"apply_action(state, {action!r})"
    before = json.dumps(state, sort_keys=True, default=repr)
    nxt, err = _call(guard, fns, "apply_action", state, action)
    problem = ""
    if nxt is _UNSET:
        problem = "raised an exception"
    elif nxt is state:
        problem = "returned the input state object; apply_action must return a new state"
    elif json.dumps(state, sort_keys=True, default=repr) != before:
        problem = "mutated its input state (the contract forbids it)"
    else:
        try:
            normalise(nxt)
        except (TypeError, ValueError) as e:
            problem = f"returned a state that is not JSON-serialisable: {e}"
    ok = run.record(not problem, lambda: fail("transition", si, call, None, None, problem, err), "transition")
    return nxt, ok


def _check_terminal(fns: dict, guard: Guard, state: Any, traj: Trajectory, si: int, run: _Run,
                    fail: Callable) -> bool:
    ok = _check_state(fns, guard, state, TERMINAL, traj.final_observations, si, run, fail)
    got, err = _call(guard, fns, "get_legal_actions", state)
    return ok & _compare(run, "termination", si, "get_legal_actions(terminal_state)", [], got, err, fail)


# ---------------------------------------------------------------------------------------------------
# Closed deck: random play


def random_play_checks(model: WorldModel, *, num_games: int = 10, seed: int = 0, max_steps: int = 10_000,
                       max_failures: int = 20) -> CheckReport:
    """Plays ``num_games`` uniformly random games inside ``model``; each must terminate within ``max_steps``
    without breaking the contract (the wrapper enforces it) and with JSON-serialisable, unmutated states.

    Randomness: ``np.random.default_rng(seed)`` picks actions and samples chance outcomes.
    """
    rng = np.random.default_rng(seed)
    run = _Run(max_failures)
    passed = 0
    for g in range(num_games):
        problem, trace, history = _random_game(model, rng, max_steps)
        failure = CheckFailure("random_play", g, len(history), "random play", "terminal", None, problem, trace,
                               tuple(history))
        ok = run.record(not problem, lambda f=failure: f, "random_play")  # type: ignore[misc]
        passed += ok
    return run.report(passed, num_games)


def _random_game(model: WorldModel, rng: np.random.Generator, max_steps: int) -> tuple[str, str, list[str]]:
    history: list[str] = []
    try:
        state: ModelState = model.new_initial_state()
        for _ in range(max_steps):
            if state.is_terminal():
                return "", "", history
            for player in range(state.num_players()):
                state.observation(player)
            if state.is_chance_node():
                outcomes = state.chance_outcome_strings()
                probs = np.array([p for _, p in outcomes])
                action = outcomes[rng.choice(len(outcomes), p=probs / probs.sum())][0]
            else:
                legal = state.legal_action_strings()
                action = legal[rng.integers(len(legal))]
            before = json.dumps(state.raw, sort_keys=True)
            nxt = state.child_from_string(action)
            if json.dumps(state.raw, sort_keys=True) != before:
                return f"apply_action(state, {action!r}) mutated its input state", "", history
            normalise(nxt.raw)
            history.append(action)
            state = nxt
        return f"game did not end within {max_steps} steps", "", history
    except (ModelContractError, TypeError, ValueError) as e:
        return f"{type(e).__name__}: {e}", tb.format_exc(limit=-6), history


def check_model(model: WorldModel, *, train: Sequence[Trajectory], test: Sequence[Trajectory] = ()) -> dict[str, CheckReport]:
    """Train and (when given) held-out test reports for one model."""
    out = {"train": run_checks(model, train)}
    if test:
        out["test"] = run_checks(model, test)
    return out


__all__ = ["CHANCE", "run_checks", "random_play_checks", "check_model", "diff", "normalise"]
