"""PUCT with a PPO policy's prior and critic: it finds a win in one and blocks a loss in one even with an
untrained policy (terminal returns are exact), refuses a recurrent policy, and plays the real game on a model."""

from __future__ import annotations

import pyspiel
import pytest

from cwm import arena, games
from cwm.agents.base import RandomAgent
from cwm.agents.ppo import PUCTAgent, ppo_puct
from cwm.bundle.policy import PolicyConfig, init_params

TTT = PolicyConfig(obs_size=27, num_actions=9, hidden=32, game="tic_tac_toe")


def _position(moves: list[int]) -> pyspiel.State:
    state = pyspiel.load_game("tic_tac_toe").new_initial_state()
    for a in moves:
        state.apply_action(a)
    return state


def _puct(encode, spec, seed=0, sims=300):
    return ppo_puct(init_params(TTT, seed=seed), TTT, encode("tic_tac_toe"), lambda s, p: games.observe(spec, s, p),
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
        ppo_puct(init_params(config, seed=0), config, encode("leduc_poker"), lambda s, p: s.observation(p))


def test_the_agent_plays_the_real_game_on_a_model(encode, source):
    from cwm.model import ActionCodec, WorldModel
    from cwm.sandbox import load_source

    real = games.load_game("tic_tac_toe")
    model = WorldModel(load_source(source("tic_tac_toe_model.py"), name="ttt"), codec=ActionCodec.from_game(real))
    puct = ppo_puct(init_params(TTT, seed=0), TTT, encode("tic_tac_toe"), lambda s, p: s.observation(p),
                    num_simulations=50, seed=0)
    agent = PUCTAgent(model, puct)
    for seat in (0, 1):
        agents = [agent, RandomAgent(seed=seat)] if seat == 0 else [RandomAgent(seed=seat), agent]
        outcome = arena.play_match(real, agents, seed=seat)
        assert outcome.forfeit_seat is None and outcome.returns[seat] >= 0, outcome


# Golden PUCT searches with a small fixed (untrained) policy, recorded from the search as it stood before the
# one-loop refactor (commit a1fd6a9): the root's visits in the order its children were created and the move
# (recorded through the API of the time), the mean values of the root's children for the player to move, the
# root's prior and the principal variation (action, visits, mean) to depth 4 (recorded from its nodes). The
# visits and the move must match exactly; values and priors come from float32 matrix products, whose last
# bits may differ between BLAS builds, so they match to 1e-6.
PUCT_GOLDEN = {
    "puct-ttt-start": ("", 0, 60, 7, {6: 2, 5: 8, 7: 14, 3: 10, 0: 10, 1: 2, 2: 6, 8: 4, 4: 4}),
    "puct-ttt-midgame": ("x(1,1) o(0,0) x(2,2)", 1, 80, 6, {5: 10, 7: 6, 3: 6, 1: 13, 2: 4, 6: 41}),
}
PUCT_TREES = {
    "puct-ttt-start": (
        {6: -0.1634564995765686, 5: 0.00833851844072342, 7: 0.13754936626979283, 3: 0.04971879720687866,
         0: 0.08079480528831481, 1: -0.15228241682052612, 2: 0.05759442845980326, 8: -0.03843657672405243,
         4: -0.07717001438140869},
        {0: 0.11118946969509125, 1: 0.11074916273355484, 2: 0.11071056872606277, 3: 0.11128246039152145,
         4: 0.1101241484284401, 5: 0.11180132627487183, 6: 0.11198914796113968, 7: 0.1114509180188179,
         8: 0.11070283502340317},
        [(7, 14, 0.13754936626979283), (5, 2, -0.0025612711906433105), (6, 1, 1.2584682703018188)]),
    "puct-ttt-midgame": (
        {5: 0.2284260094165802, 7: 0.031859830021858215, 3: -0.008092823127905527, 1: 0.16473747560611138,
         2: -0.08626176416873932, 6: 0.23756246141544202},
        {1: 0.16656677424907684, 2: 0.16592857241630554, 3: 0.1668437421321869, 5: 0.1675386279821396,
         6: 0.16584491729736328, 7: 0.16727736592292786},
        [(6, 41, 0.23756246141544202), (3, 21, 0.027119870341959455), (5, 12, 0.10888529693086942),
         (1, 5, 0.13257526159286498)]),
}


@pytest.mark.parametrize("name", PUCT_GOLDEN)
def test_puct_golden(encode, name):
    moves, policy_seed, sims, action, visits = PUCT_GOLDEN[name]
    spec = games.resolve("tic_tac_toe")
    state = pyspiel.load_game("tic_tac_toe").new_initial_state()
    for move in moves.split():
        state.apply_action(state.string_to_action(move))
    search = _puct(encode, spec, policy_seed, sims)
    result = search.search(state, keep_tree=True)
    assert list(result.visits.items()) == list(visits.items())
    assert (result.action, result.simulations, search.step(state)) == (action, sims, action)
    values, prior, line = PUCT_TREES[name]
    assert list(result.values) == list(values) and result.values == pytest.approx(values, rel=1e-6, abs=1e-9)
    root = result.tree.root
    assert root.visits == sims and dict(root.prior) == pytest.approx(prior, rel=1e-6)
    found = [(n.action, n.visits, n.total / n.visits) for n in result.tree.principal_variation()[:4]]
    assert [f[:2] for f in found] == [g[:2] for g in line]
    assert [f[2] for f in found] == pytest.approx([g[2] for g in line], rel=1e-6, abs=1e-9)


def test_the_agent_s_former_name_still_imports_with_a_warning():
    import planners.puct
    from cwm.agents import ppo

    with pytest.warns(DeprecationWarning, match="cwm.agents.ppo.PUCTAgent"):
        assert planners.puct.PUCTAgent is ppo.PUCTAgent
