"""PUCT with a PPO policy's prior and critic: it finds a win in one and blocks a loss in one even with an
untrained policy (terminal returns are exact), refuses a recurrent policy, and plays the real game on a model."""

from __future__ import annotations

import pyspiel
import pytest

from cwm import arena, games
from cwm.agents.base import RandomAgent
from cwm.bundle.policy import PolicyConfig, init_params
from planners.puct import PUCT, PUCTAgent

TTT = PolicyConfig(obs_size=27, num_actions=9, hidden=32, game="tic_tac_toe")


def _position(moves: list[int]) -> pyspiel.State:
    state = pyspiel.load_game("tic_tac_toe").new_initial_state()
    for a in moves:
        state.apply_action(a)
    return state


def _puct(encode, spec, seed=0, sims=300):
    return PUCT(init_params(TTT, seed=seed), TTT, encode("tic_tac_toe"), lambda s, p: games.observe(spec, s, p),
                num_simulations=sims, seed=0)


@pytest.mark.parametrize("moves, best", [
    ([0, 3, 1, 4], 2),      # x x . / o o . : x wins at 2
    ([0, 3, 8, 4], 5),      # o threatens 3-4-5: x must block at 5
])
@pytest.mark.parametrize("seed", [0, 1, 2])
def test_wins_and_blocks_in_one(encode, moves, best, seed):
    spec = games.resolve("tic_tac_toe")
    assert _puct(encode, spec, seed).step(_position(moves)) == best


def test_a_recurrent_policy_is_refused(encode):
    config = PolicyConfig(obs_size=22, num_actions=3, hidden=8, recurrent=True)
    with pytest.raises(ValueError, match="feed-forward"):
        PUCT(init_params(config, seed=0), config, encode("leduc_poker"), lambda s, p: s.observation(p))


def test_the_agent_plays_the_real_game_on_a_model(encode, source):
    from cwm.model import ActionCodec, WorldModel, load_source

    real = games.load_game("tic_tac_toe")
    model = WorldModel(load_source(source("tic_tac_toe_model.py"), name="ttt"), codec=ActionCodec.from_game(real))
    puct = PUCT(init_params(TTT, seed=0), TTT, encode("tic_tac_toe"), lambda s, p: s.observation(p),
                num_simulations=50, seed=0)
    agent = PUCTAgent(model, puct)
    for seat in (0, 1):
        agents = [agent, RandomAgent(seed=seat)] if seat == 0 else [RandomAgent(seed=seat), agent]
        outcome = arena.play_match(real, agents, seed=seat)
        assert outcome.forfeit_seat is None and outcome.returns[seat] >= 0, outcome


# Golden PUCT searches with a small fixed (untrained) policy, recorded from the search as it stood before the
# one-loop refactor (commit a1fd6a9): the root's visits in the order its children were created, and the move.
PUCT_GOLDEN = {
    "puct-ttt-start": ("", 0, 60, 7, {6: 2, 5: 8, 7: 14, 3: 10, 0: 10, 1: 2, 2: 6, 8: 4, 4: 4}),
    "puct-ttt-midgame": ("x(1,1) o(0,0) x(2,2)", 1, 80, 6, {5: 10, 7: 6, 3: 6, 1: 13, 2: 4, 6: 41}),
}


@pytest.mark.parametrize("name", PUCT_GOLDEN)
def test_puct_golden(encode, name):
    moves, policy_seed, sims, action, visits = PUCT_GOLDEN[name]
    spec = games.resolve("tic_tac_toe")
    state = pyspiel.load_game("tic_tac_toe").new_initial_state()
    for move in moves.split():
        state.apply_action(state.string_to_action(move))
    search = _puct(encode, spec, policy_seed, sims)
    assert list(search.search(state).items()) == list(visits.items())
    assert search.step(state) == action
