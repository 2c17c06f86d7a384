"""The human agent's input: legal moves by name (any case) or number, help, clear refusals, resigning; move
numbers that stay the same all game, a board with its coordinates, and a resignation saved as one."""

import json

import pyspiel
import pytest

from cwm.agents.human import HumanAgent, Resigned
from cwm.arena import human as arena_human
from cwm.arena.plan import ArenaError


def _agent(lines):
    typed, shown = list(lines), []

    def read(prompt):
        shown.append(prompt)
        if not typed:
            raise EOFError
        return typed.pop(0)

    return HumanAgent(read=read, write=shown.append), shown


@pytest.mark.parametrize(("lines", "expected"), [
    (["x(1,1)"], 4), (["X(1,1)"], 4), ([" 8 "], 8), (["?", "x(0,0)"], 0), (["9", "", "o(0,0)", "0"], 0)])
def test_a_legal_move_is_taken_and_anything_else_asked_again(lines, expected):
    agent, shown = _agent(lines)
    state = pyspiel.load_game("tic_tac_toe").new_initial_state()
    assert agent.step(state) == expected
    refusals = [s for s in shown if "not a legal move" in s or s == "type a move, or ?"]
    assert len(refusals) == sum(1 for line in lines if line not in ("?",) and line != lines[-1])


def test_the_legal_moves_are_listed_on_request_and_quitting_resigns():
    agent, shown = _agent(["?", "quit"])
    state = pyspiel.load_game("tic_tac_toe").new_initial_state()
    with pytest.raises(Resigned, match="resigned"):
        agent.step(state)
    assert "legal moves: 0:x(0,0)  1:x(0,1)" in next(s for s in shown if s.startswith("legal moves"))
    with pytest.raises(Resigned, match="input ended"):
        _agent([])[0].step(state)


def test_with_hidden_information_only_the_players_own_view_is_shown():
    game = pyspiel.load_game("leduc_poker")
    state = game.new_initial_state()
    while state.is_chance_node():
        state.apply_action(state.legal_actions()[0])
    agent, shown = _agent(["call"])
    agent.step(state)
    assert any(state.observation_string(0) in s for s in shown)
    assert not any("chance played" in s or state.observation_string(1) in s for s in shown)


def test_play_refuses_what_it_cannot_play_before_writing(tmp_path):
    with pytest.raises(ArenaError, match="seat 0 or 1"):
        arena_human.play("tic_tac_toe", "random", seat=2, out_dir=tmp_path / "a")
    with pytest.raises(ArenaError, match="cannot play"):
        arena_human.play("tic_tac_toe", "llm:nosuch:model", out_dir=tmp_path / "b")
    assert not (tmp_path / "a").exists() and not (tmp_path / "b").exists()


@pytest.mark.parametrize("agents", ["human,random", "random,me=human"])
def test_a_human_seat_in_a_tournament_is_refused_pointing_to_cwm_play(agents, tmp_path, capsys):
    from cwm.cli import main

    out = tmp_path / "arena"
    assert main(["arena", "tic_tac_toe", "--agents", agents, "--matches", "1", "--out", str(out),
                 "--executor", "inline", "--no-progress"]) != 0
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1 and "`cwm play GAME --against SPEC`" in err and "human" in err
    assert not out.exists()


def test_a_moves_number_is_its_action_id_on_every_turn_not_its_place_in_the_list():
    """The issue's case: the first list showed 7 beside x(2,0); later, with cells taken, 7 played x(2,2)."""
    state = pyspiel.load_game("tic_tac_toe").new_initial_state()
    agent, shown = _agent(["?"])
    with pytest.raises(Resigned):
        agent.step(state)
    first = next(s for s in shown if s.startswith("legal moves"))
    assert "6:x(2,0)" in first and "8:x(2,2)" in first
    for cell in (0, 1, 4, 2):  # x(0,0) o(0,1) x(1,1) o(0,2)
        state.apply_action(cell)
    agent, shown = _agent(["?", "1", "6"])
    assert agent.step(state) == 6  # still x(2,0)
    later = next(s for s in shown if s.startswith("legal moves"))
    assert "6:x(2,0)" in later and "1:" not in later.split()  # a taken cell keeps its number, unlisted
    assert any("move 1 is not a legal move here" in s for s in shown)


def test_a_grid_board_is_shown_with_its_coordinates():
    state = pyspiel.load_game("tic_tac_toe").new_initial_state()
    state.apply_action(5)  # x(1,2)
    agent, shown = _agent(["o(0,0)"])
    agent.step(state)
    assert "  012\n0 ...\n1 ..x\n2 ..." in shown  # row then column, as the moves name them
    connect = pyspiel.load_game("connect_four").new_initial_state()
    connect.apply_action(3)
    agent, shown = _agent(["o0"])
    agent.step(connect)
    board = next(s for s in shown if s.startswith("0123456"))  # columns only: a move names its column
    assert board.splitlines()[-1] == "...x..."
    backgammon = pyspiel.load_game("backgammon").new_initial_state()
    while backgammon.is_chance_node():
        backgammon.apply_action(backgammon.legal_actions()[0])
    agent, shown = _agent(["quit"])
    with pytest.raises(Resigned):
        agent.step(backgammon)
    assert str(backgammon) in shown  # a framed drawing is left as it is


def test_a_resignation_is_saved_and_reported_as_a_resignation(tmp_path, capsys):
    from cwm.arena import replay as arena_replay
    from cwm.cli import main

    out = tmp_path / "play"
    result = arena_human.play("tic_tac_toe", "random", seat=0, out_dir=out, read=lambda prompt: "quit",
                              write=lambda text: None)
    assert (result.forfeit_seat, result.forfeit_kind) == (0, "resigned")
    (row,) = [json.loads(line) for line in (out / "matches.jsonl").read_text().splitlines()]
    assert row["forfeit_kind"] == "resigned"
    assert "0/0/0/0, 1 resigned" in (out / "results.md").read_text()
    assert "seat 0 resigned" in arena_replay.listing(out) and "exception" not in arena_replay.listing(out)
    assert main(["replay", str(out)]) == 0
    assert "seat 0 resigned" in capsys.readouterr().out


def test_playing_an_llm_on_a_batch_directory_waits_without_saving_and_replays_the_same_moves(tmp_path):
    from cwm.llm import PendingBatch, ScriptedClient
    from cwm.llm.batch import answer_pending, pending_requests

    out, batch = tmp_path / "play", tmp_path / "batch"
    moves = iter(["4"] * 20)  # the person always asks for the centre's id first; it is taken on the second turn
    with pytest.raises(PendingBatch, match="not saved"):
        arena_human.play("tic_tac_toe", f"llm:batch:{batch}", seat=0, out_dir=out,
                         read=lambda prompt: next(moves, "quit"), write=lambda text: None)
    assert not (out / "matches.jsonl").exists()  # nothing half-played is saved as a match
    assert len(pending_requests(batch)) == 1
    answer_pending(batch, ScriptedClient(["ACTION: o(0,0)"]))
    replies = iter(["4", "0", "1", "2", "3", "5", "6", "7", "8"])
    with pytest.raises(PendingBatch):  # the agent's second move waits in turn: its first answer was read back
        arena_human.play("tic_tac_toe", f"llm:batch:{batch}", seat=0, out_dir=out, read=lambda p: next(replies, "quit"),
                         write=lambda text: None)
    assert len(pending_requests(batch)) == 1 and not (out / "matches.jsonl").exists()
