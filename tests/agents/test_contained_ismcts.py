"""A contained ISMCTS agent keeps its own actions in the view its worker plans from.

The worker receives the seat's events once each; the seat's action at an event is only known after it has
moved there, so the last event sent goes again. Before, it did not: every move after the first searched
from events without the seat's own earlier actions, every draw was rejected, and every such move fell back
to a random action.
"""

from __future__ import annotations

from cwm import games
from cwm.agents.base import RandomAgent
from cwm.agents.worker import WorkerAgent
from cwm.arena import play_match
from planners.config import SearchConfig

from .conftest import LEDUC, LEDUC_INFERENCE


def test_no_draw_is_rejected_after_the_first_move() -> None:
    agent = WorkerAgent({"model.py": LEDUC, "inference.py": LEDUC_INFERENCE}, "leduc_poker",
                        SearchConfig(num_simulations=20, rollouts=1), seed=0)
    game = games.load_game("leduc_poker")
    later_moves = 0
    try:
        for i in range(4):
            outcome = play_match(game, [agent, RandomAgent(seed=i)], seed=i)
            stats = agent.stats()
            assert outcome.forfeit_seat is None, outcome.reason
            assert stats["rejected_draws"] == 0 and stats["fallback_moves"] == 0, stats
            assert stats["draws"] == 20 * stats["moves"]
            later_moves += stats["moves"] - 1
    finally:
        agent.close()
    assert later_moves > 0  # some match gave the agent a second decision to plan from
