"""Unit checks built from trajectories, run on a model; the same functions give the LLM its feedback and gate
a model in pytest.

Open deck: every recorded step is replayed in the model from its initial state, checking the current
player, legal actions, chance outcomes, every player's observation, the transition itself (no exception,
a new state) and the rewards; the terminal state must be terminal. Closed deck (and any model): random
play from the model's initial state must reach a terminal state without breaking the contract.

Every value the model returns goes through the contract's value rules (``cwm.value_rules``), the same functions
``cwm.model.ModelState`` applies in play, and states are handed to the model read-only, so a function
that modifies its input fails here exactly as it would in play. A failure is either a **breach** (the
model broke a rule ``ModelState`` enforces: an exception, a wrong type, an invalid value, a mutation, or,
for a ``WorldModel`` with the game's action codec, an action string that has no action id of the game)
or a mismatch (a valid answer that differs from the ground truth); ``CheckReport.breaches`` counts the
first.
"""

from __future__ import annotations

import marshal
from collections.abc import Callable, Sequence
from typing import Any

from cwm import value_rules
from cwm.checks.random_play import random_play_checks
from cwm.checks.report import Tally, diff
from cwm.checks.step import _UNSET, StepChecks
from cwm.model import (
    MODEL_ERRORS,
    REST,
    WORLD_MODEL_API,
    ActionCodec,
    Beat,
    Guard,
    OpenCodec,
    WorldModel,
    describe_error,
    direct_guard,
)
from cwm.types import (
    CHANCE,
    JSON,
    CheckReport,
    Trajectory,
)

_STR = frozenset({str})


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
    """The canonical JSON form of a value (``cwm.value_rules.canonical``); raises ``ValueError`` when it is not
    JSON."""
    return value_rules.canonical(value)


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
    run = Tally(max_failures_per_type)
    passed = total = 0
    # one timer per trajectory, not one per call, where an overrun ends the whole job (a sandbox child's guard:
    # ``ends_job``); elsewhere an overrun is one failing check and the replay goes on, so each call is guarded
    stretch = getattr(guard, "stretch", None) if getattr(guard, "ends_job", False) else None
    for ti, traj in enumerate(trajectories):
        replay = _Replay(fns, guard, ti, traj, run, codec)
        p, t = replay.run() if stretch is None else stretch(replay.run_stretch)
        passed += p
        total += t
    return run.report(passed, total)


_FAST_NUMBERS = frozenset({int, float})
_FAST_TYPES = ("current_player", "observations", "legal_actions", "transition", "rewards")


class _Replay(StepChecks):
    """Replays one trajectory in the model, recording each check in ``run``.

    Each step first tries a fast path for the common case (exact types, the right answer) and falls
    back to the full check, which applies the value rule and words the failure, whenever it is unsure.
    """

    def run_stretch(self, beat: Beat) -> tuple[int, int]:
        """``run`` as one stretch of the guard (``WorldModel.stretch``): each call announced by ``beat``."""
        self.in_stretch(beat)
        return self.run()

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
            self.si, self.state = si, state
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
                        self.fail_rest(si + 1, remaining, f"trajectory stopped at step {si}; {remaining} later "
                                                          f"steps count as failed")
                    break
                self.history.append(step.action_string)
                self.state = nxt
                ok &= self.check_rewards(nxt, step)
                last_ok = bool(ok)
                passed += last_ok
            if len(self.history) == si:
                self.history.append(step.action_string)
            state = nxt
        else:
            self.si, self.state = len(steps), state
            if steps and not self.check_terminal(state) and last_ok:
                passed -= 1  # the last transition passes only if the state it led to is terminal as recorded
        self.run_.tally(_FAST_TYPES, fast)
        return passed + fast, len(steps)

    def fast_step(self, state: Any, step: Any) -> value_rules.ReadOnlyDict | None:
        """The next state when every check of a decision step passes with exact types and the recorded
        values (nothing is recorded then), else ``None``: the full checks run the step again."""
        fns, timed, beat = self.bound, self.timed, self.beat
        try:
            if timed:
                beat("get_current_player")
            player = fns["get_current_player"](state)
            if timed:
                beat("get_observations")
            obs = fns["get_observations"](state)
            if timed:
                beat("get_legal_actions")
            legal = fns["get_legal_actions"](state)
            if timed:
                beat(REST)  # the checks' own work on the answers, counted against no call
            if not (type(player) is int and player == step.player and player != CHANCE and type(legal) is list
                    and set(map(type, legal)) <= _STR and len(set(legal)) == len(legal) and step.legal_set == set(legal)):
                return None
            if marshal.dumps(obs, 2) != step.observations_marshal or step.action_string not in step.legal_set:
                return None
            if timed:
                beat("apply_action")
            nxt = fns["apply_action"](state, step.action_string)
            if timed:
                beat(REST)
            if nxt is state:
                return None
            nxt = value_rules.state(nxt)
            if timed:
                beat("get_rewards")
            got = fns["get_rewards"](nxt)
            if timed:
                beat(REST)
            if type(got) is list and set(map(type, got)) <= _FAST_NUMBERS and got == list(step.rewards):
                return nxt  # exact numbers equal to the recorded ones (so finite, and one per player)
        except self.passes:  # the stretch's own verdict (a sandbox child's memory limit)
            raise
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



def check_model(model: WorldModel, *, train: Sequence[Trajectory], test: Sequence[Trajectory] = ()) -> dict[str, CheckReport]:
    """Train and (when given) held-out test reports for one model."""
    out = {"train": run_checks(model, train)}
    if test:
        out["test"] = run_checks(model, test)
    return out


__all__ = ["CHANCE", "run_checks", "random_play_checks", "check_model", "describe_error", "diff", "normalise"]
