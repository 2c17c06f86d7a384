"""Generalized tic-tac-toe (OpenSpiel mnk, 6x6, four in a row): the facts its rules file states."""

from __future__ import annotations

import pytest

from cwm import games

GAME = games.load_game("gen_tic_tac_toe")


def play(moves: str):
    state = GAME.new_initial_state()
    for name in moves.split():
        state.apply_action(state.string_to_action(name))
    return state


def test_x_moves_first_and_actions_name_the_mover_and_cell():
    state = play("")
    assert state.current_player() == 0
    names = [state.action_to_string(0, a) for a in state.legal_actions()]
    assert names[:3] == ["x(0,0)", "x(0,1)", "x(0,2)"] and names[-1] == "x(5,5)" and len(names) == 36
    assert state.string_to_action("x(2,3)") == 6 * 2 + 3
    state = play("x(0,3)")
    assert state.current_player() == 1 and state.action_to_string(1, 7) == "o(1,1)"
    assert play("x(0,3) o(1,1)").observation_string(0) == "...x..\n.o....\n" + "......\n" * 3 + "......"


@pytest.mark.parametrize("line, winner", [
    ("x(0,0) o(5,5) x(0,1) o(4,5) x(0,2) o(3,5) x(0,3)", 0),      # row
    ("x(0,0) o(1,1) x(0,5) o(2,1) x(5,5) o(3,1) x(5,0) o(4,1)", 1),  # column
    ("x(0,0) o(0,5) x(1,1) o(1,5) x(2,2) o(2,5) x(3,3)", 0),      # diagonal
    ("x(0,5) o(0,0) x(1,4) o(1,0) x(2,3) o(2,0) x(3,2)", 0),      # anti-diagonal
    ("x(0,0) o(5,5) x(0,1) o(4,5) x(0,3) o(3,0) x(0,4) o(3,1) x(0,2)", 0),  # five in a row counts
])
def test_four_in_a_line_wins(line, winner):
    state = play(line)
    assert state.is_terminal() and state.returns()[winner] == 1.0 and state.returns()[1 - winner] == -1.0


def test_three_in_a_row_does_not_win():
    state = play("x(0,0) o(5,5) x(0,1) o(4,5) x(0,2)")
    assert not state.is_terminal()


def test_full_board_without_a_line_is_a_draw():
    # Rows alternate in pairs of marks so no line of four forms in any direction.
    rows = ["xxooxx", "ooxxoo", "xxooxx", "ooxxoo", "xxooxx", "ooxxoo"]
    xs = [(r, c) for r in range(6) for c in range(6) if rows[r][c] == "x"]
    os_ = [(r, c) for r in range(6) for c in range(6) if rows[r][c] == "o"]
    moves = " ".join(f"x({a},{b}) o({c},{d})" for (a, b), (c, d) in zip(xs, os_))
    state = play(moves)
    assert state.is_terminal() and state.returns() == [0.0, 0.0]


def test_information_state_is_the_action_id_list():
    state = play("x(0,3) o(1,1)")
    assert state.information_state_string(0) == state.information_state_string(1) == "3, 7"
