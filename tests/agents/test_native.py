"""GT-MCTS and GT-ISMCTS on OpenSpiel's C++ search: where they run C++, where they stand in the Python planner
and why, seeded reproducibility, and no gross gap in strength to the Python planners at equal settings
(200 games, both seats: the 95% normal interval of the C++ agent's mean return must include 0; a gate, not
parity: benchmarks/bench_native.py measures the gap paired, docs/planners.md)."""

from __future__ import annotations

import dataclasses

import pyspiel
import pytest

from cwm import games
from cwm.agents import ISMCTSAgent, MCTSAgent
from cwm.agents.native import NativeISMCTSAgent, NativeMCTSAgent, native_problem
from cwm.arena import play_match
from planners.config import SearchConfig

FAST = SearchConfig(num_simulations=30, rollouts=2)


def _decision(game: pyspiel.Game, actions: str = "") -> pyspiel.State:
    state = game.new_initial_state()
    for a in actions.split():
        state.apply_action(state.string_to_action(a))
    return state


def test_cpp_mcts_takes_the_winning_move_and_says_it_ran_cpp():
    game = pyspiel.load_game("tic_tac_toe")
    state = _decision(game, "x(1,1) o(0,0) x(0,1) o(2,2)")  # x wins at (2,1)
    agent = NativeMCTSAgent(game, SearchConfig(num_simulations=200, rollouts=2), seed=0)
    assert state.action_to_string(agent.step(state.clone())) == "x(2,1)"
    assert agent.stats() == {"engine": "openspiel-c++", "moves": 1}


def test_a_seeded_cpp_agent_is_reproducible():
    game = pyspiel.load_game("connect_four")
    state = _decision(game, "x3 o3 x2")
    moves = [NativeMCTSAgent(game, FAST, seed=7).step(state.clone()) for _ in range(3)]
    assert len(set(moves)) == 1 and moves[0] in state.legal_actions()


@pytest.mark.parametrize("game, why", [
    ("gen_chess", "defined in Python"),
    ("quadranto", "defined in Python"),
])
def test_python_defined_games_are_searched_by_the_python_planner(game, why):
    loaded = games.load_game(game)
    assert why in native_problem(loaded, FAST)
    agent = (NativeMCTSAgent if games.resolve(game).perfect_information else NativeISMCTSAgent)(loaded, FAST, seed=0)
    state = loaded.new_initial_state()
    while state.is_chance_node():
        state.apply_action(state.chance_outcomes()[0][0])
    assert agent.step(state.clone()) in state.legal_actions()
    assert agent.stats()["engine"] == "python" and why in agent.stats()["why_python"]


def test_settings_the_cpp_search_lacks_fall_back_to_python():
    game = pyspiel.load_game("connect_four")
    capped = dataclasses.replace(FAST, max_rollout_steps=5)
    assert "rollout cap" in native_problem(game, capped)
    assert "availability" in native_problem(game, dataclasses.replace(FAST, availability_counts=True), imperfect=True)
    assert native_problem(game, FAST) == ""
    agent = NativeMCTSAgent(game, capped, seed=0)
    agent.step(game.new_initial_state())
    assert agent.stats()["engine"] == "python"


def _mean_return(game: str, cpp, py, n: int = 200) -> list[float]:
    loaded = games.load_game(game)
    scores = []
    for i in range(n):
        a, b = cpp(loaded, i), py(10_000 + i)
        returns, forfeit, _, reason, _ = play_match(loaded, [a, b] if i % 2 == 0 else [b, a], seed=i)
        assert forfeit is None, reason
        assert a.stats()["engine"] == "openspiel-c++"
        scores.append(returns[i % 2])
    return scores


@pytest.mark.slow
def test_cpp_mcts_shows_no_detected_gap_to_python_mcts_at_connect_four(mean_ci):
    scores = _mean_return("connect_four", lambda g, i: NativeMCTSAgent(g, FAST, seed=i),
                          lambda i: MCTSAgent(FAST, seed=i))
    mean, lo, hi = mean_ci(scores)
    assert lo <= 0 <= hi, f"C++ vs Python MCTS: mean return {mean:+.2f} [{lo:+.2f}, {hi:+.2f}]"


@pytest.mark.slow
def test_cpp_ismcts_shows_no_detected_gap_to_python_ismcts_at_leduc(mean_ci):
    config = SearchConfig(num_simulations=40, rollouts=2)
    scores = _mean_return("leduc_poker", lambda g, i: NativeISMCTSAgent(g, config, seed=i),
                          lambda i: ISMCTSAgent(config, seed=i))
    mean, lo, hi = mean_ci(scores)
    assert lo <= 0 <= hi, f"C++ vs Python ISMCTS: mean payoff {mean:+.2f} [{lo:+.2f}, {hi:+.2f}]"
