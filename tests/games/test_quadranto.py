"""Quadranto rules, pinned on readable positions built from action strings."""

from __future__ import annotations

import json

import pyspiel
import pytest

from cwm import games
from game_rules import quadranto

GAME = games.load_game("quadranto")


def play(actions: str):
    """The state after the space-separated action strings (chance placements written ``(r,c)``)."""
    state = GAME.new_initial_state()
    for name in actions.split():
        state.apply_action(state.string_to_action(name))
    return state


def obs(state, player: int) -> dict:
    return json.loads(state.observation_string(player))


def legal(state) -> list[str]:
    return [state.action_to_string(state.current_player(), a) for a in state.legal_actions()]


def test_chance_places_player0_top_left_then_player1_bottom_right():
    state = GAME.new_initial_state()
    assert state.is_chance_node()
    assert [(state.action_to_string(-1, a), p) for a, p in state.chance_outcomes()] == [
        ("(0,0)", 0.25), ("(0,1)", 0.25), ("(1,0)", 0.25), ("(1,1)", 0.25)]
    state = play("(1,0)")
    assert [state.action_to_string(-1, a) for a, _ in state.chance_outcomes()] == ["(2,2)", "(2,3)", "(3,2)", "(3,3)"]
    state = play("(1,0) (3,3)")
    assert state.current_player() == 0


@pytest.mark.parametrize("start, expected", [
    ("(0,0) (3,3)", ["Right", "Down", "Stay"]),
    ("(0,1) (3,3)", ["Left", "Right", "Down", "Stay"]),
    ("(1,1) (3,3)", ["Left", "Right", "Up", "Down", "Stay"]),
])
def test_moves_off_the_board_are_not_legal(start, expected):
    assert legal(play(start)) == expected


def test_player1_in_the_corner_has_three_actions():
    assert legal(play("(0,0) (3,3) Stay")) == ["Left", "Up", "Stay"]


def test_player0_catches_by_moving_onto_player1():
    state = play("(1,1) (2,2) Down Stay")
    assert not state.is_terminal() and obs(state, 0)["my_square"] == [2, 1]
    state.apply_action(state.string_to_action("Right"))
    assert state.is_terminal() and state.returns() == [1.0, -1.0]


def test_player1_catches_by_moving_onto_player0():
    state = play("(1,1) (2,2) Down Left")
    assert state.is_terminal() and state.returns() == [-1.0, 1.0]
    assert obs(state, 0)["my_square"] == obs(state, 1)["my_square"] == [2, 1]


def test_stay_never_catches():
    state = play("(1,1) (2,2) Stay Stay Stay")
    assert not state.is_terminal() and state.current_player() == 1


@pytest.mark.parametrize("mover", [0, 1])
def test_tokens_can_pass_each_other_only_by_catching(mover):
    """On every pair of adjacent squares, the mover's step towards the other token lands on it and catches:
    moves are one at a time, so two tokens never swap squares or cross without a catch."""
    pairs = 0
    for here in range(16):
        for action in range(4):  # Left, Right, Up, Down
            there = quadranto.step(here, action)
            if there is None:
                continue
            state = play("(0,0) (3,3)")
            state.squares[mover], state.squares[1 - mover], state.moves = here, there, mover
            assert state.current_player() == mover and not state.is_terminal()
            state.apply_action(action)
            assert state.is_terminal() and state.returns()[mover] == 1.0
            assert obs(state, 0)["my_square"] == obs(state, 1)["my_square"] == [there // 4, there % 4]
            pairs += 1
    assert pairs == 2 * (2 * 4 * 3)  # 24 horizontal and 24 vertical ordered adjacent pairs


def test_observation_shows_own_square_and_only_the_opponents_quadrant():
    state = play("(1,1) (2,2) Right Down")  # player 0 on (1,2), player 1 on (3,2)
    assert obs(state, 0) == {"my_square": [1, 2], "opponent_quadrant": "bottom-right", "moves_made": 2}
    assert obs(state, 1) == {"my_square": [3, 2], "opponent_quadrant": "top-right", "moves_made": 2}


def test_same_quadrant_shows_the_quadrant_not_the_square():
    state = play("(0,0) (2,2) Right Up Stay Left")  # player 0 on (0,1), player 1 on (1,1)
    assert obs(state, 0) == {"my_square": [0, 1], "opponent_quadrant": "top-left", "moves_made": 4}
    assert obs(state, 1) == {"my_square": [1, 1], "opponent_quadrant": "top-left", "moves_made": 4}


def test_quadrant_names_follow_the_board_halves():
    state = play("(0,0) (3,3) Right Left Right Up Down")
    assert obs(state, 1)["opponent_quadrant"] == "top-right" and obs(state, 0)["my_square"] == [1, 2]
    assert obs(state, 0)["opponent_quadrant"] == "bottom-right"
    state = play("(1,0) (2,3) Down")
    assert obs(state, 1)["opponent_quadrant"] == "bottom-left"


def test_before_placement_nothing_is_known():
    assert obs(GAME.new_initial_state(), 1) == {"my_square": None, "opponent_quadrant": None, "moves_made": 0}
    state = play("(1,0)")
    assert obs(state, 0) == {"my_square": [1, 0], "opponent_quadrant": None, "moves_made": 0}
    assert obs(state, 1) == {"my_square": None, "opponent_quadrant": "top-left", "moves_made": 0}


def test_twenty_moves_without_a_catch_is_a_draw():
    state = play("(0,0) (3,3)" + " Stay" * 19)
    assert not state.is_terminal() and state.current_player() == 1
    state.apply_action(state.string_to_action("Stay"))
    assert state.is_terminal() and state.returns() == [0.0, 0.0]
    assert obs(state, 0)["moves_made"] == 20 and state.legal_actions() == []


def test_a_catch_on_the_twentieth_move_wins():
    # Player 0 waits on (1,1); player 1 walks (2,2) -> (2,1) on move 18 and steps Up onto it on move 20.
    state = play("(1,1) (2,2)" + " Stay Stay" * 8 + " Stay Left Stay")
    assert not state.is_terminal() and obs(state, 1) == {"my_square": [2, 1], "opponent_quadrant": "top-left",
                                                         "moves_made": 19}
    state.apply_action(state.string_to_action("Up"))
    assert state.is_terminal() and state.returns() == [-1.0, 1.0]


# -- information hygiene -----------------------------------------------------------------------------


@pytest.mark.parametrize("hidden", ["(2,2)", "(2,3)", "(3,2)", "(3,3)"])
def test_player0_cannot_tell_where_in_the_quadrant_player1_is(hidden):
    """Worlds that differ only in player 1's exact square give player 0 the same view throughout."""
    reference = play("(0,0) (2,2) Right Stay Down Stay")
    state = play(f"(0,0) {hidden} Right Stay Down Stay")
    assert state.observation_string(0) == reference.observation_string(0)
    assert state.information_state_string(0) == reference.information_state_string(0)
    assert state.observation_tensor(0) == reference.observation_tensor(0)
    assert state.information_state_tensor(0) == reference.information_state_tensor(0)


def test_observation_and_infostate_never_contain_the_opponents_square():
    state = play("(0,1) (3,2) Down Up Left Left")  # p0 at (1,0), p1 at (2,1)
    assert obs(state, 0) == {"my_square": [1, 0], "opponent_quadrant": "bottom-left", "moves_made": 4}
    for text in (state.observation_string(0), state.information_state_string(0)):
        for square in ("[3,2]", "[2,2]", "[2,1]"):  # every square player 1 stood on
            assert square not in text.replace(" ", "")


def resampled_squares(state, player: int) -> set[tuple[int, int]]:
    sampler = pyspiel.UniformProbabilitySampler(0, 0.0, 1.0)
    return {tuple(json.loads(str(state.resample_from_infostate(player, sampler)))["squares"][1 - player])
            for _ in range(60)}


def test_resampling_covers_every_square_the_opponent_may_be_on():
    state = play("(0,0) (2,2) Right Up")  # player 1 moved into the top-right quadrant: (1,2) or (1,3)
    assert resampled_squares(state, 0) == {(1, 2), (1, 3)}


def test_resampling_excludes_squares_the_player_stepped_on_without_a_catch():
    # Player 1 entered bottom-left with Left, so it was on (2,1) or (3,1); its next move kept it there:
    # (2,0), (2,1), (3,0) or (3,1). Player 0 then stepped onto (2,1) without a catch, ruling that out.
    state = play("(1,1) (2,2) Stay Left Stay Down Down")
    assert not state.is_terminal()
    assert resampled_squares(state, 0) == {(2, 0), (3, 0), (3, 1)}
