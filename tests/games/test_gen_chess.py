"""Generalized chess (army5x5a) rules, pinned on readable positions and move strings."""

from __future__ import annotations

import itertools
import json

import pytest

from cwm import games
from game_rules import gen_chess

GAME = games.load_game("gen_chess")
SIZE, NUM = gen_chess.SIZE, gen_chess.NUM_SQUARES


def play(moves: str = ""):
    state = GAME.new_initial_state()
    for name in moves.split():
        state.apply_action(state.string_to_action(name))
    return state


def position(rows: list[str], to_move: int = 0):
    """A state with the given board (rank 5 first, files A..E), for pinning move patterns."""
    state = GAME.new_initial_state()
    state.board = [c for row in reversed(rows) for c in row]
    state.to_move = to_move
    return state


def legal(state) -> list[str]:
    return [state.action_to_string(state.current_player(), a) for a in state.legal_actions()]


def moves_from(state, square: str) -> set[str]:
    return {m.split("_to_")[1] for m in legal(state) if m.startswith(square + "_to_")}


def test_start_position_and_first_moves():
    state = play()
    assert json.loads(state.observation_string(1)) == {
        "board": ["cigic", ".....", ".....", ".....", "CIGIC"], "to_move": 0, "plies": 0}
    assert legal(state) == ["A1_to_A2", "A1_to_C3", "B1_to_A2", "B1_to_B2", "B1_to_C2", "C1_to_B2", "C1_to_C2",
                            "C1_to_D2", "D1_to_C2", "D1_to_D2", "D1_to_E2", "E1_to_E2", "E1_to_C3"]


def test_moves_update_the_board_and_alternate():
    state = play("E1_to_C3 B5_to_B4")
    assert json.loads(state.observation_string(0)) == {
        "board": ["c.gic", ".i...", "..C..", ".....", "CIGI."], "to_move": 0, "plies": 2}


def test_general_steps_one_square_in_eight_directions():
    state = position([".....", ".....", "..G..", ".....", "....g"])
    assert moves_from(state, "C3") == {"B2", "C2", "D2", "B3", "D3", "B4", "C4", "D4"}
    assert moves_from(position(["....g", ".....", ".....", ".....", "G...."]), "A1") == {"A2", "B1", "B2"}


@pytest.mark.parametrize("player, piece, expected", [
    (0, "I", {"C4", "B4", "D4", "B3", "D3"}),  # forward is up for player 0
    (1, "i", {"C2", "B2", "D2", "B3", "D3"}),  # and down for player 1
])
def test_infantry_moves_forward_diagonally_forward_or_sideways(player, piece, expected):
    rows = ["G....", ".....", f"..{piece}..", ".....", "....g"]
    assert moves_from(position(rows, player), "C3") == expected


def test_infantry_on_the_far_rank_can_only_step_sideways():
    state = position(["..I..", ".....", ".....", ".....", "G...g"])
    assert moves_from(state, "C5") == {"B5", "D5"}


def test_cavalry_steps_orthogonally_or_jumps_two_diagonally():
    state = position([".....", ".....", "..C..", ".....", "G...g"])  # own general on A1 blocks that jump
    assert moves_from(state, "C3") == {"B3", "D3", "C2", "C4", "E1", "A5", "E5"}
    assert moves_from(position(["....g", ".....", ".....", ".....", "C...G"]), "A1") == {"A2", "B1", "C3"}


def test_cavalry_jumps_over_pieces_in_between():
    state = position(["....g", ".....", ".....", ".I...", "C...G"])
    assert "C3" in moves_from(state, "A1")
    state = position(["....g", ".....", ".....", ".i...", "C...G"])
    assert "C3" in moves_from(state, "A1")


def test_own_pieces_block_enemy_pieces_are_captured():
    state = position(["....g", ".....", "..I..", "..C..", "G...."])
    assert "C3" not in moves_from(state, "C2")  # own infantry stands there
    state = position(["....g", ".....", "..i..", "..C..", "G...."])
    assert "C3" in moves_from(state, "C2")
    state.apply_action(state.string_to_action("C2_to_C3"))
    assert json.loads(state.observation_string(0))["board"] == ["....g", ".....", "..C..", ".....", "G...."]
    assert not state.is_terminal()


def test_edge_moves_stay_on_the_board():
    state = position(["C...g", ".....", ".....", ".....", "G...."])
    assert moves_from(state, "A5") == {"A4", "B5", "C3"}
    state = position(["....g", ".....", ".....", ".....", "G...I"])
    assert moves_from(state, "E1") == {"E2", "D2", "D1"}


def test_information_state_is_the_move_list_for_both_players():
    state = play("E1_to_C3 B5_to_B4")
    for player in (0, 1):
        assert json.loads(state.information_state_string(player)) == {"moves": ["E1_to_C3", "B5_to_B4"]}


def test_capturing_the_general_wins():
    state = play("E1_to_C3 A5_to_A4 C3_to_C4 A4_to_A3")
    assert not state.is_terminal()
    state.apply_action(state.string_to_action("C4_to_C5"))
    assert state.is_terminal() and state.returns() == [1.0, -1.0]
    assert json.loads(state.observation_string(0))["board"][0] == ".iCic"
    state = position([".....", ".....", "c....", ".....", "..G.."], to_move=1)
    state.apply_action(state.string_to_action("A3_to_C1"))
    assert state.is_terminal() and state.returns() == [-1.0, 1.0]


def test_pass_is_legal_only_without_a_move():
    assert "PASS" not in legal(play())
    # Artificial position: player 1 has no piece at all, so it has no move (with a full army a side always
    # has one; see the rules file).
    state = position([".....", ".....", ".....", ".....", "G...."], to_move=1)
    assert legal(state) == ["PASS"]
    state.apply_action(state.string_to_action("PASS"))
    assert state.current_player() == 0 and state.plies == 1 and not state.is_terminal()


def test_a_side_with_its_general_always_has_a_move():
    """Why PASS never happens in play: spot checks of a general boxed in by its own pieces."""
    for rows in (["....g", ".....", ".....", "CI...", "GI..."], ["....g", ".....", ".....", "IC...", "GC..."]):
        assert "PASS" not in legal(position(rows))


def boxed_in_generals(player: int):
    """Every board where ``player``'s general has no move of its own (no enemy pieces: they never block).

    A general can move unless all its neighbours hold own pieces (enemy ones it captures). Off the corners
    a square has at least five neighbours, but a side has only four other pieces; so the general sits in
    a corner, its three neighbours hold three of the two infantry and two cavalry, and the fourth piece
    is off the board or on any of the 21 other squares. Every position without a move is among these.
    """
    case = str.upper if player == 0 else str.lower
    for corner in (0, SIZE - 1, NUM - SIZE, NUM - 1):
        r, f = divmod(corner, SIZE)
        around = [nr * SIZE + nf for nr in (r - 1, r, r + 1) for nf in (f - 1, f, f + 1)
                  if 0 <= nr < SIZE and 0 <= nf < SIZE and (nr, nf) != (r, f)]
        for kinds in sorted(set(itertools.permutations("IICC", 3))):
            spare = "IICC".replace(kinds[0], "", 1).replace(kinds[1], "", 1).replace(kinds[2], "", 1)
            board = ["."] * NUM
            board[corner] = case("G")
            for square, kind in zip(around, kinds):
                board[square] = case(kind)
            yield board
            for square in (q for q in range(NUM) if board[q] == "."):
                yield board[:square] + [case(spare)] + board[square + 1:]


@pytest.mark.parametrize("player", [0, 1])
def test_no_position_with_a_general_is_without_a_move(player):
    """The exhaustive search behind "PASS never happens in play" (rules file, Turns and actions)."""
    boards = list(boxed_in_generals(player))
    assert len(boards) == 4 * 6 * (1 + 21)
    for board in boards:
        assert gen_chess.moves(board, player), gen_chess.board_rows(board)


def test_draw_after_one_hundred_plies():
    shuffle = "A1_to_A2 A5_to_A4 A2_to_A1 A4_to_A5 "
    state = play(shuffle * 24 + "A1_to_A2 A5_to_A4 A2_to_A1")
    assert not state.is_terminal() and state.plies == 99
    state.apply_action(state.string_to_action("A4_to_A5"))
    assert state.is_terminal() and state.returns() == [0.0, 0.0] and state.legal_actions() == []


def test_action_ids_and_strings_round_trip():
    assert gen_chess.action_name(gen_chess.PASS) == "PASS" and gen_chess.PASS == 625
    for action in range(gen_chess.PASS + 1):
        assert gen_chess.action_id(gen_chess.action_name(action)) == action
