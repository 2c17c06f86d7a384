"""A playout takes only actions the game has, as the tree does (``ModelState`` refuses any other): a model
that offers an unknown action, or something that is not a string, is stopped with the action named, before
the model is asked to apply it."""

from __future__ import annotations

import random
from pathlib import Path

import pytest

from cwm import games, model
from cwm.sandbox import load_source
from cwm.types import ModelContractError
from planners.rollout import rollout_returns

REFERENCE = Path(__file__).resolve().parents[1] / "data" / "reference" / "tic_tac_toe_model.py"


def _offering(extra: str) -> model.WorldModel:
    """The reference model, whose legal actions after the first move also hold ``extra`` (a Python literal)."""
    source = REFERENCE.read_text() + (
        "\n\n_legal = get_legal_actions\n\n\n"
        f"def get_legal_actions(state):\n    legal = _legal(state)\n"
        f"    return legal + [{extra}] if legal and len(legal) < 9 else legal\n")
    return model.WorldModel(load_source(source), codec=model.ActionCodec.from_game(
        games.load_game("tic_tac_toe")), name="offers")


@pytest.mark.parametrize("extra, named", [('"x(9,9)"', "'x(9,9)'"), ("7", "7")])
def test_a_playout_refuses_an_action_the_game_does_not_have(extra, named):
    state = _offering(extra).new_initial_state()
    applied = state.child(state.legal_actions()[0])  # the tree's own step: the first move is sound
    with pytest.raises(ModelContractError, match="in a rollout") as caught:
        for seed in range(50):  # some playout draws the extra action at its first step
            rollout_returns(applied, 1, random.Random(seed))
    assert named in str(caught.value)


def test_the_game_s_own_actions_play_out_as_before():
    sound = model.WorldModel(load_source(REFERENCE.read_text()), codec=model.ActionCodec.from_game(
        games.load_game("tic_tac_toe")), name="sound")
    returns = rollout_returns(sound.new_initial_state(), 50, random.Random(0))
    assert len(returns) == 2 and abs(returns[0] + returns[1]) < 1e-9


def test_a_str_subclass_action_plays_as_its_plain_string_without_its_methods_called():
    source = REFERENCE.read_text() + (
        "\n\nclass _Loud(str):\n    def __hash__(self):\n        raise RuntimeError('hashed')\n\n"
        "    def __eq__(self, other):\n        raise RuntimeError('compared')\n\n\n"
        "_legal = get_legal_actions\n\n\n"
        "def get_legal_actions(state):\n    return [_Loud(a) for a in _legal(state)]\n")
    loud = model.WorldModel(load_source(source), codec=model.ActionCodec.from_game(
        games.load_game("tic_tac_toe")), name="loud")
    returns = rollout_returns(loud.new_initial_state(), 20, random.Random(0))
    assert len(returns) == 2 and abs(returns[0] + returns[1]) < 1e-9
