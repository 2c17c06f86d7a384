"""Seat-swapped pairs: match i of each seat order of a pairing is one deal (the same chance outcomes, the
seats swapped), played next to each other; the keys stay content keys."""

from __future__ import annotations

import pyspiel

from cwm.agents import Settings
from cwm.arena import plan_jobs, tournament
from cwm.arena.plan import TournamentPlan
from planners.config import SearchConfig

FAST = Settings(search=SearchConfig(num_simulations=10, rollouts=1))


def _chance(game: pyspiel.Game, actions: tuple[int, ...]) -> list[int]:
    """The chance outcomes of a played game, in order."""
    state, found = game.new_initial_state(), []
    for a in actions:
        if state.is_chance_node():
            found.append(a)
        state.apply_action(a)
    return found


def test_jobs_2k_and_2k_plus_1_are_one_deal_with_the_seats_swapped():
    jobs = plan_jobs("tic_tac_toe", ["random", "gt-ismcts", "gt-mcts"], TournamentPlan(matches=3, settings=FAST))
    assert len(jobs) == 3 * 2 * 3
    listed = list(jobs)
    assert [jobs[i] for i in range(len(jobs))] == listed  # indexing and iterating agree
    for first, second in zip(listed[::2], listed[1::2]):
        assert second.seats == first.seats[::-1] and second.index == first.index
        assert second.deal == first.deal and second.seed != first.seed and second.key != first.key
    assert len({j.deal for j in listed}) == len(listed) // 2  # every pair has a deal of its own


def test_a_paired_tournament_deals_each_pair_the_same_cards(tmp_path):
    results = tournament("leduc_poker", ["random", "gt-ismcts"], TournamentPlan(matches=4, settings=FAST, seed=3),
                         out_dir=tmp_path, executor="inline", progress=False)
    game = pyspiel.load_game("leduc_poker")
    by_pair: dict[int, list] = {}
    for r in results:
        by_pair.setdefault(r.index, []).append(r)
    assert sorted(by_pair) == [0, 1, 2, 3]
    for a, b in by_pair.values():
        assert a.seats == b.seats[::-1]
        dealt_a, dealt_b = _chance(game, a.actions), _chance(game, b.actions)
        assert dealt_a[:2] == dealt_b[:2]  # each seat holds the same private card in both matches
    firsts = {tuple(_chance(game, by_pair[i][0].actions)[:2]) for i in by_pair}
    assert len(firsts) > 1  # the pairs are not all one deal
