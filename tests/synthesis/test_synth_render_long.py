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


def test_a_dealt_deck_is_written_against_the_full_list_and_reads_back_exactly():
    import json
    import re

    trajs = trajectories.collect("gin_rummy", 1, seed=0)
    text = render_trajectories(trajs, max_chars=None)
    full, read = {}, 0
    for block in text.split("\n  step ")[1:]:
        step = int(block.split(":", 1)[0])
        line = next((x for x in block.splitlines() if x.startswith("    chance outcomes: ")), None)
        if line is None:
            continue
        value = line.removeprefix("    chance outcomes: ")
        shorter = re.fullmatch(r"\(the list at game 1, step (\d+) without (\[.*\]): (\d+) outcomes, each with "
                               r"probability (\S+)\)", value)
        if shorter is None:
            full[step] = [name for name, _ in json.loads(value)]
            outcomes = json.loads(value)
        else:
            removed = json.loads(shorter.group(2))
            names = [n for n in full[int(shorter.group(1))] if n not in removed]
            assert len(names) == int(shorter.group(3))
            outcomes = [[n, float(shorter.group(4))] for n in names]
            read += 1
        assert outcomes == [[c.action_string, c.probability] for c in trajs[0].steps[step].chance_outcomes]
    assert read >= 20  # the deal (and stock draws) written against the full 52-card list
