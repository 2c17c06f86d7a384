"""Chance-outcome lists are checked once per distinct list (``cwm.value_rules.chance_outcomes``'s memo), and
a wrong list is refused all the same: by the value rule, and by a planner running on a model whose lists are
right at most chance nodes and wrong at one."""

from __future__ import annotations

from pathlib import Path

import pytest

from cwm import games, model, value_rules
from cwm.sandbox import load_source
from planners.config import SearchConfig
from planners.mcts import MCTS

REFERENCE = Path(__file__).resolve().parent.parent / "data" / "reference"
ROLLS = [(f"{a}-{b}", 1 / 36 if a == b else 2 / 36) for a in range(1, 7) for b in range(a, 7)]


def test_an_equal_list_gets_the_checked_answer_and_any_change_is_checked_again() -> None:
    first = value_rules.chance_outcomes(list(ROLLS))
    assert first == ROLLS and value_rules.chance_outcomes([list(p) for p in ROLLS]) == ROLLS
    first.append(("7-7", 0.5))  # what a caller does with its answer does not reach the memo
    assert value_rules.chance_outcomes(list(ROLLS)) == ROLLS
    heavier = [(a, p * 1.01) if a == "6-6" else (a, p) for a, p in ROLLS]
    with pytest.raises(value_rules.ValueBreach, match="sum to 1"):
        value_rules.chance_outcomes(heavier)
    twice = [*ROLLS[:-1], (ROLLS[0][0], ROLLS[-1][1])]
    with pytest.raises(value_rules.ValueBreach, match="twice"):
        value_rules.chance_outcomes(twice)
    nan = [(a, float("nan")) for a, _ in ROLLS]
    with pytest.raises(value_rules.ValueBreach):
        value_rules.chance_outcomes(nan)
    with pytest.raises(value_rules.ValueBreach):
        value_rules.chance_outcomes(nan)  # a list that failed never enters the memo


class Spinning(str):
    def __hash__(self) -> int:  # a model's str whose hash would never return
        raise AssertionError("hashed a model's str subclass")

    def __eq__(self, other: object) -> bool:
        raise AssertionError("compared a model's str subclass")


def test_a_str_subclass_is_checked_in_full_without_running_its_code() -> None:
    got = value_rules.chance_outcomes([(Spinning(a), p) for a, p in ROLLS])
    assert got == ROLLS and all(type(a) is str for a, _ in got)


WRONG_AT_ONE_DEAL = '''

_right = get_chance_outcomes


def get_chance_outcomes(state):
    outcomes = _right(state)
    if len(outcomes) == 4:  # the board card: its four outcomes weigh 1.04 in all
        return [(a, p * 1.04) for a, p in outcomes]
    return outcomes
'''


def test_a_planner_still_refuses_a_wrong_list_after_right_ones_were_remembered() -> None:
    gt = games.load_game("leduc_poker")
    source = (REFERENCE / "leduc_poker_model.py").read_text(encoding="utf-8")
    right = model.WorldModel(load_source(source, name="leduc_right"), codec=model.ActionCodec.from_game(gt),
                             name="leduc_right")
    wrong = model.WorldModel(load_source(source + WRONG_AT_ONE_DEAL, name="leduc_wrong"),
                             codec=model.ActionCodec.from_game(gt), name="leduc_wrong")
    config = SearchConfig(num_simulations=400, rollouts=1)
    # the right model's lists (the same outcomes, right weights) are checked and remembered first
    MCTS(config, seed=0).search(right.new_initial_state().child(0).child(1))
    with pytest.raises(Exception, match="sum to 1"):
        MCTS(config, seed=0).search(wrong.new_initial_state().child(0).child(1))


def test_an_equal_list_is_checked_once_and_a_changed_or_huge_one_every_time(monkeypatch) -> None:
    checked = []
    full = value_rules._check_chance
    monkeypatch.setattr(value_rules, "_check_chance", lambda value: checked.append(1) or full(value))
    monkeypatch.setattr(value_rules, "_CHECKED_CHANCE", {})
    value_rules.chance_outcomes(list(ROLLS))
    value_rules.chance_outcomes([list(p) for p in ROLLS])  # the same pairs as lists: the same key
    assert len(checked) == 1
    value_rules.chance_outcomes([(a, p) for a, p in reversed(ROLLS)])  # another order is another list
    assert len(checked) == 2
    huge = [("x" * 9_000 + str(i), 0.5) for i in range(2)]  # passes the rules, too long to remember
    value_rules.chance_outcomes(huge)
    value_rules.chance_outcomes(huge)
    assert len(checked) == 4 and len(value_rules._CHECKED_CHANCE) == 2
