"""A hand-written reference model registered through the OpenSpiel adapter runs under OpenSpiel's own MCTSBot
and evaluate_bots, unchanged."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pyspiel
import pytest
from open_spiel.python.algorithms import evaluate_bots, mcts
from open_spiel.python.bots import uniform_random

from cwm import adapter, games, model
from cwm.games import oracle
from cwm.sandbox import load_source
from planners.config import SearchConfig
from planners.mcts import MCTS

REFERENCE = Path(__file__).resolve().parent.parent / "data" / "reference"


def _registered(game: str) -> pyspiel.Game:
    source = (REFERENCE / f"{game}_model.py").read_text(encoding="utf-8")
    gt = games.load_game(game)
    wm = model.WorldModel(load_source(source, name=f"{game}_reference"),
                          codec=model.ActionCodec.from_game(gt), name=f"{game}_reference")
    return adapter.as_openspiel_game(wm, reference=gt)


def _mcts_bot(game: pyspiel.Game, seed: int, simulations: int = 60) -> mcts.MCTSBot:
    rng = np.random.RandomState(seed)
    return mcts.MCTSBot(game, uct_c=2.0, max_simulations=simulations,
                        evaluator=mcts.RandomRolloutEvaluator(n_rollouts=2, random_state=rng), random_state=rng)


@pytest.mark.parametrize("seed", [0, 1])
def test_tic_tac_toe_model_plays_full_game_under_mcts(seed: int) -> None:
    game = _registered("tic_tac_toe")
    bots = [_mcts_bot(game, seed), _mcts_bot(game, seed + 100)]
    returns = evaluate_bots.evaluate_bots(game.new_initial_state(), bots, np.random.RandomState(seed))
    assert len(returns) == 2 and returns[0] + returns[1] == 0 and returns[0] in (-1.0, 0.0, 1.0)


def test_mcts_on_the_model_finds_the_immediate_win() -> None:
    game = _registered("tic_tac_toe")
    state = game.new_initial_state()
    for move in ["x(0,0)", "o(1,0)", "x(0,1)", "o(1,1)"]:
        player = state.current_player()
        state.apply_action(next(a for a in state.legal_actions() if state.action_to_string(player, a) == move))
    bot = _mcts_bot(game, 0, simulations=300)
    assert state.action_to_string(state.current_player(), bot.step(state)) == "x(0,2)"


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_leduc_model_plays_full_game_with_chance_under_mcts(seed: int) -> None:
    game = _registered("leduc_poker")
    state = game.new_initial_state()
    assert state.is_chance_node() and len(state.chance_outcomes()) == 6
    bots = [_mcts_bot(game, seed), _mcts_bot(game, seed + 100)]
    returns = evaluate_bots.evaluate_bots(state, bots, np.random.RandomState(seed))
    assert returns[0] == -returns[1] and abs(returns[0]) <= 13


def test_adapter_ids_match_the_ground_truth() -> None:
    game = _registered("leduc_poker")
    gt = games.load_game("leduc_poker")
    state, truth = game.new_initial_state(), gt.new_initial_state()
    for action in [3, 0, 2, 1, 4, 1, 2]:  # deal 3 and 0, Raise, Call, public 4, Call, Raise
        assert sorted(state.legal_actions()) == sorted(truth.legal_actions())
        assert state.action_to_string(state.current_player(), action) == truth.action_to_string(
            truth.current_player(), action)
        state.apply_action(action)
        truth.apply_action(action)
    assert state.current_player() == truth.current_player() == 0


# Backgammon's action strings depend on the state (id 25 is "... O starts ..." before the first roll and
# "chance outcome 25 (roll: 54)" after it), so ids must be decoded by the state, not by a global table.


def test_backgammon_oracle_model_walks_by_ids_like_the_ground_truth() -> None:
    wm = oracle.oracle_model("backgammon")
    state, truth = wm.new_initial_state(), games.load_game("backgammon").new_initial_state()
    rng = np.random.default_rng(0)
    played = []
    for _ in range(30):
        player = truth.current_player()
        if truth.is_chance_node():
            ids = sorted(int(a) for a, _ in truth.chance_outcomes())
            assert sorted(a for a, _ in state.chance_outcomes()) == ids
        else:
            ids = sorted(int(a) for a in truth.legal_actions())
            assert sorted(state.legal_actions()) == ids
        action = ids[rng.integers(len(ids))]
        played.append(truth.action_to_string(player, action))
        assert state.action_to_string(player, action) == played[-1]
        state = state.child(action)
        truth.apply_action(action)
    assert state.history() == truth.history()
    assert state.history_strings() == played


@pytest.mark.parametrize("seed", [0, 1])
def test_backgammon_random_bots_finish_under_evaluate_bots(seed: int) -> None:
    wm = oracle.oracle_model("backgammon")
    game = adapter.as_openspiel_game(wm, reference=wm.functions.game)
    bots = [uniform_random.UniformRandomBot(p, np.random.RandomState(seed + p)) for p in range(2)]
    returns = evaluate_bots.evaluate_bots(game.new_initial_state(), bots, np.random.RandomState(seed))
    assert returns[0] == -returns[1] and abs(returns[0]) in (1.0, 2.0, 3.0)


def test_planners_mcts_searches_a_backgammon_model() -> None:
    wm = oracle.oracle_model("backgammon")
    state = wm.new_initial_state()
    state = state.child(state.chance_outcomes()[5][0])  # after the opening roll: a player node
    result = MCTS(SearchConfig(num_simulations=20, rollouts=1, max_rollout_steps=30), seed=0).search(state)
    assert result.action in state.legal_actions()
    assert state.action_to_string(state.current_player(), result.action) in state.legal_action_strings()
