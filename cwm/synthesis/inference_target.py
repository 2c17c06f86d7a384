"""The inference targets: an inference function for a given world model (open deck), and a world model with
its inference function written together from one player's view (closed deck, the joint target).

Open deck: the world model is fixed (synthesized first); the candidate defines ``resample_history``; its
histories, replayed in the model, must reproduce every player's view of the training games
(``cwm.checks.inference``). Closed deck: only one player's observations and own actions exist, so there
are no transition tests; the candidate defines both APIs and is checked as an encoder/decoder pair (its
inference's histories replayed in its own model, at the end of each game too) plus random play in its
model. The rules text and the API are the regulariser.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import prompts
from cwm import model as cwm_model
from cwm import value_rules
from cwm.contract import (
    INFERENCE_API,
    STATE_INFERENCE_API,
    WORLD_MODEL_API,
)
from cwm.games import event_kinds
from cwm.games.trajectories import views_of  # noqa: F401  (re-exported)
from cwm.sandbox import ALLOWED_IMPORTS
from cwm.sandbox.checkers import RANDOM_GAMES, Checker, inference_checker, random_play_steps  # noqa: F401
from cwm.synthesis.render import compact
from cwm.synthesis.target import PromptSet, Target, prompt_rules
from cwm.types import ClosedTrajectory, Trajectory

INFERENCE_PROMPTS = PromptSet(initial="inference/initial.md", refine="inference/refine.md")
STATE_PROMPTS = PromptSet(initial="inference/state_initial.md", refine="inference/state_refine.md")
JOINT_PROMPTS = PromptSet(initial="inference/joint_initial.md", refine="inference/joint_refine.md")
FRAGMENTS = ("sections/api_functions.md", "sections/inference_api.md", "sections/world_model_code.md",
             "sections/player_views.md", "sections/inference_tests.md", "sections/views_not_shown.md",
             "sections/view_not_shown.md", "sections/answer_first.md")
JOINT_FRAGMENTS = (*FRAGMENTS, "sections/contract_api.md", "sections/value_rules.md", "sections/joint_spelling.md",
                   "sections/joint_tests.md")
STATE_FRAGMENTS = ("sections/api_functions.md", "sections/inference_state_api.md", "sections/world_model_states.md",
                   "sections/player_views.md", "sections/inference_state_tests.md",
                   "sections/views_not_shown.md", "sections/view_not_shown.md", "sections/answer_first.md")


# The players' views of an inference prompt are listed whole while they stay within this many characters (at
# least one is listed), chosen to show every kind of event the views hold when they do not all fit; the checks
# run on every view all the same. Every shipped session's views fit whole (the iterated prisoner's dilemma's:
# 24k characters); hand of war's are 93k, gin rummy's 954k.
VIEW_CHARS = 40_000


def render_views(closed: Sequence[ClosedTrajectory], *, truth: Sequence[Trajectory] = (),
                 max_chars: int | None = VIEW_CHARS) -> str:
    """Each view as the player's events, state by state; with ``truth`` (open deck), each game's real action
    history too, so the LLM sees what the hidden parts were. The views ``views_listed`` chooses are listed
    whole, in order, and a closing line says which were left out."""
    blocks = _view_blocks(closed, truth)
    listed = views_listed(closed, truth=truth, max_chars=max_chars)
    text = "\n\n".join(blocks[i] for i in listed)
    left = [i for i in range(len(closed)) if i not in listed]
    if left:
        states = _count(sum(len(closed[i].events) for i in left), "state")
        one = len(left) == 1
        text += "\n\n" + prompts.render(f"sections/{'view' if one else 'views'}_not_shown.md",
                                         **({"game": str(left[0] + 1)} if one else {"views": _count(len(left), "view")}),
                                         states=states).rstrip("\n")
    return text


def views_listed(closed: Sequence[ClosedTrajectory], *, truth: Sequence[Trajectory] = (),
                 max_chars: int | None = VIEW_CHARS) -> tuple[int, ...]:
    """The indices of the views ``render_views`` lists: every view when they fit in ``max_chars`` characters
    (``None``: no limit); else views chosen to show every kind of event the views hold (each player's seat,
    each kind of action the player took, each sign of its return: ``cwm.games.event_kinds``) by
    ``event_kinds.greedy_cover`` with a view's length as its cost, then the others that still fit, in
    order. At least one view is listed (where none fits, the one showing the most kinds). Deterministic."""
    if max_chars is None:
        return tuple(range(len(closed)))
    costs = [len(b) + 2 for b in _view_blocks(closed, truth)]
    chosen = set(event_kinds.greedy_cover([_view_kinds(ct) for ct in closed], cost=costs.__getitem__,
                                          budget=max_chars))
    used = sum(costs[i] for i in chosen)
    for i, cost in enumerate(costs):
        if i not in chosen and used + cost <= max_chars:
            chosen.add(i)
            used += cost
    if not chosen:  # none fits: the one showing the most kinds (the earliest of those), whole
        kinds = [len(_view_kinds(ct)) for ct in closed]
        chosen = {kinds.index(max(kinds))} if kinds else set()
    return tuple(sorted(chosen))


def views_shown(closed: Sequence[ClosedTrajectory], *, truth: Sequence[Trajectory] = (),
                max_chars: int | None = VIEW_CHARS) -> int:
    """How many views ``render_views`` lists."""
    return len(views_listed(closed, truth=truth, max_chars=max_chars))


def _view_kinds(ct: ClosedTrajectory) -> set[str]:
    """The kinds of event one view shows: the seat, each kind of action the player took, its return's sign."""
    own = {event_kinds.step_kind(ct.player, e.action) for e in ct.events if e.action is not None}
    sign = "+" if ct.player_return > 0 else "-" if ct.player_return < 0 else "0"
    return {f"seat {ct.player}", f"return {sign}", *own}


def _view_blocks(closed: Sequence[ClosedTrajectory], truth: Sequence[Trajectory]) -> list[str]:
    histories = {(t.game, t.seed): t.action_strings for t in truth}
    blocks = []
    for i, ct in enumerate(closed):
        lines = [f"Game {i + 1} (seed {ct.seed}), seen by player {ct.player}: {len(ct.events)} states, final "
                 f"return {ct.player_return}"]
        for j, e in enumerate(ct.events):
            did = f"; the player plays {e.action!r}" if e.action is not None else ""
            lines.append(f"  state {j}: observation {compact(e.observation)}{did}")
        real = histories.get((ct.game, ct.seed))
        if real is not None:
            lines.append(f"  the real history (all players and chance): {compact(list(real))}")
        blocks.append("\n".join(lines))
    return blocks


def _example_tests(closed: Sequence[ClosedTrajectory], listed: Sequence[int], *, terminal: bool, count: int = 3,
                   hidden: str = "history") -> str:
    """A few of the checks spelt out, at the first ``count`` of the ``listed`` views: which events go in,
    what the replay (or the state) must show."""
    out = []
    for i in listed[:count]:
        ct = closed[i]
        acted = [k for k, e in enumerate(ct.events) if e.action is not None]
        if not acted:
            continue
        k = acted[-1]
        where = f"- In game {i + 1} (seed {ct.seed}, player {ct.player}) at state {k}: "
        flag = f"(the last event with \"terminal\": True, \"return\": {ct.player_return})"
        if hidden == "state":
            out.append(f"{where}`resample_state(events[:{k + 1}], {ct.player}, seed)` (the last event's action set "
                       f"to None) must return a state where the player sees its observation of state {k} above, is "
                       f"to move, and may play {ct.events[k].action!r}")
            if terminal:
                out.append(f"- the same game at its end: `resample_state(events, {ct.player}, seed)` {flag} must "
                           f"return a state where the game is over")
            continue
        states = "state 0" if k == 0 else f"states 0 to {k}"
        out.append(f"{where}`resample_history(events[:{k + 1}], {ct.player}, seed)` (the last event's action set to "
                   f"None) must return {_count(k, 'action')} whose replay shows the player {states} of that game "
                   f"exactly as above: each observation, and its own action at each earlier state where it acted")
        if terminal:
            n = len(ct.events)
            out.append(f"- the same game at its end: `resample_history(events, {ct.player}, seed)` {flag} must "
                       f"return {_count(n - 1, 'action')} whose replay ends the game paying the player {ct.player_return}")
    return "\n".join(out)


def _count(n: int, noun: str) -> str:
    return f"{n} {noun}" if n == 1 else f"{n} {noun}s"


def _context(rules: str, closed: Sequence[ClosedTrajectory], *, api: tuple[Any, ...], terminal: bool,
             truth: Sequence[Trajectory] = (), world_model: str | None = None,
             hidden: str = "history", max_chars: int | None = VIEW_CHARS) -> dict[str, str]:
    note = " Below each game is the real history, hidden from the player." if truth else ""
    listed = views_listed(closed, truth=truth, max_chars=max_chars)  # the example checks name listed views
    context = {
        "rules": prompt_rules(rules), "api": cwm_model.api_block(api).rstrip(),
        "value_rules": value_rules.rules_text(), "allowed_imports": ", ".join(sorted(ALLOWED_IMPORTS)),
        "random_games": str(RANDOM_GAMES), "random_steps": f"{random_play_steps(closed):,}",
        "views": render_views(closed, truth=truth, max_chars=max_chars), "views_note": note,
        "tests": _example_tests(closed, listed, terminal=terminal, hidden=hidden),
    }
    if world_model is not None:
        context["world_model"] = world_model.strip()
    return context


def inference_target(rules: str, train: Sequence[Trajectory], world_model: str, *, check: Checker | None = None,
                     prompt_set: PromptSet | None = None, hidden: str = "history",
                     max_example_chars: int | None = VIEW_CHARS) -> Target:
    """The open-deck inference target: ``resample_history`` (``hidden="state"``: ``resample_state``) for the
    world model ``world_model`` (source), checked on every player's view of ``train``; the prompt lists
    whole views within ``max_example_chars`` characters (``render_views``).

    Raises:
      ValueError: no training games.
    """
    if not train:
        raise ValueError("inference synthesis needs at least one training trajectory")
    views = views_of(train)
    state = hidden == "state"
    api = STATE_INFERENCE_API if state else INFERENCE_API
    # a history inference is checked at the end of each game too (as the joint one is); a state inference is not
    context = _context(rules, views, api=api, terminal=not state, truth=train, world_model=world_model,
                       hidden=hidden, max_chars=max_example_chars)
    prompt_set = prompt_set or (STATE_PROMPTS if state else INFERENCE_PROMPTS)
    check = check or inference_checker(views, world_model=world_model, kind="state" if state else None,
                                       terminal=not state)
    return Target("inference", prompt_set, api, context, check, fragments=STATE_FRAGMENTS if state else FRAGMENTS,
                  tag="inference")


def joint_target(rules: str, closed: Sequence[ClosedTrajectory], *, check: Checker | None = None,
                 prompt_set: PromptSet = JOINT_PROMPTS, max_example_chars: int | None = VIEW_CHARS) -> Target:
    """The closed-deck target: a world model and its inference in one module, checked together on the
    views ``closed`` (each game's end included) and by random play; the prompt lists whole views within
    ``max_example_chars`` characters (``render_views``).

    Raises:
      ValueError: no closed-deck games.
    """
    if not closed:
        raise ValueError("closed-deck synthesis needs at least one closed-deck trajectory")
    api = (*WORLD_MODEL_API, *INFERENCE_API)
    context = _context(rules, closed, api=api, terminal=True, max_chars=max_example_chars)
    return Target("joint", prompt_set, api, context, check or inference_checker(closed, world_model=None),
                  fragments=JOINT_FRAGMENTS, tag="joint")


__all__ = ["INFERENCE_PROMPTS", "JOINT_PROMPTS", "VIEW_CHARS", "inference_checker", "inference_target",
           "joint_target", "render_views", "views_listed", "views_of", "views_shown"]
