"""Long values (bargaining's 1,000 instances) cost prompt tokens once, not once per game and per test."""

from __future__ import annotations

from cwm import trajectories
from cwm.synthesis.render import LONG_VALUE, example_tests, render_trajectories


def test_repeated_long_chance_list_is_written_once_then_referred_to():
    trajs = trajectories.collect("bargaining", 3, seed=0)
    first = trajs[0].steps[0].chance_outcomes
    assert len(first) == 1000
    text = render_trajectories(trajs, max_chars=None)  # every game listed, the first alone is 160k characters
    marker = first[500].action_string.replace("\n", "\\n")
    assert text.count(marker) == 1  # only the first game lists every instance
    assert text.count("(the same list as at game 1, step 0)") == 2


def test_example_tests_clip_long_values_and_say_so():
    trajs = trajectories.collect("bargaining", 2, seed=0)
    text, counts = example_tests(trajs)
    assert counts["chance_outcomes"] >= 1
    longest = max(len(line) for line in text.splitlines())
    assert longest < LONG_VALUE + 400
    assert "characters in all; the full value is in the example games" in text


def test_short_values_are_untouched():
    trajs = trajectories.collect("tic_tac_toe", 2, seed=0)
    assert "the same list as" not in render_trajectories(trajs)
    assert "characters in all" not in example_tests(trajs)[0]
