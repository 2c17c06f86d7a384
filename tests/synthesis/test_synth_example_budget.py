"""The first prompt lists whole example games (inference: player views) while they fit in a fixed number of
characters, says what it left out, and names in its example checks only states it lists; the checks still
run on every game."""

from __future__ import annotations

import re

import pytest

from cwm import games
from cwm.games import trajectories
from cwm.synthesis.inference_target import VIEW_CHARS, inference_target, render_views, views_of, views_shown
from cwm.synthesis.render import EXAMPLE_CHARS, example_tests, listing, render_trajectories


@pytest.fixture(scope="module")
def hand_of_war() -> list:
    return trajectories.collect("hand_of_war", 5, seed=0)


@pytest.fixture(scope="module")
def backgammon() -> list:
    return trajectories.collect("backgammon", 3, seed=0)


def test_whole_games_are_listed_in_order_while_they_fit(hand_of_war):
    full = render_trajectories(hand_of_war, max_chars=None)
    assert len(full) > EXAMPLE_CHARS  # the five games do not fit
    shown = listing(hand_of_war)
    kept = sum(1 for n in shown.shown if n)
    assert 1 <= kept < 5
    assert shown.shown[:kept] == tuple(len(t.steps) for t in hand_of_war[:kept]) and set(shown.shown[kept:]) == {0}
    # the listed games read exactly as in the full listing, and the next one would not have fitted
    blocks = full.split("\n\nGame ")
    assert shown.text.startswith("\n\nGame ".join(blocks[:kept]) + "\n\n")
    assert len("\n\nGame ".join(blocks[:kept + 1])) > EXAMPLE_CHARS
    left = sum(len(t.steps) for t in hand_of_war[kept:])
    last = shown.text.rsplit("\n\n", 1)[1]
    assert last == (f"Not listed, to keep this prompt short: games {kept + 1} to 5 ({left} actions). "
                    "The checks run on every step of every game, these included.")
    assert f"Game {kept + 1} (" not in shown.text


def test_a_first_game_longer_than_the_budget_is_cut_at_a_step(backgammon):
    shown = listing(backgammon, max_chars=30_000)
    steps = shown.shown[0]
    assert 1 <= steps < len(backgammon[0].steps) and shown.shown[1:] == (0, 0)
    assert len(shown.text) <= 30_000 + 200  # the closing line aside
    assert f"  ... {len(backgammon[0].steps) - steps} more steps not shown" in shown.text
    assert f"  step {steps - 1}: " in shown.text and f"  step {steps}: " not in shown.text
    # one step more would not have fitted
    assert len(listing(backgammon, max_steps=steps + 1, max_chars=None).text.split("\n\nGame 2")[0]) > 30_000
    # a first step longer than the budget is listed all the same
    tight = listing(backgammon, max_chars=100)
    assert tight.shown == (1, 0, 0) and "chance outcomes: [[" in tight.text


def test_a_data_list_is_listed_once_and_counted_against_the_budget():
    games = trajectories.collect("bargaining", 3, seed=0)
    instances = len(render_trajectories(games[:1], max_steps=1, max_chars=None))
    assert instances > 15_000  # the 1,000 instances (as a table), in the first game's first step
    whole_first = len(render_trajectories(games[:1], max_chars=None))
    shown = listing(games, max_chars=whole_first + 100)  # room for the first game, data included, alone
    assert shown.shown == (len(games[0].steps), 0, 0) and len(shown.text) < whole_first + 200
    cut = listing(games, max_chars=instances + 100)  # the data and not much more: the first game is cut
    assert 1 <= cut.shown[0] < len(games[0].steps) and cut.shown[1:] == (0, 0)


def test_bargainings_five_training_games_fit_the_default_budget():
    """Its repeated offer lists are written once per game, so the listing shows every game, the one that ends
    in an agreement included, with the 1,000 instances, in less than the budget."""
    train = trajectories.collect("bargaining", 5, seed=0)
    shown = listing(train)
    assert shown.shown == tuple(len(t.steps) for t in train) and len(shown.text) <= EXAMPLE_CHARS
    assert "Agree" in [s.action_string for s in train[-1].steps]


def test_example_checks_name_only_listed_states(backgammon):
    shown = listing(backgammon, max_chars=30_000).shown
    text, counts = example_tests(backgammon, max_chars=30_000)
    named = re.findall(r"^- in game (\d+) at step (\d+): ", text, re.MULTILINE)
    assert named and all(int(game) == 1 and int(step) < shown[0] for game, step in named)
    # no game end is listed: the termination check shown is the one with the fewest actions before it
    ends = re.findall(r"^- after actions (\[.*\]): the game is over", text, re.MULTILINE)
    assert counts["termination"] == 1 and len(ends) == 1
    assert len(eval(ends[0])) == min(len(t.steps) for t in backgammon)  # noqa: S307 - our own JSON list


def test_games_that_fit_are_listed_whole_as_without_a_budget():
    for name in ("connect_four", "gen_chess", "leduc_poker"):
        train = trajectories.collect(name, 5, seed=0)
        assert render_trajectories(train) == render_trajectories(train, max_chars=None)
        assert example_tests(train) == example_tests(train, max_chars=None)


def test_player_views_are_listed_whole_while_they_fit(hand_of_war):
    views = views_of(hand_of_war)
    full = render_views(views, truth=hand_of_war, max_chars=None)
    assert len(full) > VIEW_CHARS
    kept = views_shown(views, truth=hand_of_war)
    assert 1 <= kept < len(views)
    text = render_views(views, truth=hand_of_war)
    assert text.startswith("\n\n".join(full.split("\n\n")[:kept]))
    states = sum(len(v.events) for v in views[kept:])
    assert text.endswith(f"Not listed, to keep this prompt short: the other {len(views) - kept} views ({states} states "
                         "in all). The checks run on every view, these included.")
    assert views_shown(views, truth=hand_of_war, max_chars=1) == 1  # at least one view
    prompt = inference_target(games.rules_text(games.resolve("hand_of_war")), hand_of_war, "# world model").render("initial")
    named = {int(g) for g in re.findall(r"^- In game (\d+) \(seed", prompt, re.MULTILINE)}
    assert named and max(named) <= kept  # the example checks name listed views only


def test_one_view_left_out_is_named_as_one():
    closed = [trajectories.closed_view(t, i % 2) for i, t in enumerate(trajectories.collect("hand_of_war", 2, seed=0))]
    first = len(render_views(closed[:1], max_chars=None))
    text = render_views(closed, max_chars=first)
    assert text.endswith(f"Not listed, to keep this prompt short: the last view ({len(closed[1].events)} states). "
                         "The checks run on every view, this one included.")
