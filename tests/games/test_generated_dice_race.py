"""The dice-race family of generated games: each rule a parameter switches on decides a scripted position
(rolls and moves written as the rules write them) as its rules sentence says, through the engine."""

from __future__ import annotations

import dataclasses

import pytest

from cwm.games.generated import dice_race
from cwm.games.generated.dice_race import DiceRaceParams
from tests.games.generated_helpers import build, legal_names, play

PLAIN = DiceRaceParams(track=10, pieces=1, faces=(1, 2, 3, 4, 5, 6), weights=(1,) * 6, capture=False, safe=(),
                       shortcuts=(), exact_finish=False, extra_turn=False, roll_limit=100)


def game(**changes):
    """A game of ``PLAIN`` with ``changes``, registered under a fresh test name."""
    return build(dice_race, PLAIN, **changes)


def test_the_die_comes_up_with_its_weights_over_their_sum():
    state = game(faces=(1, 3, 6), weights=(1, 2, 3)).new_initial_state()
    assert state.is_chance_node()
    assert state.chance_outcomes() == [(1, pytest.approx(1 / 6)), (3, pytest.approx(2 / 6)), (6, pytest.approx(3 / 6))]
    assert "4 with chance" not in dice_race._die_sentence(dataclasses.replace(PLAIN, faces=(1, 3, 6),
                                                                               weights=(1, 2, 3)))
    assert "3 with chance 1/3" in dice_race._die_sentence(dataclasses.replace(PLAIN, faces=(1, 3, 6),
                                                                               weights=(1, 2, 3)))


def test_a_piece_enters_on_the_roll_and_may_not_land_on_its_own_piece():
    g = game(pieces=2)
    state = play(g, "roll 3, enter, roll 1, enter, roll 3")
    assert state.observation_dict()["pieces"] == [[0, 3], [0, 1]]
    assert legal_names(state) == {"move 3"}, "entering would land on its own piece on 3"
    # track 4, finish 5: the piece on 3 would overshoot, the one at home would land on 3: no move, a pass
    stuck = play(game(pieces=2, exact_finish=True, track=4), "roll 3, enter, roll 1, enter, roll 3")
    assert legal_names(stuck) == {"pass"}
    after = play(game(pieces=2, exact_finish=True, track=4), "roll 3, enter, roll 1, enter, roll 3, pass")
    assert after.observation_dict() == {"pieces": [[0, 3], [0, 1]], "to_move": 1, "roll": None, "rolls": 3}
    assert legal_names(play(game(exact_finish=True, track=4), "roll 4, enter, roll 1, enter, roll 6")) == {"pass"}


def test_exact_finish_refuses_an_overshoot_and_accepts_the_exact_roll():
    exact = game(exact_finish=True)
    state = play(exact, "roll 6, enter, roll 1, enter, roll 6")  # player 0 on 6; 6 + 6 = 12 > finish 11
    assert legal_names(state) == {"pass"}
    won = play(exact, "roll 6, enter, roll 1, enter, roll 5, move 6")
    assert won.is_terminal() and won.returns() == [1.0, -1.0]
    loose = play(game(), "roll 6, enter, roll 1, enter, roll 6, move 6")
    assert loose.is_terminal() and loose.returns() == [1.0, -1.0], "without exact finish, past the end finishes"


def test_a_shortcut_carries_a_piece_on_and_its_head_must_be_free_of_own_pieces():
    g = game(shortcuts=((4, 9),), pieces=2)
    state = play(g, "roll 4, enter")
    assert state.observation_dict()["pieces"][0] == [0, 9]
    blocked = play(g, "roll 4, enter, roll 1, enter, roll 4")
    assert legal_names(blocked) == {"move 9"}, "entering on 4 would go on to 9, where its own piece stands"
    assert play(game(), "roll 4, enter").observation_dict()["pieces"][0] == [4]


def test_capture_sends_the_opponent_home_except_on_a_safe_square():
    moves = "roll 3, enter, roll 3, enter"
    assert play(game(capture=True), moves).observation_dict()["pieces"] == [[0], [3]]
    assert play(game(capture=False), moves).observation_dict()["pieces"] == [[3], [3]]
    assert play(game(capture=True, safe=(3,)), moves).observation_dict()["pieces"] == [[3], [3]]
    # a capture decides the race: player 1's piece one roll from the finish goes home
    late = play(game(capture=True, track=6), "roll 2, enter, roll 5, enter, roll 3, move 2")
    assert late.observation_dict()["pieces"] == [[5], [0]]


def test_the_highest_face_gives_another_roll_but_not_after_winning():
    g = game(extra_turn=True, faces=(1, 2, 6), weights=(1, 1, 1))
    state = play(g, "roll 6, enter")
    assert state.is_chance_node() and state.observation_dict()["to_move"] == 0
    assert play(g, "roll 2, enter").observation_dict()["to_move"] == 1
    won = play(g, "roll 6, enter, roll 6, move 6")
    assert won.is_terminal() and won.returns() == [1.0, -1.0]
    assert play(game(faces=(1, 2, 6), weights=(1, 1, 1)), "roll 6, enter").observation_dict()["to_move"] == 1
    passed = play(game(extra_turn=True, faces=(1, 2, 6), weights=(1, 1, 1), track=3, exact_finish=True), "roll 6, pass")
    assert passed.observation_dict()["to_move"] == 0, "a pass on the highest face rolls again too"


def test_all_pieces_must_finish_to_win_and_the_roll_limit_draws():
    two = play(game(pieces=2, track=4), "roll 6, enter, roll 1, enter")
    assert not two.is_terminal(), "one of two pieces finished is not a win"
    both = play(game(pieces=2, track=4), "roll 6, enter, roll 1, enter, roll 6, enter")
    assert both.returns() == [1.0, -1.0]
    limit = play(game(roll_limit=2), "roll 1, enter, roll 1, enter")
    assert limit.is_terminal() and limit.returns() == [0.0, 0.0]
