"""Readable text for prompts: example trajectories, example unit tests drawn from the checks, failing tests.

These functions produce the *contents* of prompt sections; the surrounding words live in the template
files under ``prompts/``, and so does the wording of each example test, of the clipped-value and
repeated-list notes, and of the load-error line (``TEMPLATES``). What stays here is data formatting: the
field labels of the step-by-step game listing ("step 3: current player 0", "legal actions: [...]").
"""

from __future__ import annotations

import dataclasses
import functools
import json
import re
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

import prompts
from cwm.games import event_kinds
from cwm.types import FAILURE_FIELDS, TERMINAL, CheckFailure, CheckReport, Trajectory, UsageError

# Order in which example tests are shown (the test types the open-deck checks run).
EXAMPLE_TYPES: tuple[str, ...] = (
    "current_player", "legal_actions", "chance_outcomes", "observations", "transition", "rewards", "termination",
)


def _fragment(name: str, **values: object) -> str:
    """A prompt fragment: template ``name`` (under ``prompts/``) rendered, without its final newline."""
    return prompts.render(name, **values).rstrip("\n")


def compact(value: object) -> str:
    """JSON on one line (what the trajectories record), for prompts."""
    return json.dumps(value, separators=(", ", ": "), ensure_ascii=False)


# Values longer than this (in characters) are shown in full once and referred to afterwards, or clipped in
# the example tests: bargaining's first chance node alone lists 1,000 instances (about 150k characters).
LONG_VALUE = 2000
# A legal-action list longer than this that repeats an earlier one is referred to as well: bargaining offers
# the same 16 to 36 splits and `Agree` (665 to 1,485 characters) at nearly every step, a third of its listing
# when written out each time. Shorter lists (a board's free cells) read better in place.
LONG_ACTIONS = 500
# A list longer than this is data the game needs and no rules text gives (bargaining's 1,000 instances,
# 159k characters): equally likely chance outcomes that differ only in their numbers are then written as one
# template and a table of those numbers (bargaining's list: 19k characters instead of 159k).
DATA_VALUE = 10_000


# The game listing of an initial prompt shows games while it stays within this many characters, a data list
# included (it costs prompt tokens like any text). The checks run on every step of every game all the same.
# The five training games of most registered games fit whole (connect four's: 65k characters; bargaining's
# 60k, 19k of them its 1,000 instances as a table); backgammon's are 680k, gin rummy's 1.4M and hand of
# war's 116k: there the games listed are chosen to show every kind of event (``cwm.games.event_kinds``).
EXAMPLE_CHARS = 70_000

Window = tuple[int, int]  # the steps [start, stop) of a game a listing shows; (0, 0): none


@dataclasses.dataclass(frozen=True)
class Listing:
    """The game listing of a prompt and how much of each game it shows."""

    text: str
    shown: tuple[Window, ...]  # the steps listed of each game


def listing(trajectories: Sequence[Trajectory], *, max_steps: int | None = None,
            max_chars: int | None = EXAMPLE_CHARS) -> Listing:
    """Recorded games, step by step: player to act, observations, legal actions, action, rewards.

    Each game is cut after ``max_steps`` steps (``None``: none cut). Within ``max_chars`` characters
    (``None``: no limit) the games listed are chosen to show every kind of event the games hold (each kind
    of action and of chance outcome, each way a game ends and each sign pattern of its returns:
    ``cwm.games.event_kinds``): whole games first, by ``event_kinds.greedy_cover`` with a game's length as its
    cost; then, for a kind no whole game that fits shows, the part of a game that leads up to it (its end
    included for a kind of ending; each game holding such kinds may take an equal share of the room
    left); then the other whole games that still fit, in order. At least one step
    is listed. Games keep their numbers and are listed in order; a closing line names the games left out.
    A long chance-outcome or legal-action list that repeats an earlier one verbatim is written as a
    reference to where it first appeared, so each such list costs prompt tokens once. Deterministic.

    Raises:
      UsageError: there are games and none has a step (each is over at its initial state).
    """
    games = [_Game(t) for t in trajectories]
    if games and not any(g.steps for g in games):
        raise UsageError(f"no step to list: each of the {len(games)} games ends at its initial state (0 actions)")
    limits = [len(g.steps) if max_steps is None else min(max_steps, len(g.steps)) for g in games]
    windows = _choose(games, limits, max_chars)
    seen = _Shown()
    blocks = [_render_one(i, g, windows[i], seen) for i, g in enumerate(games) if windows[i] != (0, 0)]
    left = [i for i, w in enumerate(windows) if w == (0, 0)]
    if left:
        actions = sum(len(games[i].steps) for i in left)
        blocks.append(_fragment("sections/games_not_shown.md", games=_game_numbers(left),
                                actions=f"{actions} action{'' if actions == 1 else 's'}"))
    return Listing("\n\n".join(blocks), tuple(windows))


def render_trajectories(trajectories: Sequence[Trajectory], *, max_steps: int | None = None,
                        max_chars: int | None = EXAMPLE_CHARS) -> str:
    """The text of ``listing(trajectories, max_steps=max_steps, max_chars=max_chars)``."""
    return listing(trajectories, max_steps=max_steps, max_chars=max_chars).text


def _game_numbers(indices: Sequence[int]) -> str:
    """``game 3``, ``games 2 and 4``, ``games 2, 4 and 5``, ``games 2 to 5`` (numbers from 1)."""
    nums = [i + 1 for i in indices]
    if len(nums) == 1:
        return f"game {nums[0]}"
    if nums == list(range(nums[0], nums[-1] + 1)) and len(nums) > 2:
        return f"games {nums[0]} to {nums[-1]}"
    return "games " + ", ".join(map(str, nums[:-1])) + f" and {nums[-1]}"


class _Game:
    """A game being listed, with what choosing its window asks again and again worked out once: the kinds of
    event at each step (``event_kinds.kinds_at``), the first step of each kind, and each step's lines that do
    not depend on what the listing wrote before (its observations, its action, its list's one-line JSON)."""

    def __init__(self, traj: Trajectory) -> None:
        self.traj = traj
        self.steps = traj.steps
        self.kinds_at = event_kinds.kinds_at(traj)
        self.first_of: dict[str, int] = {}  # kind -> the first index of kinds_at showing it
        for k, found in enumerate(self.kinds_at):
            for kind in found:
                self.first_of.setdefault(kind, k)
        self._steps: dict[int, tuple[list[str], str, str]] = {}
        self._final: list[str] | None = None

    def step_text(self, si: int) -> tuple[list[str], str, str]:
        """Step ``si``'s lines before its list (player, observations), its list as one-line JSON (chance
        outcomes with their probabilities, else the legal actions), and its action line."""
        if si not in self._steps:
            step = self.steps[si]
            who = "chance" if step.player < 0 else f"player {step.player}"
            head = [f"  step {si}: current player {step.player} ({who})",
                    *("    " + o for o in _observation_lines(step.observations))]
            listed = (compact([[c.action_string, c.probability] for c in step.chance_outcomes])
                      if step.chance_outcomes else compact(list(step.legal_action_strings)))
            action = f"    action: {step.action_string!r} -> rewards {compact(list(step.rewards))}"
            self._steps[si] = (head, listed, action)
        return self._steps[si]

    def final_lines(self) -> list[str]:
        if self._final is None:
            self._final = ["    " + o for o in _observation_lines(self.traj.final_observations)]
        return self._final


def _window_kinds(game: _Game, window: Window) -> set[str]:
    """The kinds of event the steps of ``window`` show, and the game's end when the window reaches it."""
    at = game.kinds_at
    start, stop = window
    found = set().union(*at[start:stop])
    return found | at[-1] if stop == len(game.steps) else found


def _choose(games: Sequence[_Game], limits: Sequence[int], max_chars: int | None) -> list[Window]:
    """The window of each game a listing shows (see ``listing``)."""
    windows: list[Window] = [(0, lim) for lim in limits]
    if max_chars is None:
        return windows
    cost = [len(_render_one(i, g, windows[i], _Shown())) + 2 for i, g in enumerate(games)]
    items = [_window_kinds(g, windows[i]) for i, g in enumerate(games)]
    chosen = set(event_kinds.greedy_cover(items, cost=lambda i: cost[i], budget=max_chars))
    used = sum(cost[i] for i in chosen)
    out: list[Window] = [w if i in chosen else (0, 0) for i, w in enumerate(windows)]
    covered = set().union(*(items[i] for i in chosen))
    while holders := [i for i, w in enumerate(out) if w == (0, 0) and items[i] - covered]:
        # each game that holds a kind not shown yet may take an equal share of the room left
        room = max_chars - used
        part = _best_part(games, limits, out, covered, room // len(holders)) or _best_part(
            games, limits, out, covered, room)
        if part is None:
            break
        i, window, length = part
        out[i], used = window, used + length
        covered |= _window_kinds(games[i], window)
    # then whole games that still fit, in order, and earlier steps of the parts listed: measured as listed
    # (a long list written once and referred to later costs less than each game alone)
    for i in range(len(games)):
        if out[i] == (0, 0) and _length(games, [windows[i] if j == i else w for j, w in enumerate(out)]) <= max_chars:
            out[i] = windows[i]
    for i, (start, stop) in enumerate(out):
        if start > 0:
            out[i] = (_earliest(functools.partial(_fits_from, games, out, i, stop, max_chars), start), stop)
    if all(w == (0, 0) for w in out) and games:  # nothing fits: the first steps of the first game that has
        first = next(i for i, g in enumerate(games) if g.steps)  # one (one at least); listing checked there is
        out[first] = (0, _steps_that_fit(first, games[first], max(limits[first], 1), max_chars))
    return out


def _fits_from(games: Sequence[_Game], windows: Sequence[Window], index: int, stop: int, max_chars: int,
               first: int) -> bool:
    """Whether the listing fits in ``max_chars`` with game ``index`` listed from step ``first`` to ``stop``."""
    return _length(games, [(first, stop) if j == index else w for j, w in enumerate(windows)]) <= max_chars


def _length(games: Sequence[_Game], windows: Sequence[Window]) -> int:
    """The characters of the listing of ``windows`` (the closing line aside)."""
    seen = _Shown()
    return sum(len(_render_one(i, g, w, seen)) + 2 for i, (g, w) in enumerate(zip(games, windows)) if w != (0, 0))


def _earliest(fits: Callable[[int], bool], start: int) -> int:
    """The smallest first step, at most ``start`` (which fits), for which ``fits`` holds (bisection: a part
    that starts earlier is longer)."""
    low, high = 0, start
    while low < high:
        mid = (low + high) // 2
        if fits(mid):
            high = mid
        else:
            low = mid + 1
    return low


def _best_part(games: Sequence[_Game], limits: Sequence[int], out: Sequence[Window], covered: set[str],
               room: int) -> tuple[int, Window, int] | None:
    """The part of an unlisted game (game, window, length) that shows the most kinds not yet ``covered``
    within ``room`` characters: the steps up to the first event of an uncovered kind, as many earlier steps
    as fit; ``None`` where none adds a kind."""
    best: tuple[int, int, Window, int] | None = None  # (gain, -game, window, length)
    for i, game in enumerate(games):
        if out[i] != (0, 0):
            continue
        every = game.kinds_at
        at = every[:limits[i]] + (every[-1:] if limits[i] == len(game.steps) else [])  # the end, when shown
        for kind in sorted(set().union(*at) - covered):
            # where the kind first shows among ``at``: a step's index, or the end's (listed after the steps)
            where = game.first_of[kind] if game.first_of[kind] < limits[i] else len(at) - 1
            stop = min(where + 1, limits[i])  # an end kind: the last step, and the final state with it
            start = _first_start_that_fits(i, game, stop, room)
            if start is None:
                continue
            window = (start, stop)
            gain = len(_window_kinds(game, window) - covered)
            length = len(_render_one(i, game, window, _Shown())) + 2
            if best is None or (gain, -i) > best[:2]:
                best = (gain, -i, window, length)
    return None if best is None else (-best[1], best[2], best[3])


def _first_start_that_fits(index: int, game: _Game, stop: int, room: int) -> int | None:
    """The earliest first step of a part of a game ending at ``stop`` whose listing fits in ``room``
    characters (``None``: not even the one step before ``stop`` fits)."""
    def fits(first: int) -> bool:
        return len(_render_one(index, game, (first, stop), _Shown())) + 2 <= room

    return None if stop < 1 or not fits(stop - 1) else _earliest(fits, stop - 1)


def _steps_that_fit(index: int, game: _Game, steps: int, max_chars: int) -> int:
    """The most steps of a game (at least one, at most ``steps``) whose listing fits in ``max_chars``."""
    low, high = 1, steps
    while low < high:
        mid = (low + high + 1) // 2
        if len(_render_one(index, game, (0, mid), _Shown())) <= max_chars:
            low = mid
        else:
            high = mid - 1
    return low


@dataclasses.dataclass
class _Shown:
    """The long lists a listing has written in full so far: each text and where it first appeared, and the
    long chance-outcome lists (where, outcome strings) a later, shorter one can be written against."""

    texts: dict[str, str] = dataclasses.field(default_factory=dict)
    outcomes: list[tuple[str, list[str]]] = dataclasses.field(default_factory=list)
    references: dict[str, str] = dataclasses.field(default_factory=dict)  # where -> its reference, as written

    def copy(self) -> _Shown:
        return _Shown(dict(self.texts), list(self.outcomes), dict(self.references))

    def reference(self, where: str) -> str:
        """The words that refer to the list first written at ``where`` (rendered once per listing)."""
        if where not in self.references:
            self.references[where] = _fragment("sections/same_list.md", where=where)
        return self.references[where]


def _once(text: str, where: str, seen: _Shown, written: str | None = None, *, long: int = LONG_VALUE) -> str:
    """``text``, or the first time a long one (over ``long`` characters) appears ``written`` in its place (its
    table form), or, once written, a reference to where it first appeared."""
    if len(text) <= long:
        return text
    if text in seen.texts:
        return seen.reference(seen.texts[text])
    seen.texts[text] = where
    return text if written is None else written


_NUMBER = re.compile(r"\d+")


def _outcome_table(names: Sequence[str], probability: float) -> str | None:
    """Equally likely outcomes whose strings differ only in their numbers, as one template (the numbers that
    vary replaced by ``#``) and a table of those numbers, one row per outcome; ``None`` where the strings do
    not share one such template or one contains ``#``."""
    if len(names) < 2 or any("#" in n for n in names):
        return None
    skeletons = {tuple(_NUMBER.split(n)) for n in names}
    if len(skeletons) != 1:
        return None
    parts = next(iter(skeletons))
    numbers = [_NUMBER.findall(n) for n in names]
    varies = [len({row[i] for row in numbers}) > 1 for i in range(len(parts) - 1)]
    template = parts[0] + "".join(("#" if v else numbers[0][i]) + parts[i + 1] for i, v in enumerate(varies))
    rows = "; ".join(" ".join(x for x, v in zip(row, varies) if v) for row in numbers)
    return _fragment("sections/outcome_table.md", count=len(names), probability=probability,
                     template=compact(template), rows=rows)


def _outcomes_once(outcomes: Sequence[Any], where: str, seen: _Shown, text: str) -> str:
    """A chance-outcome list as ``_once`` writes it, or, for equally likely outcomes that are those of a long
    list written in full earlier with some taken out (a deck being dealt), as that list and the outcomes
    missing from it, where that is shorter; ``text`` is the list as one-line JSON."""
    if text in seen.texts:
        return _once(text, where, seen)
    names = [c.action_string for c in outcomes]
    if len({c.probability for c in outcomes}) == 1:
        present = set(names)
        for earlier, full in reversed(seen.outcomes):
            if set(full) > present and [n for n in full if n in present] == names:
                shorter = _fragment("sections/fewer_outcomes.md", where=earlier,
                                    removed=compact([n for n in full if n not in present]), count=len(names),
                                    probability=outcomes[0].probability)
                if len(shorter) < len(text):
                    return shorter
    if len(text) > LONG_VALUE:
        seen.outcomes.append((where, names))
    table = None
    if len(text) > DATA_VALUE and len({c.probability for c in outcomes}) == 1:
        table = _outcome_table(names, outcomes[0].probability)
    return _once(text, where, seen, table if table is not None and len(table) < len(text) else None)


def _clip(text: str) -> str:
    if len(text) <= LONG_VALUE:
        return text
    return _fragment(f"{_TEST_TEMPLATES}/clipped.md", head=text[:LONG_VALUE], length=len(text))


def _render_one(index: int, game: _Game, window: Window, seen: _Shown) -> str:
    traj = game.traj
    head = (f"Game {index + 1} ({traj.policy} play, seed {traj.seed}): {len(traj.steps)} actions, "
            f"final returns {compact(list(traj.returns))}")
    lines = [head]
    first, stop = window
    if first:
        lines.append(f"  ... {first} earlier steps not shown")
    for si in range(first, stop):
        step = traj.steps[si]
        before, listed, action = game.step_text(si)
        lines.extend(before)
        where = f"game {index + 1}, step {si}"
        if step.chance_outcomes:
            lines.append(f"    chance outcomes: {_outcomes_once(step.chance_outcomes, where, seen, listed)}")
        else:
            lines.append(f"    legal actions: {_once(listed, where, seen, long=LONG_ACTIONS)}")
        lines.append(action)
    if stop < len(traj.steps):
        lines.append(f"  ... {len(traj.steps) - stop} more steps not shown")
    else:
        lines.append(f"  final state: current player {TERMINAL} (terminal)")
        lines.extend(game.final_lines())
    return "\n".join(lines)


def _observation_lines(observations: Sequence[object]) -> list[str]:
    if all(o == observations[0] for o in observations):
        return [f"observation (same for every player): {compact(observations[0])}"]
    return [f"observation of player {p}: {compact(o)}" for p, o in enumerate(observations)]


# ---------------------------------------------------------------------------------------------------
# Example tests

# The wording of each check is a template under prompts/sections/example_test/, named after its type.
_TEST_TEMPLATES = "sections/example_test"
# Every fragment template these functions render (their hashes go into a run's record).
TEMPLATES: tuple[str, ...] = (
    *(f"{_TEST_TEMPLATES}/{kind}.md" for kind in EXAMPLE_TYPES),
    *(f"{_TEST_TEMPLATES}/{name}.md" for name in ("at_initial", "after_actions", "in_game", "at_end", "group",
                                                  "clipped")),
    "sections/same_list.md", "sections/fewer_outcomes.md", "sections/outcome_table.md",
    "sections/games_not_shown.md",
    "sections/check_error.md", "sections/failures_not_shown.md",
)


@dataclasses.dataclass(frozen=True)
class _FinalState:
    """What the checks compare at the end of a game (shaped like the ``Step`` fields they read)."""

    player: int
    observations: Sequence[object]


# Test type -> the template fields of one check at a step (or at the final state).
_FIELDS: dict[str, Callable[[Any], dict[str, str]]] = {
    "current_player": lambda s: {"player": str(s.player)},
    "observations": lambda s: {"observations": _clip(compact(list(s.observations)))},
    "legal_actions": lambda s: {"actions": _clip(compact(list(s.legal_action_strings)))},
    "chance_outcomes": lambda s: {"outcomes": _clip(compact([[c.action_string, c.probability]
                                                             for c in s.chance_outcomes]))},
    "transition": lambda s: {"action": repr(s.action_string)},
    "rewards": lambda s: {"action": repr(s.action_string), "rewards": compact(list(s.rewards))},
    "termination": lambda s: {},
}


def _instances(trajectories: Sequence[Trajectory]) -> dict[str, list[tuple[int, Trajectory, int]]]:
    """Every check the open-deck suite runs, as (game index, game, actions played before it), by test type."""
    out: dict[str, list[tuple[int, Trajectory, int]]] = {t: [] for t in EXAMPLE_TYPES}
    for ti, traj in enumerate(trajectories):
        for at, step in enumerate(traj.steps):
            # checks.py checks get_legal_actions at chance steps too (the outcome strings)
            kinds = ["current_player", "observations", "legal_actions", "transition", "rewards"]
            kinds += ["chance_outcomes"] if step.chance_outcomes else []
            for kind in kinds:
                out[kind].append((ti, traj, at))
        for kind in ("current_player", "observations", "termination"):
            out[kind].append((ti, traj, len(traj.steps)))
    return {k: v for k, v in out.items() if v}


def _listed(traj: Trajectory, at: int, shown: Window) -> bool:
    """Whether the state after ``at`` actions of a game is one the listing shows (the steps ``shown`` of the
    game listed, and its final state when they reach the end); the initial state needs no listing."""
    start, stop = shown
    return at == 0 or start <= at < stop or (at == stop == len(traj.steps))


def _where(ti: int, traj: Trajectory, at: int, shown: Window) -> str:
    """Where a check looks, as the prompt says it: a step of a game shown above by its number (the step's
    line shows the state; the steps ``shown`` of the game are listed); a state the listing leaves out by the
    actions that reach it."""
    if at == 0:
        return _fragment(f"{_TEST_TEMPLATES}/at_initial.md")
    if _listed(traj, at, shown):
        if at == len(traj.steps):
            return _fragment(f"{_TEST_TEMPLATES}/at_end.md", game=ti + 1)
        return _fragment(f"{_TEST_TEMPLATES}/in_game.md", game=ti + 1, step=at)
    return _fragment(f"{_TEST_TEMPLATES}/after_actions.md",
                     history=compact([s.action_string for s in traj.steps[:at]]))


def _render_check(kind: str, ti: int, traj: Trajectory, at: int, *, shown: Window) -> str:
    """One check as a line of the prompt."""
    state = traj.steps[at] if at < len(traj.steps) else _FinalState(TERMINAL, traj.final_observations)
    return _fragment(f"{_TEST_TEMPLATES}/{kind}.md", at=_where(ti, traj, at, shown), **_FIELDS[kind](state))


def example_tests(trajectories: Sequence[Trajectory], *, per_type: int = 5, max_steps: int | None = None,
                  max_chars: int | None = EXAMPLE_CHARS, prompt_listing: Listing | None = None,
                  ) -> tuple[str, dict[str, int]]:
    """Up to ``per_type`` checks of each type, spread evenly over all the checks of that type.

    Deterministic (no randomness): the first and last checks of a type are always among those shown,
    so terminal rewards and the end of the game appear; a check that reads the same as another (every
    game's first move from the initial state) is shown once. At a chance step both the chance outcomes and
    the legal actions (the outcome strings) are checked, so both appear. A check at a step that
    ``listing(trajectories, max_steps=max_steps, max_chars=max_chars)`` shows names the game and the step
    (the step's lines show the state and the actions that led there). The checks shown are drawn from the
    states the listing shows; of a type it shows none of (a long game's end), the one with the fewest
    actions before it is shown, listing them from the start. ``prompt_listing``: that listing, when the caller has
    it already (it is not worked out again).

    Returns:
      The text (a heading per type, one check per line) and the number shown per type.
    """
    parts, counts = [], {}
    if prompt_listing is None:  # an empty listing given is used as it is
        prompt_listing = listing(trajectories, max_steps=max_steps, max_chars=max_chars)
    shown = prompt_listing.shown
    for kind, checks in _instances(trajectories).items():
        # drawn from the states the listing shows; a check elsewhere spells out every action before it (a
        # long game's are hundreds), so where none of a type is listed the one with the fewest is shown
        listed = [c for c in checks if _listed(c[1], c[2], shown[c[0]])] or [min(checks, key=lambda c: c[2])]
        # the same check at the same state (every game's initial state, say) is shown once
        distinct = list(dict.fromkeys(_render_check(kind, ti, traj, at, shown=shown[ti]) for ti, traj, at in listed))
        picks = sorted(set(np.linspace(0, len(distinct) - 1, min(per_type, len(distinct))).round().astype(int)))
        counts[kind] = len(picks)
        lines = "\n".join(f"- {distinct[i]}" for i in picks)
        parts.append(_fragment(f"{_TEST_TEMPLATES}/group.md", kind=kind, shown=len(picks), total=len(checks),
                               checks=lines))
    return "\n\n".join(parts), counts


# ---------------------------------------------------------------------------------------------------
# Failing tests

FailurePicker = Callable[[CheckReport], list[CheckFailure]]


def first_failure_per_type(report: CheckReport) -> list[CheckFailure]:
    """One failed check of each type (the earliest one), in the order of ``EXAMPLE_TYPES``."""
    by_type = report.failed_by_type()
    order = [t for t in EXAMPLE_TYPES if t in by_type] + [t for t in by_type if t not in EXAMPLE_TYPES]
    return [by_type[t][0] for t in order]


# The failing-tests section of a refinement prompt stays within this many characters: each failure is written
# with its values whole (every player's expected and actual observation), a failure too long for what is left
# loses its longest fields whole, and one that does not fit even so is left out, named in a closing line.
FAILURE_CHARS = 40_000


def render_failures(report: CheckReport, failures: Sequence[CheckFailure], *,
                    max_chars: int = FAILURE_CHARS) -> str:
    """The failing-tests section: the report's score line, a load/limit error if any, each failure in full.

    Failures are written in order while the section stays within ``max_chars`` characters. A failure that
    does not fit whole is written without its longest fields (``CheckFailure.render(leave_out=...)``: each
    says how long it was), never with a value cut; one that does not fit even with every field left out is
    left out, and a closing line counts those left out and names their types. The first failure is always
    written (its fields left out as needed).
    """
    parts = [report.summary()]
    if report.error and not failures:
        parts.append(_fragment("sections/check_error.md", error=report.error))
    room = max_chars - sum(len(p) + 2 for p in parts)
    dropped: list[CheckFailure] = []
    for i, failure in enumerate(failures):
        text = _failure_within(failure, room if i else max(room, 0), must=i == 0)
        if text is None:
            dropped.append(failure)
            continue
        parts.append(text)
        room -= len(text) + 2
    if dropped:
        types = list(dict.fromkeys(f.test_type for f in dropped))
        parts.append(_fragment("sections/failures_not_shown.md",
                               failures=f"{len(dropped)} more failure{'' if len(dropped) == 1 else 's'}",
                               types=", ".join(types)))
    return "\n\n".join(parts)


def _failure_within(failure: CheckFailure, room: int, *, must: bool) -> str | None:
    """``failure`` written whole, or without its longest fields until it fits in ``room`` characters;
    ``None`` when it does not fit with every field left out (unless it ``must`` be written)."""
    text = failure.render(full=True)
    left: set[str] = set()
    lengths = {f: len(failure.render(full=True, leave_out=left | {f})) for f in FAILURE_FIELDS}
    for field in sorted(FAILURE_FIELDS, key=lambda f: (lengths[f], FAILURE_FIELDS.index(f))):
        if len(text) <= room:
            return text
        left.add(field)
        text = failure.render(full=True, leave_out=left)
    return text if len(text) <= room or must else None


__all__ = [
    "EXAMPLE_CHARS",
    "FAILURE_CHARS",
    "EXAMPLE_TYPES",
    "TEMPLATES",
    "FailurePicker",
    "Listing",
    "compact",
    "example_tests",
    "first_failure_per_type",
    "listing",
    "render_failures",
    "render_trajectories",
]
