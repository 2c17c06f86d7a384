"""ISMCTS: beats random at Leduc with ground-truth resampling, level with OpenSpiel's Python ISMCTS,
samplers that fail fall back to a random legal move, and a CWM-style sampler over model states.

Sizes are cut for CI; Leduc payoffs are noisy (sd ~4 chips per hand), so both tests play 200 hands
(at 200 and 100 simulations): enough for the lower 95% bound against random to clear zero (measured:
+1.3 +- 0.45), and for the interval against OpenSpiel's ISMCTS to be about +-0.6 chips.
"""

from __future__ import annotations

import numpy as np
import pyspiel
import pytest
from open_spiel.python.algorithms import ismcts as os_ismcts
from open_spiel.python.algorithms import mcts as os_mcts

from cwm.agents import CWMAgent, ISMCTSAgent, RandomAgent
from cwm.arena import play_match
from cwm.games.oracle import oracle_model
from planners import ISMCTS
from planners.config import SearchConfig


class OpenSpielISMCTS:
    """OpenSpiel's Python ISMCTSBot, with its resampling seeded too (its default sampler is not), so that
    the test is deterministic."""

    def __init__(self, game, *, sims, rollouts, seed):
        rs = np.random.RandomState(seed)
        self.bot = os_ismcts.ISMCTSBot(game, os_mcts.RandomRolloutEvaluator(rollouts, rs), 2.0, sims,
                                       random_state=rs)
        self.bot.set_resampler(lambda state, player: state.resample_from_infostate(
            player, pyspiel.UniformProbabilitySampler(int(rs.randint(2**31)), 0.0, 1.0)))

    def step(self, state):
        return int(self.bot.step(state))


def _scores(game, ours, theirs, n):
    out = []
    for i in range(n):
        a, b = ours(i), theirs(i)
        returns, forfeit, kind, reason, _ = play_match(game, [a, b] if i % 2 == 0 else [b, a], seed=i)
        assert forfeit is None, reason
        out.append(returns[i % 2])
    return out


def test_gt_ismcts_beats_random_at_leduc(mean_ci):
    game = pyspiel.load_game("leduc_poker")
    scores = _scores(game, lambda i: ISMCTSAgent(SearchConfig(num_simulations=200, rollouts=5), seed=i),
                     lambda i: RandomAgent(seed=9000 + i), 200)
    mean, lo, hi = mean_ci(scores)
    assert lo > 0, f"mean payoff against random {mean:+.2f} [{lo:+.2f}, {hi:+.2f}]"


def test_gt_ismcts_level_with_openspiel_python_ismcts_at_leduc(mean_ci):
    game = pyspiel.load_game("leduc_poker")
    scores = _scores(game, lambda i: ISMCTSAgent(SearchConfig(num_simulations=100, rollouts=3), seed=i),
                     lambda i: OpenSpielISMCTS(game, sims=100, rollouts=3, seed=i), 200)
    mean, lo, hi = mean_ci(scores)
    assert lo <= 0 <= hi, f"mean payoff against OpenSpiel ISMCTS {mean:+.2f} [{lo:+.2f}, {hi:+.2f}]"


def _leduc_after_deal():
    state = pyspiel.load_game("leduc_poker").new_initial_state()
    state.apply_action(0)
    state.apply_action(3)
    return state


@pytest.mark.parametrize("sampler_name", ["inconsistent", "raises"])
def test_failing_sampler_falls_back_to_a_random_legal_move(sampler_name):
    state = _leduc_after_deal()

    def inconsistent(s, player, rng):
        other = pyspiel.load_game("leduc_poker").new_initial_state()
        other.apply_action(5)
        other.apply_action(1)
        return other  # a different private card: never consistent with player 0's information

    def raises(s, player, rng):
        raise ValueError("inference failed")

    search = ISMCTS(SearchConfig(num_simulations=50),
                    sampler={"inconsistent": inconsistent, "raises": raises}[sampler_name], seed=0)
    result = search.search(state)
    assert result.fallback and result.simulations == 0
    assert result.action in state.legal_actions()
    assert search.failed_draws == 10


def test_seeded_search_is_reproducible():
    state = _leduc_after_deal()
    a = ISMCTS(SearchConfig(num_simulations=200, rollouts=2), seed=3).search(state)
    b = ISMCTS(SearchConfig(num_simulations=200, rollouts=2), seed=3).search(state)
    assert a == b and a.simulations == 200 and not a.fallback


def test_cwm_agent_with_a_sampler_over_model_states_plays_leduc():
    """A CWM agent whose sampler proposes oracle-model states: the view's information-state key must
    match the model's, or every draw would be rejected and every move would be a fallback."""
    model = oracle_model("leduc_poker")
    real = {}

    def sampler(view, player, rng):  # test-only: resample in the ground truth, replay into the model
        world = real["state"].resample_from_infostate(player, pyspiel.UniformProbabilitySampler(
            int(rng.integers(2**31)), 0.0, 1.0))
        state = model.new_initial_state()
        for a in world.history():
            state = state.child(a)
        return state

    agent = CWMAgent(model, "leduc_poker", SearchConfig(num_simulations=30, rollouts=1), sampler=sampler, seed=0)

    class Watch:
        def step(self, state):
            real["state"] = state
            return agent.step(state)

    game = pyspiel.load_game("leduc_poker")
    for i in range(4):
        returns, forfeit, kind, reason, _ = play_match(game, [Watch(), RandomAgent(seed=i)], seed=i)
        assert forfeit is None, reason
    assert agent.ismcts is not None and agent.ismcts.failed_draws == 0


@pytest.mark.parametrize("bad", [{"num_simulations": 0}, {"rollouts": 0}, {"max_sample_tries": 0}],
                         ids=["sims-0", "rollouts-0", "tries-0"])
def test_rejects_bad_settings(bad):
    with pytest.raises(ValueError, match={"num_simulations": "simulations", "rollouts": "rollouts", "max_sample_tries": "sample tries"}[next(iter(bad))]):
        ISMCTS(SearchConfig(**bad))


def test_value_fn_allows_zero_rollouts():
    search = ISMCTS(SearchConfig(num_simulations=20, rollouts=0), value_fn=lambda state, player: 0.0, seed=0)
    assert search.search(_leduc_after_deal()).simulations == 20
