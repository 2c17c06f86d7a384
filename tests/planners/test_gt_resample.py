"""The generic ground-truth resampler: every draw is consistent with the player's information, the exact
posterior matches the frequencies of uniformly random play, rejection draws follow it too, merging states
changes nothing, and a game too large for both fails a draw within its budget, counted.
"""

from __future__ import annotations

import json
import time
from collections import Counter
from pathlib import Path

import numpy as np
import pytest

from cwm import games
from planners.gt_resample import HistoryResampler, ResampleFailure
from planners.gt_sampler import decision_states

TINY_POKER = str(Path(__file__).resolve().parent.parent / "data" / "foundation" / "tiny_poker.py") + ":tiny_poker"


def _random_decisions(game, n_games, seed):
    """Every decision state of ``n_games`` uniformly random games, in play order."""
    gt = games.load_game(game)
    rng = np.random.default_rng(seed)
    out = []
    for _ in range(n_games):
        out.extend(decision_states(gt, rng))
    return out


def _opponent_square(state, player):
    return tuple(json.loads(str(state))["squares"][1 - player])


@pytest.mark.parametrize("game,key", [("leduc_poker", None), ("quadranto", str), (TINY_POKER, None),
                                      ("liars_dice", None), ("rock_paper_scissors", None)],
                         ids=["leduc", "quadranto-merged", "tiny_poker", "liars_dice", "rps"])
def test_every_draw_has_the_players_information_state(game, key):
    resampler = HistoryResampler(state_key=key)
    rng = np.random.default_rng(0)
    states = _random_decisions(game, 4, seed=1)
    for state in states:
        player = state.current_player()
        for _ in range(5):
            world = resampler(state, player, rng)
            assert world is not state and world.current_player() == player
            assert world.information_state_string(player) == state.information_state_string(player)
    assert resampler.exact_draws + resampler.rejection_draws == 5 * len(states) and resampler.failed_draws == 0


def test_leduc_exact_posterior_is_uniform_over_the_unseen_cards():
    """Under uniform play the betting says nothing about the cards, so the opponent's card is uniform over the
    cards the player has not seen (the deal is symmetric): a fact of the game, not of the enumeration."""
    resampler = HistoryResampler()
    for state in _random_decisions("leduc_poker", 20, seed=2):
        player = state.current_player()
        posterior = resampler.posterior(state, player)
        assert posterior is not None
        dist = posterior.distribution(lambda s, opponent=1 - player: _deals(s)[opponent])
        deals = _deals(state)
        unseen = set(range(6)) - {deals[player]} - set(deals[2:])  # not its own card, not the public one
        assert set(dist) == unseen
        assert all(abs(p - 1 / len(unseen)) < 1e-12 for p in dist.values())


def _deals(state):
    """The chance outcomes of a Leduc history: player 0's card, player 1's, then the public card."""
    replay = state.get_game().new_initial_state()
    out = []
    for a in state.history():
        if replay.is_chance_node():
            out.append(a)
        replay.apply_action(a)
    return out


def _joint(moves, policy=None):
    """Every Quadranto history of ``moves`` moves (after the two placements), by brute force: for each of
    player 0's information states where it is to act, a state there and the probability of each opponent
    square under uniformly random play, or with ``policy`` playing player 1 (no pruning, no weighting rule:
    products of probabilities)."""
    gt = games.load_game("quadranto")
    mass: dict[str, Counter] = {}
    example = {}

    def walk(state, p):
        if state.is_terminal():
            return
        if len(state.history()) == 2 + moves:
            if state.current_player() == 0:
                key = state.information_state_string(0)
                mass.setdefault(key, Counter())[_opponent_square(state, 0)] += p
                example.setdefault(key, state)
            return
        if state.is_chance_node():
            options = state.chance_outcomes()
        elif policy is not None and state.current_player() == 1:
            options = policy(state, 1)
        else:
            options = [(a, 1 / len(state.legal_actions())) for a in state.legal_actions()]
        for a, q in options:
            walk(state.child(a), p * q)

    walk(gt.new_initial_state(), 1.0)
    key = max(mass, key=lambda k: sum(mass[k].values()))
    total = sum(mass[key].values())
    return example[key], {v: m / total for v, m in mass[key].items()}


def _tv(p, q):
    return 0.5 * sum(abs(p.get(v, 0.0) - q.get(v, 0.0)) for v in set(p) | set(q))


def test_quadranto_exact_posterior_is_the_conditional_of_uniform_play():
    """Edge squares have fewer moves, so the posterior is not uniform over consistent paths: the exact one
    must weight each opponent move by 1/(its legal moves), as uniformly random play does."""
    state, truth = _joint(4)
    exact = HistoryResampler().posterior(state, 0).distribution(lambda s: _opponent_square(s, 0))
    assert exact.keys() == truth.keys() and all(abs(exact[v] - truth[v]) < 1e-9 for v in truth), (exact, truth)
    uniform = {v: 1 / len(exact) for v in exact}
    assert _tv(uniform, exact) > 0.01, "this state cannot tell a weighted posterior from a uniform one"


def test_rejection_draws_and_merged_states_give_the_exact_posterior():
    state, truth = _joint(4)
    merged = HistoryResampler(state_key=str).posterior(state, 0).distribution(lambda s: _opponent_square(s, 0))
    assert merged.keys() == truth.keys() and all(abs(merged[v] - truth[v]) < 1e-9 for v in truth)
    rejection = HistoryResampler(max_nodes=0)  # nothing may be enumerated: every draw is a rejection draw
    rng = np.random.default_rng(5)
    draws = Counter(_opponent_square(rejection(state, 0, rng), 0) for _ in range(4000))
    assert rejection.rejection_draws == 4000 and rejection.exact_draws == 0
    assert _tv(truth, {v: c / 4000 for v, c in draws.items()}) < 0.04


def test_merged_states_are_drawn_as_a_whole_consistent_history():
    resampler = HistoryResampler(state_key=str)
    rng = np.random.default_rng(6)
    for state in _random_decisions("quadranto", 3, seed=7):
        player = state.current_player()
        world = resampler(state, player, rng)
        assert world.information_state_string(player) == state.information_state_string(player)


def test_a_later_state_continues_the_last_enumeration_with_the_same_posterior():
    states = [s for s in _random_decisions("quadranto", 1, seed=8) if s.current_player() == 0]
    continued = HistoryResampler()
    for state in states:
        ours = continued.posterior(state, 0).distribution(lambda s: _opponent_square(s, 0))
        fresh = HistoryResampler().posterior(state, 0).distribution(lambda s: _opponent_square(s, 0))
        assert ours.keys() == fresh.keys() and all(abs(ours[v] - fresh[v]) < 1e-12 for v in ours)
    assert len(states) >= 5


def test_a_game_too_large_for_both_methods_fails_the_draw_within_its_budget_then_at_once():
    state = _random_decisions("hand_of_war", 1, seed=9)[2]  # the deal's 16 cards: far too many histories
    resampler = HistoryResampler(max_nodes=500, max_steps=300)
    rng = np.random.default_rng(0)
    with pytest.raises(ResampleFailure, match="300 replayed moves"):
        resampler(state, state.current_player(), rng)
    start = time.process_time()  # CPU time: the same on an idle and a loaded machine
    with pytest.raises(ResampleFailure, match="already failed"):
        resampler(state, state.current_player(), rng)
    assert time.process_time() - start < 0.05
    assert resampler.failed_draws == 2 and resampler.exact_draws == resampler.rejection_draws == 0


def _first_moves_first(state, player):
    """A fixed opponent policy far from uniform: the i-th legal action with probability proportional to 2^-i."""
    legal = state.legal_actions()
    weights = [0.5 ** i for i in range(len(legal))]
    return [(a, w / sum(weights)) for a, w in zip(legal, weights)]


def test_with_an_opponent_policy_the_posterior_is_the_conditional_of_that_play():
    state, truth = _joint(4, policy=_first_moves_first)
    resampler = HistoryResampler(opponent_policy=_first_moves_first)
    exact = resampler.posterior(state, 0).distribution(lambda s: _opponent_square(s, 0))
    assert exact.keys() == truth.keys() and all(abs(exact[v] - truth[v]) < 1e-9 for v in truth), (exact, truth)
    uniform = HistoryResampler().posterior(state, 0).distribution(lambda s: _opponent_square(s, 0))
    assert _tv(uniform, exact) > 0.05, "this state cannot tell the opponent model apart"
    rejection = HistoryResampler(max_nodes=0, opponent_policy=_first_moves_first)  # forward draws only
    rng = np.random.default_rng(0)
    drawn = Counter(_opponent_square(rejection(state, 0, rng), 0) for _ in range(3000))
    assert rejection.rejection_draws == 3000 and _tv({v: n / 3000 for v, n in drawn.items()}, exact) < 0.05


@pytest.mark.parametrize("policy,words", [(lambda s, p: [(99, 1.0)], "action 99, not legal"),
                                          (lambda s, p: [(s.legal_actions()[0], float("nan"))], "not one in")])
def test_an_opponent_policy_that_is_not_a_distribution_over_legal_actions_is_refused(policy, words):
    state, _ = _joint(2)
    with pytest.raises(ValueError, match=words):
        HistoryResampler(opponent_policy=policy).posterior(state, 0)
