"""Training games are chosen from a larger seeded pool to show every kind of event the pool holds."""

from __future__ import annotations

import dataclasses

import pytest

from cwm.games import event_kinds, trajectories
from cwm.synthesis import SynthesisSettings
from cwm.types import UsageError


def _kinds(games: list) -> set[str]:
    return set().union(*map(event_kinds.kinds, games))


def _resigned(traj: object) -> object:
    """A tic-tac-toe game whose last move is replaced by a resignation (a kind no other game holds)."""
    last = traj.steps[-1]  # type: ignore[attr-defined]
    return dataclasses.replace(traj, steps=(*traj.steps[:-1], dataclasses.replace(  # type: ignore[attr-defined]
        last, action_string="resign")))


def test_a_rare_event_in_one_game_of_the_pool_is_among_the_chosen_games():
    pool = trajectories.collect("tic_tac_toe", 12, seed=0)
    pool[9] = _resigned(pool[9])
    chosen = event_kinds.covering_games(pool, 3)
    assert len(chosen) == 3 and pool[9] in chosen
    assert [pool.index(t) for t in chosen] == sorted(pool.index(t) for t in chosen)  # in the pool's order
    assert {"move resign", "end after resign"} <= _kinds(chosen)
    assert event_kinds.covering_games(pool, 3) == chosen  # deterministic


def test_leducs_training_games_hold_the_folds_its_first_five_games_lack():
    first = trajectories.collect("leduc_poker", 5, seed=0)
    chosen = trajectories.collect_covering("leduc_poker", 5, seed=0, pool=4)
    pool = trajectories.collect("leduc_poker", 20, seed=0)
    assert "move Fold" not in _kinds(first)  # the first five games of random play never fold
    assert len(chosen) == 5 and _kinds(chosen) == _kinds(pool)
    assert {"move Fold", "end after Fold"} <= _kinds(chosen)


def test_a_pool_of_one_is_the_first_games_and_a_smaller_one_is_refused():
    assert trajectories.collect_covering("tic_tac_toe", 3, seed=7, pool=1) == trajectories.collect("tic_tac_toe", 3, seed=7)
    with pytest.raises(UsageError, match="pool"):
        trajectories.collect_covering("tic_tac_toe", 3, pool=0)
    # a count below 1 is named as the count asked for, not as the size of the pool it would be drawn from
    with pytest.raises(UsageError, match=r"training games must be at least 1, got 0$"):
        trajectories.collect_covering("tic_tac_toe", 0, pool=4)
    with pytest.raises(UsageError, match=r"got -2$"):
        trajectories.collect_covering("tic_tac_toe", -2, pool=3)
    assert "train_pool must be an integer >= 1, got 0" in SynthesisSettings.of("world_model", train_pool=0).problems()


def test_the_greedy_cover_adds_the_most_new_kinds_per_cost_within_the_budget():
    items = [{"a"}, {"a", "b", "c"}, {"d"}, {"b", "e"}]
    assert event_kinds.greedy_cover(items) == [1, 2, 3]  # the first adds nothing once the second is taken
    # costs: the three-kind item is too dear for the budget, so two cheap items cover what they can
    cost = {0: 1.0, 1: 10.0, 2: 1.0, 3: 2.0}
    assert event_kinds.greedy_cover(items, cost=cost.__getitem__, budget=4.0) == [0, 2, 3]
    assert event_kinds.greedy_cover(items, count=1) == [1]
