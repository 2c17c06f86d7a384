"""Value checks: the hand-written tic-tac-toe values pass every rule, and each kind of broken value fails the rule
it breaks, with the game, step and call named (in the sandbox, as candidates are checked)."""

from __future__ import annotations

import pytest

from cwm.checks.value import VALUE_TYPES
from cwm.sandbox import Sandbox
from cwm.sandbox.checkers import value_checker

from .conftest import FLIPPED, GOOD, NEUTRAL, TTT

UTILITY = (-1.0, 1.0)
BODY = "def get_value(state, player_id):\n"

def _neutral(before: str = "", at_the_end: str = "    return 0.0\n", top: str = "") -> str:
    """The neutral value (right at every terminal state) with one fault written in."""
    source = NEUTRAL.replace("    board = state", before + "    board = state").replace("    return 0.0\n", at_the_end)
    return top + source


BROKEN = {
    # id: (source, the one test type that must fail)
    "nan": (BODY + "    return float('nan')\n", "value_number"),
    "a-string": (BODY + "    return 'good'\n", "value_number"),
    "a-bool": (BODY + "    return True\n", "value_number"),
    "raises": (BODY + "    return 1 / (len(state['board']) - 9)\n", "value_number"),
    "out-of-range": (_neutral(at_the_end="    return 3.0\n"), "value_range"),
    "mutation": (BODY + "    state['board'][0] = 'x'\n    return 0.0\n", "value_mutation"),
    "slow": (_neutral(before="    n = 0\n    for i in range(1_000_000 if state['board'].count('.') == 9 else 0):\n        n += i\n"),
             "value_time"),
    "nondeterministic": (_neutral(at_the_end="    CALLS.append(1)\n    return 0.1 * (len(CALLS) % 2)\n",
                                  top="CALLS = []\n\n"), "value_determinism"),
    "wrong-at-the-end": (BODY + "    return 0.5\n", "value_terminal"),
}


@pytest.fixture(scope="module")
def box():
    with Sandbox() as sandbox:
        yield sandbox


@pytest.fixture(scope="module")
def check(box, ttt_games):
    return value_checker(TTT, ttt_games, utility=UTILITY, sandbox=box)


@pytest.mark.parametrize("name", ["good", "flipped", "neutral"])
def test_the_hand_written_values_pass_every_check(check, ttt_games, name: str) -> None:
    report = check({"good": GOOD, "flipped": FLIPPED, "neutral": NEUTRAL}[name])
    states = sum(len(t.action_strings) + 1 for t in ttt_games)
    assert report.all_passed, report.failures[:1]
    assert set(report.by_type) == set(VALUE_TYPES)
    assert report.by_type["value_number"].total == 2 * states  # every state, both players
    assert report.by_type["value_terminal"].total == 2 * len(ttt_games)


@pytest.mark.parametrize("name", sorted(BROKEN))
def test_a_broken_value_fails_the_rule_it_breaks_at_a_named_step(check, name: str) -> None:
    source, rule = BROKEN[name]
    report = check(source)
    assert not report.all_passed and not report.error
    assert report.by_type[rule].passed < report.by_type[rule].total
    failure = next(f for f in report.failures if f.test_type == rule)
    assert failure.call.startswith("get_value(state, player_id=")
    assert failure.step >= 0 and f"step {failure.step}" in failure.render()
    assert {t for t, s in report.by_type.items() if s.passed < s.total} == {rule}  # and no other rule


def test_the_in_process_checker_agrees_with_the_sandbox(check, ttt_games) -> None:
    here = value_checker(TTT, ttt_games, utility=UTILITY)
    for source in (GOOD, BROKEN["nan"][0], BROKEN["out-of-range"][0]):
        a, b = here(source), check(source)
        assert {k: (v.passed, v.total) for k, v in a.by_type.items()} == {k: (v.passed, v.total) for k, v in b.by_type.items()}


def test_forbidden_code_is_refused_before_it_runs(check) -> None:
    report = check("import os\n\n" + BODY + "    os.system('true')\n    return 0.0\n")
    assert report.error.startswith("static") and report.executed == 0
