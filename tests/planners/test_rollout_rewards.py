"""A playout remembers the last rewards list it checked by the identity of its items (exact numbers are
immutable, so the same objects are the same values) and checks any other list in full: a model that returns
its constants is not re-checked, and one that slips a wrong value in after sound ones is still refused."""

from __future__ import annotations

import random
from pathlib import Path

import pytest

from cwm import games, model
from cwm.sandbox import load_source
from cwm.types import ModelContractError
from planners.rollout import rollout_returns

REFERENCE = Path(__file__).resolve().parents[1] / "data" / "reference" / "tic_tac_toe_model.py"


def _with_rewards(body: str, name: str) -> model.WorldModel:
    """The reference tic-tac-toe model with ``get_rewards`` replaced by ``body`` (which may call the original
    as ``_rewards``)."""
    source = REFERENCE.read_text() + "\n\n_rewards = get_rewards\n\n\n" + body
    return model.WorldModel(load_source(source), codec=model.ActionCodec.from_game(
        games.load_game("tic_tac_toe")), name=name)


FRESH = ("def get_rewards(state):\n"  # new float objects at every call: nothing is remembered
         "    return [float(str(r)) for r in _rewards(state)]\n")
CONSTANT = ("_ROWS = {(0.0, 0.0): [0.0, 0.0], (1.0, -1.0): [1.0, -1.0], (-1.0, 1.0): [-1.0, 1.0]}\n\n\n"
            "def get_rewards(state):\n"  # the same float objects at every call
            "    return list(_ROWS[tuple(_rewards(state))])\n")


def test_remembered_rewards_score_playouts_exactly_as_checked_ones():
    fresh, constant = _with_rewards(FRESH, "fresh"), _with_rewards(CONSTANT, "constant")
    for seed in range(20):
        got = [rollout_returns(m.new_initial_state(), 10, random.Random(seed)) for m in (fresh, constant)]
        assert got[0] == got[1]
    # the playouts reach decided games, so the remembered lists include paying ones
    assert any(rollout_returns(constant.new_initial_state(), 1, random.Random(s)) != [0.0, 0.0] for s in range(20))


@pytest.mark.parametrize("wrong, named", [
    ("float('nan')", "nan"), ("float('inf')", "inf"), ("True", "True"), ("'1'", "'1'"), ("None", "None")])
def test_a_wrong_reward_after_remembered_ones_is_refused(wrong, named):
    # sound constants for the first moves, then a wrong item in the same list object (mutated in place)
    body = ("_SAME = [0.0, 0.0]\n\n\n"
            "def get_rewards(state):\n"
            "    if state['board'].count('.') <= 6:\n"
            f"        _SAME[0] = {wrong}\n"
            "    return _SAME\n")
    state = _with_rewards(body, "slips").new_initial_state()
    with pytest.raises(ModelContractError, match="in a rollout") as caught:
        rollout_returns(state, 1, random.Random(0))
    assert named in str(caught.value)


def test_a_wrong_length_after_remembered_rewards_is_refused():
    body = ("_Z = 0.0\n\n\n"
            "def get_rewards(state):\n"
            "    return [_Z, _Z, _Z] if state['board'].count('.') <= 6 else [_Z, _Z]\n")
    with pytest.raises(ModelContractError, match="in a rollout.*2 numbers"):
        rollout_returns(_with_rewards(body, "grows").new_initial_state(), 1, random.Random(0))


@pytest.mark.parametrize("answer", ["True", "2", "-2", "1.0"])
def test_a_current_player_outside_the_game_is_refused_in_a_playout(answer):
    source = REFERENCE.read_text() + (
        "\n\n_current = get_current_player\n\n\n"
        "def get_current_player(state):\n"
        f"    return {answer} if state['board'].count('.') == 7 else _current(state)\n")
    state = model.WorldModel(load_source(source), codec=model.ActionCodec.from_game(
        games.load_game("tic_tac_toe")), name="odd").new_initial_state()
    with pytest.raises(ModelContractError, match="in a rollout.*get_current_player"):
        rollout_returns(state, 1, random.Random(0))
