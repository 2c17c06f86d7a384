"""Contract breaches raise ModelContractError naming the model, the step (actions taken so far) and the call;
rewards that are not numbers are such a breach, not a bare ValueError from float()."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from cwm import games, model
from cwm.types import ModelContractError

SOURCE = (Path(__file__).resolve().parent.parent / "data" / "reference" / "tic_tac_toe_model.py").read_text(
    encoding="utf-8")


class _Patched:
    """The reference tic-tac-toe model with some functions replaced (a trusted object: no static gate)."""

    def __init__(self, **replacements: Any):
        self._module = model.load_source(SOURCE, name="ttt_patched", gate=False)
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
    real = model.load_source(SOURCE, name="real", gate=False)

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
