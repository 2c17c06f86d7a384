"""Contract breaches raise ModelContractError naming the model, the step (actions taken so far) and the call;
rewards that are not numbers are such a breach, not a bare ValueError from float()."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from cwm import games, model, model_state
from cwm.sandbox import load_source
from cwm.types import ModelContractError

SOURCE = (Path(__file__).resolve().parent.parent / "data" / "reference" / "tic_tac_toe_model.py").read_text(
    encoding="utf-8")


class _Patched:
    """The reference tic-tac-toe model with some functions replaced (a trusted object: no static gate)."""

    def __init__(self, **replacements: Any):
        self._module = load_source(SOURCE, name="ttt_patched", gate=False)
        self.__dict__.update(replacements)

    def __getattr__(self, name: str) -> Any:
        return getattr(self._module, name)


def _state(**replacements: Any) -> model.ModelState:
    wm = model.WorldModel(_Patched(**replacements), codec=model.ActionCodec.from_game(games.load_game("tic_tac_toe")),
                          name="ttt")
    return wm.new_initial_state()


@pytest.mark.parametrize("rewards", [["win", "loss"], [None, 0.0], None, [1.0], {"x": 1}],
                         ids=["strings", "none-entry", "none", "too-short", "dict"])
def test_non_numeric_rewards_are_a_contract_error_naming_the_call(rewards: Any) -> None:
    state = _state(get_rewards=lambda s: rewards)
    with pytest.raises(ModelContractError, match=r"^ttt: step 0: get_rewards \(after 'x\(0,0\)'\) must return a "
                                                 r"list of 2 numbers"):
        state.apply_action_string("x(0,0)")


def test_breaches_name_the_step() -> None:
    state = _state()
    for move in ["x(0,0)", "o(1,1)"]:
        state.apply_action_string(move)
    with pytest.raises(ModelContractError, match=r"^ttt: step 2: action 'o\(0,1\)' is not legal here"):
        state.apply_action_string("o(0,1)")
    with pytest.raises(ModelContractError, match=r"^ttt: step 2: action id 0 is not legal here"):
        state.child(0)


def test_a_model_exception_names_the_step_and_the_call() -> None:
    real = load_source(SOURCE, name="real", gate=False)

    def apply_action(s: dict, a: str) -> dict:
        if a == "x(2,2)":
            raise KeyError("board")
        return real.apply_action(s, a)

    state = _state(apply_action=apply_action)
    for move in ["x(0,0)", "o(1,1)", "x(0,2)"]:
        state.apply_action_string(move)
    state.apply_action_string("o(0,1)")
    with pytest.raises(ModelContractError, match=r"^ttt: step 4: apply_action\(\.\.\.\) raised KeyError"):
        state.apply_action_string("x(2,2)")


def test_bad_current_player_names_the_step() -> None:
    state = _state(get_current_player=lambda s: 7)
    with pytest.raises(ModelContractError, match=r"^ttt: step 0: get_current_player returned 7"):
        state.current_player()


class _Seat(int):
    """An int subclass, as an IntEnum player would be: a valid answer."""


class _Action(str):
    """A str subclass: a valid action string."""


@pytest.mark.parametrize("answer", [True, 1.0, "0", None, 2, -2], ids=["bool", "float", "str", "none", "2", "-2"])
def test_current_player_answers_outside_the_contract_are_breaches(answer: Any) -> None:
    with pytest.raises(ModelContractError, match=r"^ttt: step 0: get_current_player returned .*expected 0\.\.1"):
        _state(get_current_player=lambda s: answer).current_player()


def test_an_int_subclass_is_a_valid_player() -> None:
    assert _state(get_current_player=lambda s: _Seat(0)).current_player() == 0


@pytest.mark.parametrize("answer", [("x(0,0)",), ["x(0,0)", 3], "x(0,0)", None],
                         ids=["tuple", "non-str-entry", "a-string", "none"])
def test_legal_actions_that_are_not_a_list_of_str_are_breaches(answer: Any) -> None:
    state = _state(get_legal_actions=lambda s: answer)
    with pytest.raises(ModelContractError, match=r"^ttt: step 0: get_legal_actions must return a list of str"):
        state.legal_actions()


def test_no_legal_actions_at_a_non_terminal_state_is_a_breach() -> None:
    with pytest.raises(ModelContractError, match=r"^ttt: step 0: no legal actions at a non-terminal state"):
        _state(get_legal_actions=lambda s: []).legal_action_strings()


def test_str_subclasses_are_valid_actions_with_their_ids() -> None:
    real = load_source(SOURCE, name="real", gate=False)
    state = _state(get_legal_actions=lambda s: [_Action(a) for a in real.get_legal_actions(s)])
    assert state.legal_actions() == list(range(9))
    assert state.action_to_string(0, 4) == "x(1,1)"


def test_states_with_the_same_legal_actions_share_one_decoding_and_the_memo_is_bounded(monkeypatch) -> None:
    root = _state()
    a = root.child_from_string("x(0,0)").child_from_string("o(1,1)")
    b = root.child_from_string("x(1,1)").child_from_string("o(0,0)")  # the same two cells taken
    assert a.legal_actions() == b.legal_actions()
    assert a._strings_by_id() is b._strings_by_id()
    monkeypatch.setattr(model_state, "DECODED_LIMIT", 2)
    memo = root.model.decoded
    for move in ["x(2,2)", "x(2,1)", "x(2,0)"]:
        root.child_from_string(move).legal_actions()
        assert len(memo) <= 2


class _SpinningDict(dict):
    """A dict subclass whose own item access and iteration never return (a hostile model's state)."""

    def __getitem__(self, key: Any) -> Any:
        raise AssertionError("the library called the state's own __getitem__")

    def __iter__(self) -> Any:
        raise AssertionError("the library called the state's own __iter__")

    def keys(self) -> Any:
        raise AssertionError("the library called the state's own keys()")


def test_a_dict_subclass_state_is_copied_without_calling_its_methods() -> None:
    real = load_source(SOURCE, name="real", gate=False)
    state = _state(apply_action=lambda s, a: _SpinningDict(real.apply_action(s, a)))
    child = state.child_from_string("x(0,0)")
    assert type(child.raw) is not _SpinningDict and child.raw["board"][0] == "x"
    assert child.legal_action_strings()[0] == "o(0,1)"


def test_a_reward_too_large_for_a_float_is_a_contract_error() -> None:
    state = _state(get_rewards=lambda s: [10**5000, 0])
    with pytest.raises(ModelContractError, match=r"^ttt: step 0: get_rewards \(after 'x\(0,0\)'\) must return a "
                                                 r"list of 2 numbers \(finite\).*an int of 16610 bits"):
        state.apply_action_string("x(0,0)")
