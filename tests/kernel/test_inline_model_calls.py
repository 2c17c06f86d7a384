"""A state's own questions (who acts, the move, its rewards) call the model's functions directly instead of
through ``WorldModel.call``: a breach there still reads as ``call`` words it, a tampered read-only input is
still refused at that call, and an exception that only claims to be a contract error is still wrapped."""

from __future__ import annotations

from pathlib import Path

import pytest

from cwm import games, model
from cwm.sandbox import load_source
from cwm.types import ModelContractError

REFERENCE = Path(__file__).resolve().parents[1] / "data" / "reference" / "tic_tac_toe_model.py"
CODEC = model.ActionCodec.from_game(games.load_game("tic_tac_toe"))


def _model(fn: str, body: str, *, gate: bool = True) -> model.WorldModel:
    """The reference model with ``fn`` rebound: ``body`` runs first, then the original answers."""
    extra = f"\n\n_orig = {fn}\n\n\ndef {fn}(*args):\n{body}    return _orig(*args)\n"
    return model.WorldModel(load_source(REFERENCE.read_text() + extra, gate=gate), codec=CODEC, name="ttt")


def _ask(wm: model.WorldModel, fn: str) -> object:
    """Asks the first question that calls ``fn`` (at step 0), on the path the search tree uses."""
    root = wm.new_initial_state()
    if fn == "get_current_player":
        return root.current_player()
    return root.child(root.legal_actions()[0])


FNS = ["get_current_player", "apply_action", "get_rewards"]


@pytest.mark.parametrize("fn", FNS)
def test_an_unbound_dict_method_tried_on_the_input_is_a_breach_at_that_call(fn):
    wm = _model(fn, "    D = type({})\n    D.setdefault(args[0], 'x', 1)\n")
    with pytest.raises(ModelContractError, match=rf"^ttt: step 0: {fn}\(\.\.\.\) tried to modify its input state"):
        _ask(wm, fn)


@pytest.mark.parametrize("fn", FNS)
def test_a_model_exception_names_the_call_and_the_step(fn):
    wm = _model(fn, "    raise ValueError('no such square')\n")
    with pytest.raises(ModelContractError, match=rf"^ttt: step 0: {fn}\(\.\.\.\) raised ValueError: no such square$"):
        _ask(wm, fn)


LIAR = ("class Liar(Exception):\n"
        "    @property\n"
        "    def __class__(self):\n"
        "        return MCE\n\n\n")


@pytest.mark.parametrize("fn", FNS)
def test_an_exception_that_claims_to_be_a_contract_error_is_still_wrapped(fn):
    """By its real type: a model exception whose ``__class__`` says ``ModelContractError`` (isinstance would
    believe it) is named as the model's own failure, never passed through as the library's."""
    body = "    raise Liar('trust me')\n"
    source_extra = LIAR.replace("MCE", "_MCE")
    wm = _model(fn, body, gate=False)
    vars(wm.functions).update({"_MCE": ModelContractError})
    exec(compile(source_extra, "<liar>", "exec"), vars(wm.functions))  # noqa: S102 (a trusted test fixture)
    assert isinstance(vars(wm.functions)["Liar"]("x"), ModelContractError)  # what isinstance would believe
    with pytest.raises(ModelContractError, match=rf"^ttt: step 0: {fn}\(\.\.\.\) raised Liar") as caught:
        _ask(wm, fn)
    assert type(caught.value) is ModelContractError and type(caught.value.__cause__).__name__ == "Liar"


def test_the_call_wrapper_and_the_inline_path_word_a_breach_alike():
    wm = _model("get_current_player", "    raise KeyError('player')\n")
    state = wm.new_initial_state()
    with pytest.raises(ModelContractError) as inline:
        state.current_player()
    with pytest.raises(ModelContractError) as called:
        wm.call("get_current_player", state.raw, step=0)
    assert str(inline.value) == str(called.value) == "ttt: step 0: get_current_player(...) raised KeyError: 'player'"
