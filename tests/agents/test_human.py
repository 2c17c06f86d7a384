"""The human agent's input: legal moves by name (any case) or number, help, clear refusals, resigning."""

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
    (["x(1,1)"], 4), (["X(1,1)"], 4), ([" 9 "], 8), (["?", "x(0,0)"], 0), (["10", "", "o(0,0)", "1"], 0)])
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
    assert "legal moves: 1:x(0,0)  2:x(0,1)" in next(s for s in shown if s.startswith("legal moves"))
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
