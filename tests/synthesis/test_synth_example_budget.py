"""The first prompt lists example games chosen to show every kind of event within a fixed number of characters
(whole games, else parts of games; inference: whole player views while they fit), says what it left out, and
names in its example checks only states it lists; the checks still run on every game."""

from __future__ import annotations

import dataclasses
import re

import pytest

from cwm import games
from cwm.games import event_kinds, trajectories
from cwm.synthesis.inference_target import (
    VIEW_CHARS,
    _view_kinds,
    inference_target,
    render_views,
    views_listed,
    views_of,
    views_shown,
)
from cwm.synthesis.render import EXAMPLE_CHARS, example_tests, listing, render_trajectories


@pytest.fixture(scope="module")
def hand_of_war() -> list:
    return trajectories.collect("hand_of_war", 5, seed=0)


@pytest.fixture(scope="module")
def backgammon() -> list:
    return trajectories.collect("backgammon", 3, seed=0)


def _listed(shown: tuple) -> list[int]:
    return [i for i, w in enumerate(shown) if w != (0, 0)]


def _kinds_listed(games: list, shown: tuple) -> set[str]:
    out: set[str] = set()
    for traj, (start, stop) in zip(games, shown):
        at = event_kinds.kinds_at(traj)
        out |= set().union(*at[start:stop]) | (at[-1] if stop == len(traj.steps) and stop else set())
    return out


def test_the_games_listed_show_every_kind_of_event_and_the_rest_are_named(hand_of_war):
    full = render_trajectories(hand_of_war, max_chars=None)
    assert len(full) > EXAMPLE_CHARS  # the five games do not fit
    shown = listing(hand_of_war)
    kept = _listed(shown.shown)
    assert 1 <= len(kept) < 5 and len(shown.text) <= EXAMPLE_CHARS + 200
    assert all(shown.shown[i] == (0, len(hand_of_war[i].steps)) for i in kept)  # whole games here
    assert _kinds_listed(hand_of_war, shown.shown) == set().union(*map(event_kinds.kinds, hand_of_war))
    # the listed games read exactly as in the full listing; the others are named in the closing line
    blocks = full.split("\n\n")
    assert all(blocks[i] in shown.text.split("\n\n") for i in kept)
    left = [i for i in range(5) if i not in kept]
    actions = sum(len(hand_of_war[i].steps) for i in left)
    numbers = " and ".join(str(i + 1) for i in left) if len(left) == 2 else None
    last = shown.text.rsplit("\n\n", 1)[1]
    assert last.startswith("Not listed, to keep this prompt short: game") and f"({actions} actions)" in last
    if numbers:
        assert f"games {numbers} (" in last
    assert all(f"Game {i + 1} (" not in shown.text for i in left)


def test_a_game_longer_than_the_budget_is_listed_in_part(backgammon):
    shown = listing(backgammon, max_chars=30_000)
    assert len(shown.text) <= 30_000 + 200  # the closing line aside
    assert _listed(shown.shown)
    for i in _listed(shown.shown):
        start, stop = shown.shown[i]
        steps = len(backgammon[i].steps)
        assert 0 <= start < stop <= steps
        assert (f"  ... {start} earlier steps not shown" in shown.text) == (start > 0)
        assert (f"  ... {steps - stop} more steps not shown" in shown.text) == (stop < steps)
    # a first step longer than the budget is listed all the same
    tight = listing(backgammon, max_chars=100)
    assert tight.shown == ((0, 1), (0, 0), (0, 0)) and "chance outcomes: [[" in tight.text


def test_a_rare_action_in_a_later_game_is_listed_though_earlier_games_would_fill_the_budget():
    """A synthetic pool: five tic-tac-toe games, the fourth ending in a resignation no other game has."""
    games = trajectories.collect("tic_tac_toe", 5, seed=0)
    last = games[3].steps[-1]
    games[3] = dataclasses.replace(games[3], steps=(*games[3].steps[:-1], dataclasses.replace(
        last, action_string="resign", legal_action_strings=(*last.legal_action_strings, "resign"))))
    two = len(render_trajectories(games[:2], max_chars=None))
    shown = listing(games, max_chars=two + 50)  # room for about two games
    assert "action: 'resign'" in shown.text and shown.shown[3] != (0, 0)
    assert len(_listed(shown.shown)) < 5
    assert listing(games, max_chars=two + 50) == shown  # deterministic


def test_gin_rummys_listing_shows_every_kind_of_event_its_training_games_hold():
    """Its five games are 1.4M characters: the budget holds part of one, and that part is chosen to hold every
    kind of action, the game's ending and its outcome (a game's end reached from its last steps)."""
    train = trajectories.collect("gin_rummy", 5, seed=0)
    shown = listing(train)
    assert len(shown.text) <= EXAMPLE_CHARS + 200
    assert _kinds_listed(train, shown.shown) == set().union(*map(event_kinds.kinds, train))
    assert "final state: current player -4 (terminal)" in shown.text


def test_a_data_list_is_listed_once_and_counted_against_the_budget():
    games = trajectories.collect("bargaining", 3, seed=0)
    instances = len(render_trajectories(games[:1], max_steps=1, max_chars=None))
    assert instances > 15_000  # the 1,000 instances (as a table), in each game's first step
    whole_first = len(render_trajectories(games[:1], max_chars=None))
    shown = listing(games, max_chars=whole_first + 100)  # room for one game, data included, alone
    assert len(_listed(shown.shown)) == 1 and len(shown.text) < whole_first + 300
    assert shown.text.count("Sample game instance") <= 2  # the data once (its table's template line)
    cut = listing(games, max_chars=instances + 100)  # the data and not much more: one game, in part
    (only,) = _listed(cut.shown)
    assert cut.shown[only][1] - cut.shown[only][0] < len(games[only].steps)


def test_bargainings_five_training_games_fit_the_default_budget():
    """Its repeated offer lists are written once per game, so the listing shows every game, the one that ends
    in an agreement included, with the 1,000 instances, in less than the budget."""
    train = trajectories.collect("bargaining", 5, seed=0)
    shown = listing(train)
    assert shown.shown == tuple((0, len(t.steps)) for t in train) and len(shown.text) <= EXAMPLE_CHARS
    assert "Agree" in [s.action_string for s in train[-1].steps]


def test_example_checks_name_only_listed_states(backgammon):
    shown = listing(backgammon, max_chars=30_000).shown
    text, counts = example_tests(backgammon, max_chars=30_000)
    named = re.findall(r"^- in game (\d+) at step (\d+): ", text, re.MULTILINE)
    assert named and all(shown[int(g) - 1][0] <= int(step) < shown[int(g) - 1][1] for g, step in named)
    ends = re.findall(r"^- at the end of game (\d+):", text, re.MULTILINE)
    assert all(shown[int(g) - 1][1] == len(backgammon[int(g) - 1].steps) for g in ends)


def test_games_that_fit_are_listed_whole_as_without_a_budget():
    for name in ("connect_four", "gen_chess", "leduc_poker"):
        train = trajectories.collect(name, 5, seed=0)
        assert render_trajectories(train) == render_trajectories(train, max_chars=None)
        assert example_tests(train) == example_tests(train, max_chars=None)


def test_player_views_listed_show_every_kind_of_event_the_views_hold(hand_of_war):
    views = views_of(hand_of_war)
    full = render_views(views, truth=hand_of_war, max_chars=None)
    assert len(full) > VIEW_CHARS
    listed = views_listed(views, truth=hand_of_war)
    assert 1 <= len(listed) < len(views) and views_shown(views, truth=hand_of_war) == len(listed)
    kinds = [_view_kinds(v) for v in views]
    assert set().union(*(kinds[i] for i in listed)) == set().union(*kinds)  # both seats, every action, both signs
    text = render_views(views, truth=hand_of_war)
    blocks = full.split("\n\n")
    assert text.startswith("\n\n".join(blocks[i] for i in listed))  # whole views, in order
    left = [i for i in range(len(views)) if i not in listed]
    states = sum(len(views[i].events) for i in left)
    assert text.endswith(f"Not listed, to keep this prompt short: the other {len(left)} views ({states} states "
                         "in all). The checks run on every view, these included.")
    assert views_shown(views, truth=hand_of_war, max_chars=1) == 1  # at least one view
    prompt = inference_target(games.rules_text(games.resolve("hand_of_war")), hand_of_war, "# world model").render("initial")
    named = {int(g) for g in re.findall(r"^- In game (\d+) \(seed", prompt, re.MULTILINE)}
    assert named and named <= {i + 1 for i in listed}  # the example checks name listed views only


def test_a_view_holding_a_kind_no_other_holds_is_listed_before_earlier_views():
    """A synthetic set: player 1's view appears only in the last game, and the budget holds two views."""
    closed = [trajectories.closed_view(t, 0 if i < 4 else 1) for i, t in enumerate(trajectories.collect("hand_of_war", 5, seed=0))]
    two = len(render_views(closed[:2], max_chars=None))
    listed = views_listed(closed, max_chars=two + 10)
    assert 4 in listed and len(listed) < 5


def test_one_view_left_out_is_named_as_one():
    closed = [trajectories.closed_view(t, i % 2) for i, t in enumerate(trajectories.collect("hand_of_war", 2, seed=0))]
    first = len(render_views(closed[:1], max_chars=None))
    text = render_views(closed, max_chars=first)
    (left,) = [i for i in range(2) if i not in views_listed(closed, max_chars=first)]
    assert text.endswith(f"Not listed, to keep this prompt short: the view of game {left + 1} "
                         f"({len(closed[left].events)} states). The checks run on every view, this one included.")


def _no_steps(traj: object) -> object:
    """The game cut to its initial state: no step (as a user's trajectories file may hold)."""
    return dataclasses.replace(traj, steps=())  # type: ignore[type-var]


def test_games_without_a_step_are_refused_in_one_line_and_one_with_a_step_is_listed():
    from cwm.types import UsageError

    games_ = trajectories.collect("tic_tac_toe", 3, seed=0)
    empty = [_no_steps(t) for t in games_]
    with pytest.raises(UsageError, match=r"^no step to list: each of the 3 games ends at its initial state") as err:
        listing(empty)
    assert "\n" not in str(err.value)
    with pytest.raises(UsageError, match="no step to list"):
        example_tests(empty)
    # nothing fits the budget and the first game has no step: the first step of the next game is listed
    mixed = [empty[0], *games_[1:]]
    shown = listing(mixed, max_chars=10).shown
    assert shown[0] == (0, 0) and shown[1] == (0, 1)
    text, counts = example_tests(mixed, max_chars=10)
    assert counts["transition"] >= 1 and "get_current_player(state) == -4" in text  # the first game is over at once


def test_a_first_prompt_works_out_its_listing_once_and_each_steps_text_once(monkeypatch, backgammon):
    from cwm.synthesis import render
    from cwm.synthesis.target import world_model_target

    calls = {"listing": 0, "observations": 0}
    real_listing, real_lines = render.listing, render._observation_lines

    def listing_counted(*args, **kwargs):
        calls["listing"] += 1
        return real_listing(*args, **kwargs)

    def lines_counted(observations):
        calls["observations"] += 1
        return real_lines(observations)

    monkeypatch.setattr(render, "listing", listing_counted)
    monkeypatch.setattr(render, "_observation_lines", lines_counted)
    world_model_target("rules", backgammon)  # three games longer than the listing's budget: listed in part
    states = sum(len(t.steps) + 1 for t in backgammon)
    # the example tests reuse the prompt's listing; choosing the parts to list writes each state's lines once
    assert calls["listing"] == 1 and 0 < calls["observations"] <= states
