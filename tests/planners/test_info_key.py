"""Trace keys (``planners.info_key``): on engines that have perfect-recall information states, the traces
split and merge states exactly as the engine's strings do; keys extended move by move equal the replay's;
ISMCTS keyed by traces searches exactly as keyed by the engine's strings; and on engines without strings
(tiny poker's twin without them, OpenSpiel's crazy eights) ISMCTS searches instead of raising.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pyspiel
import pytest

from cwm.games import registry as games
from planners.config import SearchConfig
from planners.gt_sampler import decision_states
from planners.info_key import TraceKeys, has_information_states, info_key, keys_problem, trace_key
from planners.ismcts import ISMCTS

FOUNDATION = Path(__file__).resolve().parent.parent / "data" / "foundation"
TINY_POKER = f"{FOUNDATION / 'tiny_poker.py'}:tiny_poker"
NO_INFOSTATE = f"{FOUNDATION / 'tiny_poker_no_infostate.py'}:tiny_poker_no_infostate"


def _every_state(game: pyspiel.Game) -> list[pyspiel.State]:
    found, stack = [], [game.new_initial_state()]
    while stack:
        state = stack.pop()
        found.append(state)
        if not state.is_terminal():
            moves = [a for a, _ in state.chance_outcomes()] if state.is_chance_node() else state.legal_actions()
            stack.extend(state.child(a) for a in moves)
    return found


def _random_states(game: pyspiel.Game, plays: int) -> list[pyspiel.State]:
    return [s for i in range(plays) for s in decision_states(game, np.random.default_rng(i))]


@pytest.mark.parametrize("game_string,where,least", [
    ("kuhn_poker", "every", 6), ("kuhn_poker(players=3)", "every", 12), ("leduc_poker", "random", 100),
])
def test_trace_keys_split_and_merge_states_as_the_engines_information_states_do(game_string, where, least):
    game = pyspiel.load_game(game_string)
    states = _every_state(game) if where == "every" else _random_states(game, 300)
    for player in range(game.num_players()):
        acting = [s for s in states if s.current_player() == player]
        pairs = {(s.information_state_string(player), trace_key(s, player)) for s in acting}
        engine, traces = {e for e, _ in pairs}, {t for _, t in pairs}
        # a one-to-one pairing: no two engine information states share a trace (split), no information
        # state has two traces (merged)
        assert len(pairs) == len(engine) == len(traces)
        assert len(engine) >= least
        assert len(acting) > len(engine)  # states were merged: several worlds per information state


@pytest.mark.parametrize("game_string,count_line", [("phantom_ttt", None), ("dark_hex(num_rows=3,num_cols=3)", 3)])
def test_trace_keys_do_not_count_the_opponents_unseen_tries(game_string, count_line):
    """In phantom games a player does not see how many tries the opponent's move took (a try on a cell taken by
    a stone it cannot see fails, and it tries again): the traces pair one to one with phantom tic-tac-toe's
    information states, and with dark hex's less their line of the total move count (which dark hex's engine
    puts in a player's information state though the player's observation does not show it)."""
    game = pyspiel.load_game(game_string)
    states = _random_states(game, 300)
    for player in range(2):
        acting = [s for s in states if s.current_player() == player]
        pairs = set()
        for s in acting:
            lines = s.information_state_string(player).split("\n")
            if count_line is not None:
                assert lines.pop(count_line).isdigit()
            pairs.add(("\n".join(lines), trace_key(s, player)))
        engine, traces = {e for e, _ in pairs}, {t for _, t in pairs}
        assert len(pairs) == len(engine) == len(traces) >= 500
        # some information state was reached by histories of different lengths (the opponent's failed tries)
        lengths: dict[str, set[int]] = {}
        for s in acting:
            lengths.setdefault(trace_key(s, player), set()).add(len(s.history()))
        assert any(len(found) > 1 for found in lengths.values())


def test_a_player_tells_apart_its_own_card_but_not_the_opponents():
    game = pyspiel.load_game("kuhn_poker")

    def after(*actions: int) -> pyspiel.State:
        state = game.new_initial_state()
        for a in actions:
            state.apply_action(a)
        return state

    # player 0 holds card 1; the opponent's card (0 or 2) it cannot see
    assert trace_key(after(1, 0, 1), 1) != trace_key(after(1, 2, 1), 1)  # player 1 sees its own card
    assert trace_key(after(1, 0), 0) == trace_key(after(1, 2), 0)
    assert trace_key(after(1, 0), 0) != trace_key(after(2, 0), 0)
    # the same cards, another bet: player 1 saw it
    assert trace_key(after(1, 0, 1), 1) != trace_key(after(1, 0, 0), 1)
    # another player's key of the same state is another key (the trace starts with the player)
    assert trace_key(after(1, 0, 1, 1), 0) != trace_key(after(1, 0, 1, 1), 1)


@pytest.mark.parametrize("game_string", ["leduc_poker", "crazy_eights(players=3)", "goofspiel(num_cards=4,imp_info=true,players=3)"])
def test_keys_extended_move_by_move_equal_the_replays(game_string):
    game = pyspiel.load_game(game_string)
    if game.get_type().dynamics == pyspiel.GameType.Dynamics.SIMULTANEOUS:
        game = pyspiel.convert_to_turn_based(game)
    checked = 0
    for seed in range(5):
        rng = np.random.default_rng(seed)
        state = game.new_initial_state()
        keys = TraceKeys(state)
        while not state.is_terminal() and checked < 60 * (seed + 1):
            mover = state.current_player()
            moves = [a for a, _ in state.chance_outcomes()] if state.is_chance_node() else state.legal_actions()
            action = int(moves[rng.integers(len(moves))])
            state.apply_action(action)
            keys.moved(mover, action, state)
            assert [keys.key(p) for p in range(game.num_players())] == [
                trace_key(state, p) for p in range(game.num_players())]
            checked += 1
    assert checked >= 30


def test_info_key_is_the_engines_string_where_it_has_one():
    kuhn = pyspiel.load_game("kuhn_poker")
    state = kuhn.new_initial_state().child(0).child(1)
    assert has_information_states(kuhn) and info_key(state, 0) == state.information_state_string(0)
    crazy = pyspiel.load_game("crazy_eights(players=3)")
    world = decision_states(crazy, np.random.default_rng(0))[0]
    assert not has_information_states(crazy) and info_key(world, 1) == trace_key(world, 1)
    assert keys_problem(crazy) == "" and keys_problem(kuhn) == ""


CONFIG = SearchConfig(num_simulations=150, rollouts=2)


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_ismcts_keyed_by_traces_searches_as_keyed_by_the_engines_strings(seed):
    game = pyspiel.load_game("leduc_poker")
    searched = 0
    for state in decision_states(game, np.random.default_rng(seed))[:4]:
        engine = ISMCTS(CONFIG, seed=seed).search(state)
        traced = ISMCTS(CONFIG, seed=seed, trace_keys=True).search(state)
        assert traced == engine
        assert sum(engine.visits.values()) > 0 and not engine.fallback
        searched += 1
    assert searched == 4


def test_an_engine_without_information_states_is_searched_by_traces_as_its_twin_with_them():
    """Tiny poker and its twin without information-state strings: the same draws (the generic resampler) and
    the same statistics, so the same search, move for move."""
    with_strings, without = games.load_game(TINY_POKER), games.load_game(NO_INFOSTATE)
    assert has_information_states(with_strings) and not has_information_states(without)
    compared = 0
    for actions in ([0, 1], [2, 0, 1], [1, 2, 0, 1], [0, 2, 1, 1, 0]):
        states = []
        for game in (with_strings, without):
            state = game.new_initial_state()
            for a in actions:
                state.apply_action(a)
            states.append(state)
        engine, traced = (ISMCTS(CONFIG, seed=7).search(s) for s in states)
        assert traced == engine and not traced.fallback
        compared += 1
    assert compared == 4


def test_ismcts_searches_crazy_eights_by_traces():
    """Crazy eights has no information-state strings; given worlds (here the real one, as a sampler would
    draw it), ISMCTS keys its nodes by the players' traces and searches."""
    game = pyspiel.load_game("crazy_eights(players=3)")
    state = decision_states(game, np.random.default_rng(3))[5]
    player = state.current_player()
    search = ISMCTS(SearchConfig(num_simulations=60, rollouts=1), seed=0,
                    sampler=lambda s, p, rng: s.clone())
    result = search.search(state, keep_tree=True)
    assert result.action in state.legal_actions() and not result.fallback
    assert result.tree is not None and result.tree.root_key == trace_key(state, player)
    assert len(result.tree.nodes) > 10 and search.draws == 60
