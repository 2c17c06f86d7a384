"""What a prompt shows of a game's rules: the rules, without the sections written for maintainers (how the
outcomes were measured, naming this repository's files, planners and engine functions)."""

from __future__ import annotations

import pytest

from cwm import games
from cwm.games import trajectories
from cwm.synthesis import world_model_target
from cwm.synthesis.inference_target import joint_target, views_of
from cwm.synthesis.target import prompt_rules

INTERNALS = ("Outcome statistics", "tests/games", "outcome_stats.py", "resample_from_infostate", "`planners`")


@pytest.mark.parametrize("name", [spec.name for spec in games.registered() if spec.rules])
def test_no_registered_games_prompt_rules_name_the_repositorys_internals(name):
    text = games.rules_text(name)
    shown = prompt_rules(text)
    assert not [word for word in INTERNALS if word in shown]
    # everything before a maintainers' section is kept, headings nested under the prompt's
    before = text.split("## Outcome statistics")[0].strip()
    assert shown == prompt_rules(before) and len(shown) >= len(before)


def test_a_section_after_the_statistics_is_kept_and_a_subsection_of_them_is_not():
    text = ("# Game\n\nRules.\n\n## Outcome statistics\n\nMeasured by tests/x.py.\n\n### Table\n\n| a |\n\n"
            "## Scoring\n\nA win pays 1.\n")
    assert prompt_rules(text) == "### Game\n\nRules.\n\n#### Scoring\n\nA win pays 1."


def test_the_world_model_and_joint_prompts_show_the_rules_without_the_statistics():
    train = trajectories.collect("quadranto", 2, seed=0)
    rules = games.rules_text("quadranto")
    assert "## Outcome statistics" in rules and "resample_from_infostate" in rules
    for target in (world_model_target(rules, train), joint_target(rules, views_of(train))):
        prompt = target.render("initial")
        assert "Outcome statistics" not in prompt and "resample_from_infostate" not in prompt
        assert prompt_rules(rules) in prompt


def test_a_heading_with_closing_hashes_or_a_long_run_of_spaces_is_read_by_its_title():
    from cwm.synthesis.target import prompt_rules

    rules = "# Game\ntext\n## Outcome statistics ##\nstats\n### sub\nmore\n## Play\nkeep\n# a" + " " * 4000 + "b\n"
    shown = prompt_rules(rules)
    assert "stats" not in shown and "more" not in shown and "keep" in shown and "text" in shown
    assert shown.endswith("a" + " " * 4000 + "b")


def test_a_comment_in_a_code_block_under_the_statistics_does_not_end_their_omission():
    rules = ("# Game\nrules\n## Outcome statistics\nMeasured with:\n```python\n# seed the engine\nx = 1\n"
             "## not a heading either\n```\nafter the code\n~~~~\n# still code\n~~~\n```\n~~~~\nsecret tail\n"
             "## Scoring\nA win pays 1.\n")
    shown = prompt_rules(rules)
    for hidden in ("seed the engine", "x = 1", "not a heading", "after the code", "still code", "secret tail"):
        assert hidden not in shown
    assert shown == "### Game\nrules\n#### Scoring\nA win pays 1."


def test_a_code_block_outside_the_statistics_is_kept_whole():
    rules = "# Game\n```\n## Outcome statistics\ncode\n```\nrules\n"
    assert "code" in prompt_rules(rules) and "rules" in prompt_rules(rules)


@pytest.mark.parametrize("heading", ["## outcome statistics", "## OUTCOME STATISTICS", "## Outcome Statistics ##"])
def test_the_statistics_heading_is_matched_in_any_case(heading):
    shown = prompt_rules(f"# Game\nrules\n{heading}\nMeasured by tests/x.py.\n## Play\nkeep\n")
    assert "tests/x.py" not in shown and "keep" in shown and "rules" in shown
