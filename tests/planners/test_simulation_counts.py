"""CWM agents report the simulations their searches actually ran, not the number asked: the solver stops a
search once it proves the root, and the counts reach a match's record, in-process and from a worker."""

from __future__ import annotations

from pathlib import Path

from cwm import games
from cwm.agents import RandomAgent
from cwm.agents.worker import WorkerAgent
from cwm.arena import play_match
from planners import ISMCTS, MCTS
from planners.config import SearchConfig

TTT_MODEL = (Path(__file__).resolve().parent.parent / "data" / "planners" / "ttt_model.py").read_text()
ASKED = 300


def _ttt(moves: str):
    game = games.load_game("tic_tac_toe")
    state = game.new_initial_state()
    for a in moves.split():
        state.apply_action(state.string_to_action(a))
    return state


def test_the_solver_cuts_a_search_short_and_the_count_says_so():
    mcts = MCTS(SearchConfig(num_simulations=ASKED, rollouts=1), seed=0)
    won = mcts.search(_ttt("x(1,1) o(0,0) x(0,1) o(2,2)"))  # x wins at (2,1): proven in a few simulations
    assert won.simulations < ASKED and (mcts.searches, mcts.simulations) == (1, won.simulations)
    open_game = mcts.search(_ttt(""))
    assert open_game.simulations == ASKED and mcts.simulations == won.simulations + ASKED


def test_ismcts_counts_the_simulations_it_ran():
    game = games.load_game("leduc_poker")
    state = game.new_initial_state()
    while state.is_chance_node():
        state.apply_action(state.chance_outcomes()[0][0])
    search = ISMCTS(SearchConfig(num_simulations=25, rollouts=1), seed=0)
    assert search.search(state).simulations == 25 and search.simulations == 25


def test_a_worker_agent_reports_the_simulations_run_per_move_and_in_all():
    agent = WorkerAgent({"model.py": TTT_MODEL}, "tic_tac_toe", SearchConfig(num_simulations=ASKED, rollouts=1),
                        seed=0)
    try:
        outcome = play_match(games.load_game("tic_tac_toe"), [agent, RandomAgent(seed=1)], seed=0)
        stats = agent.stats()
    finally:
        agent.close()
    assert outcome.forfeit_seat is None, outcome.reason
    per_move = [entry["move_simulations"] for entry in agent.log]
    assert stats["simulations_asked"] == ASKED and len(per_move) == stats["searches"] >= 3
    assert sum(per_move) == stats["simulations"] and all(1 <= n <= ASKED for n in per_move)
    assert min(per_move) < ASKED  # a proven position near the end stopped early
