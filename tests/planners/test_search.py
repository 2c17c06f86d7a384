"""The one search loop: MCTS is the loop with UCT and rollouts, PUCT the loop with a prior; a search's tree can be
walked; the settings per algorithm come out of the one ``SearchConfig`` record and are checked in its words."""

from __future__ import annotations

import dataclasses
import random

import pyspiel
import pytest

from cwm.types import CHANCE, TERMINAL, UsageError
from planners import (
    ISMCTS,
    MCTS,
    PUCT,
    ISMCTSSettings,
    MCTSSettings,
    PriorValueEvaluator,
    PUCTSettings,
    RolloutEvaluator,
    SearchConfig,
    TreeSearch,
    ValueEvaluator,
    select_puct,
    select_uct,
)
from planners.tree import NOBODY


def _position(game: str, moves: str = "") -> pyspiel.State:
    state = pyspiel.load_game(game).new_initial_state()
    for move in moves.split():
        state.apply_action(state.string_to_action(move))
    return state


def _uniform(state) -> tuple[dict[int, float], float]:
    """A hand-written policy: uniform over the legal actions, every position even."""
    legal = state.legal_actions()
    return {a: 1.0 / len(legal) for a in legal}, 0.0


def test_mcts_is_the_loop_with_uct_and_rollouts():
    state = _position("tic_tac_toe", "x(1,1) o(0,0)")
    loop = TreeSearch(select=select_uct(2.0), evaluator=RolloutEvaluator(2, 9), num_simulations=300, seed=7)
    mcts = MCTS(MCTSSettings(num_simulations=300, rollouts=2, solve=False), seed=7)
    assert loop.search(state) == mcts.search(state)
    solved = TreeSearch(select=select_uct(2.0, solver=True), evaluator=RolloutEvaluator(2, 9), num_simulations=300,
                        solve=True, max_utility=1.0, seed=7)
    assert solved.search(state) == MCTS(MCTSSettings(num_simulations=300, rollouts=2), seed=7).search(state)


def test_puct_is_the_loop_with_puct_selection_and_a_prior():
    state = _position("tic_tac_toe", "x(1,1)")
    loop = TreeSearch(select=select_puct(1.25), evaluator=PriorValueEvaluator(_uniform), num_simulations=80, seed=0)
    found, puct = loop.search(state), PUCT(PriorValueEvaluator(_uniform), PUCTSettings(num_simulations=80)).search(state)
    assert (found.visits, found.values, found.simulations) == (puct.visits, puct.values, 80)


def test_uct_runs_over_an_evaluator_with_priors_too():
    """Strategies combine: UCT with a prior-giving evaluator expands every action before it compares them."""
    state = _position("tic_tac_toe", "x(1,1)")
    search = TreeSearch(select=select_uct(2.0), evaluator=PriorValueEvaluator(_uniform), num_simulations=50, seed=0)
    result = search.search(state)
    assert set(result.visits) == set(state.legal_actions()) and sum(result.visits.values()) == 50


def test_the_tree_walks_every_node_with_the_actions_that_reach_it():
    root_state = _position("tic_tac_toe", "x(1,1)")
    result = MCTS(MCTSSettings(num_simulations=200, rollouts=1, solve=False), seed=3).search(root_state, keep_tree=True)
    walked = list(result.tree.walk())
    assert walked[0] == ((), result.tree.root) and len(walked) == 201  # the root and one new node a simulation
    root = result.tree.root
    assert (root.mover, root.action, root.visits) == (NOBODY, NOBODY, 200)
    for path, node in walked[1:]:
        state = root_state
        for action in path:
            state = state.child(action)
        assert node.state.history() == state.history() and node.action == path[-1]
        kids = sum(kid.visits for kid in node.kids)
        if node.player == TERMINAL:
            assert not node.kids and node.visits >= 1
        else:  # expanded and valued once, then every later visit went on to a child
            assert node.visits == 1 + kids
    assert sum(kid.visits for kid in root.kids) == 200
    assert [n.action for n in result.tree.principal_variation()][:1] == [max(result.visits, key=result.visits.get)]


def test_keeping_the_tree_changes_nothing_else():
    state = _position("connect_four", "x3 o3")
    kept = MCTS(MCTSSettings(num_simulations=150, rollouts=1), seed=5).search(state, keep_tree=True)
    plain = MCTS(MCTSSettings(num_simulations=150, rollouts=1), seed=5).search(state)
    assert plain.tree is None and kept.tree is not None and kept == plain


def test_puct_with_a_hand_written_prior_wins_in_one_and_draws_nothing_without_chance():
    state = _position("tic_tac_toe", "x(0,0) o(1,0) x(0,1) o(1,1)")  # x wins at (0,2)
    rng = random.Random(0)
    search = PUCT(PriorValueEvaluator(_uniform), PUCTSettings(num_simulations=40), seed=rng)
    before = rng.getstate()
    result = search.search(state, keep_tree=True)
    assert result.action == state.string_to_action("x(0,2)") and result.simulations == 40
    assert rng.getstate() == before  # no chance node, so no draw: PUCT's selection is deterministic
    assert result.tree.root.prior == {a: 0.2 for a in state.legal_actions()}


def test_puct_crosses_chance_nodes_in_the_tree():
    state = _position("pig(winscore=10)")
    first = PUCT(PriorValueEvaluator(_uniform), PUCTSettings(num_simulations=60), seed=1).search(state, keep_tree=True)
    again = PUCT(PriorValueEvaluator(_uniform), PUCTSettings(num_simulations=60), seed=1).search(state)
    assert first == again and first.action in state.legal_actions()
    chance = [node for _, node in first.tree.walk() if node.player == CHANCE]
    assert chance and all(kid.mover == CHANCE for node in chance for kid in node.kids)
    assert any(len(node.kids) > 1 for node in chance)  # outcomes drawn on every visit, not fixed once


def test_the_prior_value_evaluator_values_a_chance_state_after_a_draw():
    roll = _position("pig(winscore=10)").child(0)  # the roll: a chance state
    evaluator = PriorValueEvaluator(lambda s: ({a: 0.5 for a in s.legal_actions()}, 0.25))
    values, prior = evaluator.evaluate(roll, random.Random(0))
    assert prior is None and sorted(values) == [-0.25, 0.25]
    values, prior = PriorValueEvaluator(lambda s: ({0: 1.0}, [0.1, 0.2])).evaluate(_position("tic_tac_toe"), random.Random(0))
    assert (values, prior) == ([0.1, 0.2], {0: 1.0})


def test_puct_needs_an_evaluator_with_priors():
    with pytest.raises(UsageError, match="gives no priors"):
        PUCT(ValueEvaluator(lambda s, p: 0.0))
    with pytest.raises(UsageError, match=r"PUCT: the PUCT constant must be a finite number >= 0 \(got -1\)"):
        PUCT(PriorValueEvaluator(_uniform), PUCTSettings(c_puct=-1))


def test_the_config_gives_each_search_its_settings():
    config = SearchConfig(num_simulations=77, uct_c=1.5, rollouts=3, max_rollout_steps=20, leaf="rollout",
                          solve=False, max_sample_tries=4, availability_counts=True, seed=9, call_time_s=0.5)
    assert config.mcts() == MCTSSettings(num_simulations=77, uct_c=1.5, rollouts=3, max_rollout_steps=20,
                                         leaf="rollout", solve=False, seed=9)
    assert config.ismcts() == ISMCTSSettings(num_simulations=77, uct_c=1.5, rollouts=3, max_rollout_steps=20,
                                             leaf="rollout", max_sample_tries=4, availability_counts=True, seed=9)
    read = {f.name for cls in (MCTSSettings, ISMCTSSettings) for f in dataclasses.fields(cls)}
    assert {f.name for f in dataclasses.fields(SearchConfig)} - read == {"call_time_s"}  # not a search setting


def test_the_record_keeps_its_shape():
    """Arena match keys hash ``SearchConfig.to_json()``: its keys and values must stay as they were."""
    assert SearchConfig().to_json() == {
        "num_simulations": 1000, "uct_c": 2.0, "rollouts": 10, "max_rollout_steps": None, "leaf": "value",
        "solve": True, "max_sample_tries": 10, "availability_counts": False, "seed": None, "call_time_s": 2.0}


def test_the_per_call_time_changes_no_search():
    state = _position("tic_tac_toe", "x(1,1)")
    fast, slow = (MCTS(SearchConfig(num_simulations=100, rollouts=1, call_time_s=t), seed=2).search(state)
                  for t in (0.1, 30.0))
    assert fast == slow


def test_a_search_takes_its_own_settings_or_the_record_alike():
    state = pyspiel.load_game("leduc_poker").new_initial_state()
    for card in (0, 3):  # the deal
        state.apply_action(card)
    record = SearchConfig(num_simulations=60, rollouts=1, availability_counts=True)
    assert ISMCTS(record, seed=4).search(state) == ISMCTS(record.ismcts(), seed=4).search(state)
    ttt = _position("tic_tac_toe")
    assert MCTS(record, seed=4).search(ttt) == MCTS(record.mcts(), seed=4).search(ttt)


def test_settings_are_keyword_only_frozen_and_checked_in_the_records_words():
    with pytest.raises(TypeError):
        MCTSSettings(100)  # type: ignore[misc]
    with pytest.raises(dataclasses.FrozenInstanceError):
        MCTSSettings().num_simulations = 5  # type: ignore[misc]
    bad = dict(num_simulations=0, uct_c=float("nan"), rollouts=-1, max_rollout_steps=0, leaf="x", seed=1.5)
    assert MCTSSettings(**bad, solve=1).problems() == [  # type: ignore[arg-type]
        "simulations must be >= 1 (got 0)", "the UCT constant must be a finite number >= 0 (got nan)",
        "rollouts must be >= 1 (got -1)", "the leaf evaluation must be one of ['value', 'rollout'] (got 'x')",
        "max rollout steps must be >= 1 (got 0)", "solve must be true or false (got 1)",
        "the seed must be an int or None (got 1.5)"]
    assert ISMCTSSettings(**bad, max_sample_tries=0).problems()[-2:] == [  # type: ignore[arg-type]
        "sample tries must be >= 1 (got 0)", "the seed must be an int or None (got 1.5)"]
    with pytest.raises(UsageError, match=r"^MCTS: rollouts must be >= 1 \(got 0\)$"):
        MCTS(MCTSSettings(rollouts=0))
    MCTS(MCTSSettings(rollouts=0), value_fn=lambda s, p: 0.0)  # a value function values the leaves


def test_the_record_is_checked_whole_where_a_search_takes_it():
    """A search given the record checks every field of it, as before: the CLI's messages stay the same."""
    with pytest.raises(UsageError, match=r"^MCTS: sample tries must be >= 1 \(got 0\)$"):
        MCTS(SearchConfig(max_sample_tries=0))
    assert SearchConfig(num_simulations=0, uct_c=float("nan"), rollouts=-1, max_rollout_steps=0, leaf="x", solve=1,
                        max_sample_tries=0, availability_counts=None, seed=1.5, call_time_s=0).problems() == [
        "simulations must be >= 1 (got 0)", "the UCT constant must be a finite number >= 0 (got nan)",
        "rollouts must be >= 1 (got -1)", "the leaf evaluation must be one of ['value', 'rollout'] (got 'x')",
        "max rollout steps must be >= 1 (got 0)", "sample tries must be >= 1 (got 0)",
        "the per-call time must be > 0 seconds (got 0)", "solve must be true or false (got 1)",
        "availability_counts must be true or false (got None)", "the seed must be an int or None (got 1.5)"]
