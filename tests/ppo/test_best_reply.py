"""benchmarks/best_reply.py: the exact best reply to random, which tells what PPO against random can reach.

The benchmark is loaded from its file: the benchmarks folder is not a package on the test path.
"""

from __future__ import annotations

import numpy as np
import pytest

from cwm import games
from cwm.agents.ppo import PPOAgent
from cwm.bundle.policy import PolicyConfig, init_params


@pytest.fixture(scope="module")
def best_reply(benchmark_module):
    return benchmark_module("best_reply")


def test_the_payoff_best_second_player_gambles_and_a_loss_weight_makes_it_safe(best_reply):
    game = games.load_game("tic_tac_toe")
    payoff = best_reply.best_reply(game, 1)
    weighted = best_reply.best_reply(game, 1, loss_weight=4.0, gamma=0.99)
    assert payoff["loss"] > 0.005 and weighted["loss"] == 0
    assert payoff["win"] > weighted["win"] > 0.9
    assert best_reply.best_reply(game, 0)["loss"] == 0
    for row in (payoff, weighted):
        assert row["win"] + row["draw"] + row["loss"] == pytest.approx(1)


def test_a_policy_is_scored_exactly_and_its_avoidable_losses_found(best_reply, encode):
    """An untrained policy loses often as the second player, and some of its moves lose more than others."""
    game = games.load_game("tic_tac_toe")
    params = init_params(PolicyConfig(obs_size=27, num_actions=9, hidden=16), seed=0)
    choose = PPOAgent(params, PolicyConfig(27, 9, 16), encode("tic_tac_toe"), "tic_tac_toe").step
    scored = best_reply.best_reply(game, 1, choose=choose)
    assert scored["loss"] > best_reply.best_reply(game, 1)["loss"] + 0.05
    worst = best_reply.worst_decisions(game, 1, choose, top=3)
    assert len(worst) == 3 and worst[0][0] >= worst[-1][0] > 0
    assert all(np.isfinite(w[0]) and w[2] not in w[3] for w in worst)
