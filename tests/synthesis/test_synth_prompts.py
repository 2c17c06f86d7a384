"""What the prompts hold, asserted on the rendered text the LLM received."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from synth_helpers import BUGGY_THEN_FIXED, RULES, program, reply, synthesize

import prompts
from cwm import value_rules
from cwm.llm import ScriptedClient
from cwm.model import WORLD_MODEL_API, api_block
from cwm.synthesis import world_model_target
from cwm.synthesis.render import TEMPLATES, Listing, example_tests

OPEN_DECK_TYPES = ["current_player", "legal_actions", "observations", "transition", "rewards", "termination"]


def _section(text: str, heading: str) -> str:
    start = text.index(heading)
    end = text.find("\n## ", start + len(heading))
    return text[start: end if end > 0 else len(text)]


@pytest.fixture(scope="module")
def calls(tmp_path_factory: pytest.TempPathFactory) -> list:
    llm = ScriptedClient([reply(n) for n in BUGGY_THEN_FIXED])
    synthesize(tmp_path_factory.mktemp("run"), llm)
    return llm.calls


def test_initial_prompt_has_rules_api_games_and_five_tests_per_type(calls: list, train: list) -> None:
    text = calls[0].messages[0].text
    assert RULES.strip() in text
    assert api_block(WORLD_MODEL_API).strip() in text
    for f in WORLD_MODEL_API:
        assert f"def {f.signature}:" in text
    assert "Game 5 (random play, seed 4)" in text and "action: 'x(2,1)'" in text
    # the import rule lists exactly what the sandbox's gate allows, numpy included (not "standard library" only)
    from cwm.sandbox import ALLOWED_IMPORTS

    rule = next(line for line in text.splitlines() if line.startswith("- Import only"))
    assert rule.endswith(": " + ", ".join(sorted(ALLOWED_IMPORTS)) + ".") and "numpy" in rule
    assert "standard-library modules" not in rule
    tests = _section(text, "## Example unit tests")
    for kind in OPEN_DECK_TYPES:
        block = tests.split(f"### {kind} (", 1)[1].split("\n\n", 1)[0]
        assert len(re.findall(r"^- ", block, re.MULTILINE)) == 5, kind
    assert "chance_outcomes" not in tests  # tic-tac-toe has no chance nodes, so no such checks
    assert calls[0].system.strip() == prompts.render("synthesis/system.md").strip()


def test_refinement_prompt_has_the_code_and_one_failed_test_per_type(calls: list) -> None:
    text = calls[1].messages[0].text
    assert len(calls[1].messages) == 1
    assert program("v1_no_diagonals_bad_terminal").strip() in text
    assert RULES.strip() in text and "def get_rewards(state: dict) -> list[float]:" in text
    failing = _section(text, "## Failing tests")
    for kind in ["current_player", "observations", "rewards", "termination"]:
        assert len(re.findall(rf"^\[{kind}\] game \d+, step \d+", failing, re.MULTILINE)) == 1, kind
    assert "[legal_actions]" not in failing and "[transition]" not in failing
    assert "expected: [1.0, -1.0]" in failing and "diff:" in failing
    assert "226/235 checks passed" in failing


@pytest.mark.parametrize("index", [0, 1], ids=["initial", "refine"])
def test_prompts_take_the_value_rules_from_the_rules_table(calls: list, index: int) -> None:
    api = _section(calls[index].messages[0].text, "## The API to implement")
    assert api.count(value_rules.rules_text()) == 1
    # nothing around the table restates a rule by hand (a second wording could drift from the checks)
    rest = api.replace(value_rules.rules_text(), "")
    for phrase in ("-4", "-1", "sum to 1", "bool", "NEW", "modify"):
        assert phrase not in rest, phrase


def test_example_tests_are_spread_and_counted(train: list) -> None:
    _, counts = example_tests(train, per_type=5)
    assert counts == {k: 5 for k in OPEN_DECK_TYPES}
    _, counts = example_tests(train, per_type=100)
    # every game starts at the one initial state: its check is shown once, not once per game
    assert counts["termination"] == 5 and counts["current_player"] == 49 - (len(train) - 1)


def test_a_given_listing_is_used_even_when_it_shows_nothing(train: list) -> None:
    # a listing that shows no step of any game is the caller's listing all the same: every check shown is
    # then at the initial state or spelled out from it (a game's end: the one with the fewest actions)
    nothing = Listing("", tuple((0, 0) for _ in train))
    spelled = ("- at the initial state", "- after actions")
    checks = lambda text: [line for line in text.splitlines() if line.startswith("- ")]  # noqa: E731
    text, counts = example_tests(train, per_type=5, prompt_listing=nothing)
    assert checks(text) and all(line.startswith(spelled) for line in checks(text))
    assert counts["termination"] == 1
    own, _ = example_tests(train, per_type=5)  # the listing worked out here shows the games' steps
    assert not all(line.startswith(spelled) for line in checks(own))


def test_every_template_renders_strictly(train: list) -> None:
    target = world_model_target(RULES, train)
    hashes = target.prompt_hashes()
    prompt_set = {f"synthesis/{n}.md" for n in ("system", "initial", "refine", "followup", "no_code")}
    assert set(hashes) == prompt_set | set(TEMPLATES) | {"sections/answer_first.md"}
    with pytest.raises(prompts.PromptError, match="missing fields"):
        target.render("refine", code="x")
    with pytest.raises(prompts.PromptError, match="unused fields"):
        target.render("followup", failures="f", code="x")


def test_fixed_wording_lives_in_template_files() -> None:
    # STYLE: render.py formats data; every sentence of an example test or note is a file under prompts/
    folder = Path(prompts.__file__).parent
    on_disk = {str(p.relative_to(folder)) for p in (folder / "sections" / "example_test").glob("*.md")}
    assert on_disk <= set(TEMPLATES)
    from cwm.synthesis import render

    source = Path(render.__file__).read_text(encoding="utf-8")
    for name in TEMPLATES:
        words = max(re.split(r"\{\{.*?\}\}", prompts.template(name)), key=len).strip()
        assert len(words) < 10 or words not in source, (name, words)


def test_prompt_hashes_are_in_the_run_record(tmp_path: Path, train: list) -> None:
    result = synthesize(tmp_path, ScriptedClient([reply("03_refine_correct")]))
    config = (tmp_path / "config.json").read_text()
    for name, digest in world_model_target(RULES, train).prompt_hashes().items():
        assert result.prompt_hashes[name] == digest and digest in config


def test_chance_games_show_outcomes_with_probabilities() -> None:
    from cwm.games import trajectories
    from cwm.synthesis.render import render_trajectories

    games = trajectories.collect("leduc_poker", 2, seed=0)
    text, counts = example_tests(games, per_type=5)
    assert counts["chance_outcomes"] == 5
    assert 'get_chance_outcomes(state) == [["Chance outcome:0", 0.16666666666666666]' in text
    # the checks also call get_legal_actions at chance steps (the outcome strings): the examples show it
    outcomes = ", ".join(f'"Chance outcome:{i}"' for i in range(6))
    assert f"- at the initial state: get_legal_actions(state) == [{outcomes}] (any order)" in text
    from cwm.checks import run_checks
    from cwm.games.oracle import oracle_model

    report = run_checks(oracle_model("leduc_poker"), games)
    for kind, stats in report.by_type.items():  # each heading counts exactly the checks of its type
        assert f"### {kind} ({counts[kind]} of {stats.total})" in text
    shown = render_trajectories(games)
    assert "current player -1 (chance)" in shown and "observation of player 1:" in shown


def test_long_games_can_be_cut_in_the_prompt(train: list) -> None:
    from cwm.synthesis.render import render_trajectories

    text = render_trajectories(train, max_steps=2)
    assert text.count("  step ") == 2 * len(train) and "7 more steps not shown" in text
    assert "final state" not in text


def test_rules_headings_sit_under_the_prompt_sections(train: list) -> None:
    from cwm.synthesis.target import nest_headings

    assert nest_headings("# Game\n## Setup\ntext\n") == "### Game\n#### Setup\ntext\n"
    text = world_model_target("# Game\n\n## Setup\nEmpty board.", train).render("initial")
    assert "## Rules of the game\n\n### Game\n\n#### Setup\nEmpty board." in text
