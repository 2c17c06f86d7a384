"""Example tests name the step of a game the prompt shows instead of repeating every action before it,
so a long game (backgammon: about 200 actions) costs its actions once."""

from __future__ import annotations

import re

from cwm.games import trajectories
from cwm.synthesis.render import example_tests, render_trajectories


def _step_player(shown: str, game: int, step: int) -> int:
    block = shown.split(f"Game {game} (", 1)[1].split("\nGame ", 1)[0]
    return int(re.search(rf"^  step {step}: current player (-?\d+)", block, re.MULTILINE).group(1))


def test_a_check_names_a_shown_step_whose_line_agrees_with_it():
    games = trajectories.collect("tic_tac_toe", 5, seed=0)
    shown, (text, _) = render_trajectories(games), example_tests(games)
    checks = re.findall(r"^- in game (\d+) at step (\d+): get_current_player\(state\) == (-?\d+)$", text, re.MULTILINE)
    assert checks
    for game, step, player in checks:
        assert _step_player(shown, int(game), int(step)) == int(player)
    assert "after actions" not in text
    assert re.search(r"^- at the end of game \d+: the game is over", text, re.MULTILINE)


def test_a_check_past_the_cut_lists_the_actions_that_reach_it():
    games = trajectories.collect("tic_tac_toe", 3, seed=0)
    text, _ = example_tests(games, max_steps=3)
    later = re.findall(r"^- after actions (\[.*?\]): ", text, re.MULTILINE)
    early = re.findall(r"^- in game \d+ at step (\d+): ", text, re.MULTILINE)
    assert later and all(len(eval(h)) >= 3 for h in later)  # noqa: S307 - our own JSON list of strings
    assert all(int(s) < 3 for s in early)
    assert "at the end of game" not in text  # the cut games' final states are not shown


def test_checks_past_the_cut_are_left_out_but_one_per_type_none_of_whose_states_is_listed():
    games = trajectories.collect("backgammon", 2, seed=0)
    text, _ = example_tests(games, max_chars=None)
    cut, counts = example_tests(games, max_steps=1, max_chars=None)  # only the initial state is listed
    prefixed = re.findall(r"^- after actions ", cut, re.MULTILINE)
    assert 1 <= len(prefixed) <= len(counts)
    assert "after actions" not in text and len(cut) < len(text)
