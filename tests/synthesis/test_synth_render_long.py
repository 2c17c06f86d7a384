"""Long values (bargaining's 1,000 instances) cost prompt tokens once, not once per game and per test."""

from __future__ import annotations

import json

from cwm.games import trajectories
from cwm.synthesis.render import LONG_ACTIONS, LONG_VALUE, example_tests, render_trajectories


def test_repeated_long_chance_list_is_written_once_then_referred_to():
    trajs = trajectories.collect("bargaining", 3, seed=0)
    first = trajs[0].steps[0].chance_outcomes
    assert len(first) == 1000
    text = render_trajectories(trajs, max_chars=None)  # every game listed
    assert text.count("(1000 outcomes, each with probability 0.001. Each outcome is the string") == 1
    assert text.count("(the same list as at game 1, step 0)") == 2


def test_a_repeated_long_legal_action_list_is_referred_to_and_a_short_one_is_not():
    trajs = trajectories.collect("bargaining", 2, seed=0)
    text = render_trajectories(trajs, max_chars=None)
    offers = [x for x in text.splitlines() if x.startswith("    legal actions: ")]
    written = [x for x in offers if x.startswith('    legal actions: ["')]
    assert len(offers) == sum(len(t.steps) - 1 for t in trajs)  # every step but the chance node
    assert len(written) == len(set(written)) < len(offers) / 3  # each distinct list once
    assert all(len(x) > LONG_ACTIONS for x in written)
    first = next(i for i, x in enumerate(offers) if "Agree" in x)
    assert offers[first + 1] == f"    legal actions: (the same list as at game 1, step {first + 1})"
    # tic-tac-toe's free cells repeat only across games and stay under the threshold: written in place
    assert "the same list as" not in render_trajectories(trajectories.collect("tic_tac_toe", 5, seed=0))


def _read_table(value: str) -> list[list[object]]:
    """The outcome list a table-form chance list stands for, read back from the prompt text alone."""
    import json
    import re

    found = re.fullmatch(r"\((\d+) outcomes, each with probability (\S+)\. Each outcome is the string (\".*?\") "
                         r"with the numbers of one row of this table put in place of its `#` signs, in order; "
                         r"the rows, separated by `;`, are the outcomes in the order listed: (.*)\)", value)
    assert found is not None, value[:300]
    template, rows = json.loads(found.group(3)), found.group(4).split("; ")
    assert len(rows) == int(found.group(1))
    outcomes = []
    for row in rows:
        numbers, pieces = row.split(" "), template.split("#")
        assert len(numbers) == len(pieces) - 1
        text = pieces[0] + "".join(n + piece for n, piece in zip(numbers, pieces[1:]))
        outcomes.append([text, float(found.group(2))])
    return outcomes


def test_equally_likely_instances_are_a_template_and_a_table_that_read_back_exactly():
    trajs = trajectories.collect("bargaining", 2, seed=0)
    text = render_trajectories(trajs, max_chars=None)
    line = next(x for x in text.splitlines() if x.startswith("    chance outcomes: ("))
    value = line.removeprefix("    chance outcomes: ")
    expected = [[c.action_string, c.probability] for c in trajs[0].steps[0].chance_outcomes]
    assert _read_table(value) == expected
    assert len(value) < len(json.dumps(expected)) / 5  # 19k characters instead of 159k
    assert "P0 vals" in value and "P1 vals" in value  # numbers every outcome shares stay in the template


def test_outcomes_without_one_template_stay_a_list():
    from cwm.synthesis.render import _outcome_table

    assert _outcome_table(["Roll: 1", "Roll: 2", "Draw: 3"], 1 / 3) is None  # two shapes
    assert _outcome_table(["Deal #1", "Deal #2"], 0.5) is None  # the marker itself in an outcome
    assert _outcome_table(["Card 7"], 1.0) is None
    table = _outcome_table(["a1b2", "a1b3", "a1b10"], 1 / 3)
    assert table is not None and '"a1b#"' in table and table.endswith("listed: 2; 3; 10)")


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
