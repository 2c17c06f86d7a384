"""Agents at a three-player game: the CWM agent plans on its world model (here the oracle model, so any
difference is the agent's, not the model's) from every seat of three-player Pig, plays whole matches in
the arena's match loop without a forfeit, and is ahead of two random players over seat rotations."""

from __future__ import annotations

import pyspiel

from cwm.agents import CWMAgent, RandomAgent
from cwm.arena import play_match
from cwm.games.oracle import oracle_model
from cwm.stats import paired
from planners.config import SearchConfig

PIG3 = "pig(players=3,winscore=12)"


def test_the_cwm_agent_plays_three_player_pig_from_every_seat_and_beats_random_players():
    game = pyspiel.load_game(PIG3)
    model = oracle_model(PIG3)
    values, searched = [], [0, 0, 0]
    for deal in range(30):
        scores = []
        for seat in range(3):
            agents = [RandomAgent(seed=100 * deal + s) for s in range(3)]
            agents[seat] = CWMAgent(model, PIG3, SearchConfig(num_simulations=40, rollouts=1), seed=deal * 3 + seat)
            outcome = play_match(game, agents, seed=deal)
            assert outcome.forfeit_seat is None, outcome.reason
            assert len(outcome.returns) == 3
            searched[seat] += agents[seat].stats()["searches"]  # (a game may end before a seat's turn)
            mine = outcome.returns[seat]
            scores += [1.0 if mine > x else 0.5 if mine == x else 0.0
                       for s, x in enumerate(outcome.returns) if s != seat]
        values.append(sum(scores) / len(scores) - 0.5)  # the pairwise edge over the random players, this deal
    assert min(searched) > 0  # it planned from every seat
    result = paired(values, bound=0.5)
    assert result.lo > 0, result  # measured 0.31 [0.12, 0.43] of score over 30 deals
