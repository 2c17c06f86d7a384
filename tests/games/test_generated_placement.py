"""The placement family of generated games: each rule a parameter switches on decides a scripted position as
its rules sentence says, every generated game passes OpenSpiel's and cwm's checks, and the files are
byte-identical for a seed and loadable by every cwm command."""

from __future__ import annotations

import pytest

from cwm.games.generated import placement
from cwm.games.generated.placement import PlacementParams
from tests.games.generated_helpers import build, legal_names, play

PLAIN = PlacementParams(rows=4, cols=4, k=3, gravity=False, blocked="none", blocked_cells=(), blocked_count=0,
                        capture=0, move_limit=0, misere=False, pie=False)


def game(**changes):
    """A game of ``PLAIN`` with ``changes``, registered under a fresh test name."""
    return build(placement, PLAIN, **changes)


def test_a_line_of_k_wins_for_the_player_who_makes_it():
    state = play(game(), "a1, a2, b1, b2, c1")
    assert state.is_terminal() and state.returns() == [1.0, -1.0]
    diagonal = play(game(), "a1, a2, b2, a3, c3")
    assert diagonal.is_terminal() and diagonal.returns() == [1.0, -1.0]
    short = play(game(k=4), "a1, a2, b1, b2, c1")
    assert not short.is_terminal(), "three in a row is no line when k is 4"


def test_misere_the_player_who_makes_a_line_loses():
    state = play(game(misere=True), "a1, a2, b1, b2, c1")
    assert state.is_terminal() and state.returns() == [-1.0, 1.0]
    o_line = play(game(misere=True), "a1, a2, b1, b2, d4, c2")
    assert o_line.returns() == [1.0, -1.0], "o made the line, so o loses"


def test_gravity_stones_fall_onto_the_bottom_a_stone_or_a_blocked_cell():
    g = game(gravity=True, blocked="fixed", blocked_cells=(1 * 4 + 2,))  # c2 blocked
    state = play(g, "drop a, drop a, drop c")
    board = state.observation_dict()["board"]
    assert board[::-1][0] == "x..." and board[::-1][1] == "o.#." and board[::-1][2] == "..x.", board
    assert legal_names(state) == {"drop a", "drop b", "drop c", "drop d"}
    full = play(g, "drop a, drop a, drop a, drop a")
    assert "drop a" not in legal_names(full), "a full column takes no stone"
    win = play(game(gravity=True), "drop a, drop b, drop a, drop b, drop a")
    assert win.is_terminal() and win.returns() == [1.0, -1.0], "three stacked in column a"


def test_fixed_blocked_cells_take_no_stone_and_break_lines():
    g = game(blocked="fixed", blocked_cells=(1,), k=3)  # b1
    state = play(g, "a1, a4, c1, b4, d1")
    assert "b1" not in legal_names(play(g, ""))
    assert not state.is_terminal(), "a1 c1 d1 across the blocked b1 is no line"


def test_chance_blocks_cells_uniformly_before_the_first_move():
    g = game(blocked="chance", blocked_count=2)
    state = g.new_initial_state()
    assert state.is_chance_node()
    outcomes = state.chance_outcomes()
    assert len(outcomes) == 16 and all(p == pytest.approx(1 / 16) for _, p in outcomes)
    state = play(g, "block b1, block c3")
    assert state.current_player() == 0
    assert {"b1", "c3"}.isdisjoint(legal_names(state)) and len(legal_names(state)) == 14
    blocked_line = play(g, "block b1, block c3, a1, a4, c1, b4, d1")
    assert not blocked_line.is_terminal()


def test_capture_of_one_removes_a_single_flanked_stone_and_frees_its_cell():
    g = game(capture=1, move_limit=32, k=4)
    state = play(g, "a1, b1, c1")
    assert state.observation_dict()["board"][-1] == "x.x.", "o on b1 was flanked by a1 and c1"
    assert "b1" in legal_names(state)
    two = play(g, "a1, b1, d4, c1, d1")
    assert two.observation_dict()["board"][-1] == "xoox", "two flanked stones stay when capture is 1"


def test_capture_of_two_removes_exactly_two_and_then_a_line_can_win():
    g = game(capture=2, move_limit=32, k=3)
    state = play(g, "a1, b1, a2, c1, d1")
    assert state.observation_dict()["board"][-1] == "x..x"
    one = play(game(capture=2, move_limit=32), "a1, b1, c1")
    assert one.observation_dict()["board"][-1] == "xox.", "one flanked stone stays when capture is 2"
    # o threatens b2-b3-b4 ... x captures o's b2, b3 by playing b4 (flanked with b1): o's line is gone
    capture_decides = play(g, "b1, b2, d1, b3, b4")
    assert [row[1] for row in capture_decides.observation_dict()["board"]] == ["x", ".", ".", "x"]
    assert not capture_decides.is_terminal()


def test_with_captures_the_move_limit_draws():
    state = play(game(capture=1, move_limit=4, k=4), "a1, b2, c3, d4")
    assert state.is_terminal() and state.returns() == [0.0, 0.0]


def test_pie_rule_swap_turns_the_first_stone_and_only_on_the_second_move():
    g = game(pie=True)
    assert "swap" not in legal_names(play(g, ""))
    assert "swap" in legal_names(play(g, "b2"))
    state = play(g, "b2, swap")
    assert state.observation_dict() == {"board": ["....", "....", ".o..", "...."], "to_move": 0, "moves": 2}
    assert "swap" not in legal_names(play(g, "b2, swap, a1"))
    o_wins = play(g, "b2, swap, a1, a2, d4, c2")
    assert o_wins.returns() == [-1.0, 1.0], "the swapped stone on b2 is o's and completes a2 b2 c2"


def test_a_full_board_without_a_line_is_a_draw():
    moves = "a1, b1, c1, d1, a2, b2, c2, d2, b3, a3, d3, c3, b4, a4, d4, c4"
    # rows from the bottom: xoxo, xoxo, oxox, oxox: no four in a row for either in any direction
    state = play(game(k=4), moves)
    assert state.is_terminal() and state.returns() == [0.0, 0.0], state.observation_dict()
