"""Readable text for prompts: example trajectories, example unit tests drawn from the checks, failing tests.

These functions produce the *contents* of prompt sections; the surrounding words live in the template
files under ``prompts/``.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator, Sequence

import numpy as np

from cwm.types import TERMINAL, CheckFailure, CheckReport, Step, Trajectory

# Order in which example tests are shown (the test types the open-deck checks run).
EXAMPLE_TYPES: tuple[str, ...] = (
    "current_player", "legal_actions", "chance_outcomes", "observations", "transition", "rewards", "termination",
)


def compact(value: object) -> str:
    """JSON on one line (what the trajectories record), for prompts."""
    return json.dumps(value, separators=(", ", ": "), ensure_ascii=False)


# Values longer than this (in characters) are shown in full once and referred to afterwards, or clipped in
# the example tests: bargaining's first chance node alone lists 1,000 instances (about 150k characters).
LONG_VALUE = 2000


def render_trajectories(trajectories: Sequence[Trajectory], *, max_steps: int | None = None) -> str:
    """Every recorded game, step by step: player to act, observations, legal actions, action, rewards.

    A long chance-outcome or legal-action list that repeats an earlier one verbatim is written as a
    reference to where it first appeared, so each such list costs prompt tokens once.
    """
    seen: dict[str, str] = {}
    return "\n\n".join(_render_one(i, t, max_steps, seen) for i, t in enumerate(trajectories))


def _once(text: str, where: str, seen: dict[str, str]) -> str:
    if len(text) <= LONG_VALUE:
        return text
    if text in seen:
        return f"(the same list as at {seen[text]})"
    seen[text] = where
    return text


def _clip(text: str) -> str:
    if len(text) <= LONG_VALUE:
        return text
    return f"{text[:LONG_VALUE]} ... ({len(text)} characters in all; the full value is in the example games)"


def _render_one(index: int, traj: Trajectory, max_steps: int | None, seen: dict[str, str]) -> str:
    head = (f"Game {index + 1} ({traj.policy} play, seed {traj.seed}): {len(traj.steps)} actions, "
            f"final returns {compact(list(traj.returns))}")
    lines = [head]
    steps = traj.steps if max_steps is None else traj.steps[:max_steps]
    for si, step in enumerate(steps):
        who = "chance" if step.player < 0 else f"player {step.player}"
        lines.append(f"  step {si}: current player {step.player} ({who})")
        lines.extend("    " + o for o in _observation_lines(step.observations))
        where = f"game {index + 1}, step {si}"
        if step.chance_outcomes:
            outcomes = [[c.action_string, c.probability] for c in step.chance_outcomes]
            lines.append(f"    chance outcomes: {_once(compact(outcomes), where, seen)}")
        else:
            lines.append(f"    legal actions: {_once(compact(list(step.legal_action_strings)), where, seen)}")
        lines.append(f"    action: {step.action_string!r} -> rewards {compact(list(step.rewards))}")
    if len(steps) < len(traj.steps):
        lines.append(f"  ... {len(traj.steps) - len(steps)} more steps not shown")
    else:
        lines.append(f"  final state: current player {TERMINAL} (terminal)")
        lines.extend("    " + o for o in _observation_lines(traj.final_observations))
    return "\n".join(lines)


def _observation_lines(observations: Sequence[object]) -> list[str]:
    if all(o == observations[0] for o in observations):
        return [f"observation (same for every player): {compact(observations[0])}"]
    return [f"observation of player {p}: {compact(o)}" for p, o in enumerate(observations)]


# ---------------------------------------------------------------------------------------------------
# Example tests


def _instances(trajectories: Sequence[Trajectory]) -> dict[str, list[str]]:
    """Every check the open-deck suite runs, as one readable line each, grouped by test type."""
    out: dict[str, list[str]] = {t: [] for t in EXAMPLE_TYPES}
    for traj in trajectories:
        for kind, text in _traj_instances(traj):
            out[kind].append(text)
    return {k: v for k, v in out.items() if v}


def _traj_instances(traj: Trajectory) -> Iterator[tuple[str, str]]:
    history: list[str] = []
    for step in traj.steps:
        yield from _step_instances(step, history)
        history.append(step.action_string)
    after = f"after actions {compact(history)}"
    yield "current_player", f"{after}: get_current_player(state) == {TERMINAL}"
    yield "observations", f"{after}: get_observations(state) == {compact(list(traj.final_observations))}"
    yield "termination", f"{after}: the game is over, get_legal_actions(state) == []"


def _step_instances(step: Step, history: list[str]) -> Iterator[tuple[str, str]]:
    at = f"after actions {compact(history)}" if history else "at the initial state"
    yield "current_player", f"{at}: get_current_player(state) == {step.player}"
    yield "observations", f"{at}: get_observations(state) == {_clip(compact(list(step.observations)))}"
    if step.chance_outcomes:
        pairs = [[c.action_string, c.probability] for c in step.chance_outcomes]
        yield "chance_outcomes", f"{at}: get_chance_outcomes(state) == {_clip(compact(pairs))} (any order)"
    else:
        legal = _clip(compact(list(step.legal_action_strings)))
        yield "legal_actions", f"{at}: get_legal_actions(state) == {legal} (any order)"
    yield "transition", (f"{at}: apply_action(state, {step.action_string!r}) returns a new JSON-serialisable "
                         f"dict and leaves `state` unchanged")
    yield "rewards", f"{at}: get_rewards(apply_action(state, {step.action_string!r})) == {compact(list(step.rewards))}"


def example_tests(trajectories: Sequence[Trajectory], *, per_type: int = 5) -> tuple[str, dict[str, int]]:
    """Up to ``per_type`` checks of each type, spread evenly over all the checks of that type.

    Deterministic (no randomness): the first and last checks of a type are always among those shown,
    so terminal rewards and the end of the game appear.

    Returns:
      The text (a heading per type, one check per line) and the number shown per type.
    """
    parts, counts = [], {}
    for kind, lines in _instances(trajectories).items():
        picks = sorted(set(np.linspace(0, len(lines) - 1, min(per_type, len(lines))).round().astype(int)))
        counts[kind] = len(picks)
        parts.append(f"### {kind} ({len(picks)} of {len(lines)})\n" + "\n".join(f"- {lines[i]}" for i in picks))
    return "\n\n".join(parts), counts


# ---------------------------------------------------------------------------------------------------
# Failing tests

FailurePicker = Callable[[CheckReport], list[CheckFailure]]


def first_failure_per_type(report: CheckReport) -> list[CheckFailure]:
    """One failed check of each type (the earliest one), in the order of ``EXAMPLE_TYPES``."""
    by_type = report.failed_by_type()
    order = [t for t in EXAMPLE_TYPES if t in by_type] + [t for t in by_type if t not in EXAMPLE_TYPES]
    return [by_type[t][0] for t in order]


def render_failures(report: CheckReport, failures: Sequence[CheckFailure]) -> str:
    """The failing-tests section: the report's score line, a load/limit error if any, each failure."""
    parts = [report.summary()]
    if report.error and not failures:
        parts.append(f"The module could not be checked: {report.error}")
    parts.extend(f.render() for f in failures)
    return "\n\n".join(parts)


__all__ = [
    "EXAMPLE_TYPES",
    "FailurePicker",
    "compact",
    "example_tests",
    "first_failure_per_type",
    "render_failures",
    "render_trajectories",
]
