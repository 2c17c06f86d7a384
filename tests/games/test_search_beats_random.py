"""Ground-truth search beats uniform random play on the novel games (seeded, so deterministic).

Small settings keep this fast; ``tests/games/outcome_stats.py`` measures the same with more games and
simulations for the numbers quoted in the rules files.
"""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from planners.agents import ISMCTSAgent, MCTSAgent, RandomAgent

sys.path.insert(0, str(Path(__file__).parent))
from outcome_stats import match  # noqa: E402


@pytest.mark.parametrize("name, agent, sims, games", [
    ("gen_chess", MCTSAgent, 50, 3),
    ("gen_tic_tac_toe", MCTSAgent, 50, 3),
    ("hand_of_war", ISMCTSAgent, 50, 3),
])
def test_search_scores_at_least_three_quarters_against_random(name, agent, sims, games):
    result = match(name, lambda s: agent(num_simulations=sims, rollouts=1, seed=s),
                   lambda s: RandomAgent(seed=s), games, seed=7)
    wins = result[0][0] + result[1][0]
    draws = result[0][1] + result[1][1]
    assert (wins + 0.5 * draws) / (2 * games) >= 0.75, result
