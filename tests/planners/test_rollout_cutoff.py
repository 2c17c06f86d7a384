"""The rollout cutoff: a playout stopped at ``max_steps`` moves is scored by the value function at the state
it reached, else by the game's neutral value (its returns so far); a playout that ends first is scored by
the game, on OpenSpiel states and on model states alike."""

from __future__ import annotations

import random

import pyspiel
import pytest

from cwm.games.oracle import oracle_model
from planners import MCTS
from planners.config import SearchConfig
from planners.rollout import rollout_returns

BACKGAMMON = pyspiel.load_game("backgammon")


def _decision(game_state):
    state = game_state
    while state.is_chance_node():
        state.apply_action(state.chance_outcomes()[0][0])
    return state


def test_a_cut_off_rollout_without_a_value_function_scores_the_neutral_value():
    state = _decision(BACKGAMMON.new_initial_state())
    assert rollout_returns(state, 5, random.Random(0), max_steps=8) == [0.0, 0.0]


def test_a_cut_off_rollout_is_scored_by_the_value_function_where_it_stopped():
    state = _decision(BACKGAMMON.new_initial_state())
    seen = []

    def value(s, player):
        seen.append((len(s.history()), s.is_terminal(), player))
        return 0.25 if player == 0 else -0.5

    assert rollout_returns(state, 3, random.Random(0), max_steps=8, value_fn=value) == [0.25, -0.5]
    assert seen and all(h == len(state.history()) + 8 and not terminal for h, terminal, _ in seen)
    assert sorted({p for *_, p in seen}) == [0, 1] and len(seen) == 6  # each player, each of 3 playouts


def test_a_rollout_that_ends_before_the_cutoff_is_scored_by_the_game():
    state = pyspiel.load_game("tic_tac_toe").new_initial_state()
    returns = rollout_returns(state, 20, random.Random(0), max_steps=100, value_fn=lambda s, p: 99.0)
    assert 99.0 not in returns and all(-1 <= r <= 1 for r in returns)


def test_model_states_are_cut_off_and_valued_on_their_json_state():
    model = oracle_model("tic_tac_toe")
    state = model.new_initial_state()
    raws = []

    def value(s, player):
        raws.append(s.raw)
        return 0.5

    assert rollout_returns(state, 2, random.Random(1), max_steps=3, value_fn=value) == [0.5, 0.5]
    assert raws and all(r != state.raw for r in raws)
    assert rollout_returns(state, 2, random.Random(1), max_steps=3) == [0.0, 0.0]


@pytest.mark.parametrize("cap", [1, 4])
def test_mcts_with_a_cutoff_still_plays_a_legal_move(cap):
    state = _decision(BACKGAMMON.new_initial_state())
    action = MCTS(SearchConfig(num_simulations=30, rollouts=1, max_rollout_steps=cap), seed=0).step(state)
    assert action in state.legal_actions()


class _RecordingMCTS(MCTS):
    """MCTS that records the history of every leaf it expands (where its playouts start)."""

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self.leaves: set[tuple[int, ...]] = set()

    def _expand(self, node, action):
        child = super()._expand(node, action)
        self.leaves.add(tuple(child.state.history()))
        return child


def _recording_value(seen):
    def value(state, player):
        seen.append((tuple(state.history()), state.is_terminal(), player))
        return 0.0
    return value


def test_rollout_leaves_call_the_value_function_exactly_where_a_playout_is_cut_off():
    state = pyspiel.load_game("tic_tac_toe").new_initial_state()
    seen: list = []
    config = SearchConfig(num_simulations=40, rollouts=2, max_rollout_steps=3, leaf="rollout", solve=False)
    search = _RecordingMCTS(config, value_fn=_recording_value(seen), seed=0)
    assert search.step(state) in state.legal_actions()
    assert seen, "some playout of 3 moves from a tic-tac-toe leaf must be cut off"
    for history, terminal, _ in seen:  # 3 moves past a leaf of the tree, the game not over
        assert history[:-3] in search.leaves and not terminal
    assert all(h not in search.leaves for h, *_ in seen)  # never at a leaf itself: the leaf was rolled out
    assert [p for *_, p in seen] == [0, 1] * (len(seen) // 2)  # each cut playout is valued for both players


def test_value_leaves_call_the_value_function_at_the_leaves_themselves():
    state = pyspiel.load_game("tic_tac_toe").new_initial_state()
    seen: list = []
    config = SearchConfig(num_simulations=40, rollouts=2, max_rollout_steps=3, leaf="value", solve=False)
    search = _RecordingMCTS(config, value_fn=_recording_value(seen), seed=0)
    search.step(state)
    assert {h for h, terminal, _ in seen if not terminal} <= search.leaves and len(seen) <= 2 * 40


def test_rollout_leaves_without_a_cutoff_never_call_the_value_function():
    state = pyspiel.load_game("tic_tac_toe").new_initial_state()
    seen: list = []
    config = SearchConfig(num_simulations=40, rollouts=2, leaf="rollout")  # the cap is the game's length
    MCTS(config, value_fn=_recording_value(seen), seed=0).step(state)
    assert seen == []


def test_ismcts_rollout_leaves_call_the_value_function_only_at_cut_off_states():
    from planners import ISMCTS

    game = pyspiel.load_game("leduc_poker")
    state = _decision(game.new_initial_state())
    seen: list = []
    config = SearchConfig(num_simulations=30, rollouts=1, max_rollout_steps=2, leaf="rollout")
    action = ISMCTS(config, value_fn=_recording_value(seen), seed=0).step(state)
    assert action in state.legal_actions()
    assert seen and not any(terminal for _, terminal, _ in seen)
    # a new information set's state (the root's own on the first simulation), then the two moves of the cut
    assert all(len(h) >= len(state.history()) + 2 for h, *_ in seen)


@pytest.mark.parametrize("config, problem", [
    (SearchConfig(leaf="values"), "the leaf evaluation must be one of"),
    (SearchConfig(leaf="rollout", rollouts=0), "rollouts must be >= 1"),
], ids=["unknown-leaf", "rollout-leaf-without-rollouts"])
def test_leaf_settings_out_of_range_are_refused(config, problem):
    with pytest.raises(ValueError, match=problem):
        MCTS(config, value_fn=lambda s, p: 0.0)


def test_value_leaves_may_have_no_rollouts():
    state = pyspiel.load_game("tic_tac_toe").new_initial_state()
    assert MCTS(SearchConfig(num_simulations=5, rollouts=0), value_fn=lambda s, p: 0.0, seed=0).step(state) >= 0


def test_the_leaf_setting_travels_in_the_run_record_and_older_records_mean_value_leaves():
    config = SearchConfig(leaf="rollout", max_rollout_steps=12)
    assert SearchConfig.from_json(config.to_json()) == config
    older = {k: v for k, v in SearchConfig().to_json().items() if k != "leaf"}
    assert SearchConfig.from_json(older).leaf == "value"
