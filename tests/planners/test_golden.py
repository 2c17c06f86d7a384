"""Golden searches: seeded MCTS and ISMCTS on small real games give exactly the action, visits, values,
simulations, draws and tree recorded here.

The numbers were recorded from the planners as they stood before the one-loop refactor (commit a1fd6a9), so
that a change of the search's code that changes what it computes (an extra random draw, another order of
expansion or backup, another tie-break) fails here, while a change that computes the same thing passes.
Values are compared exactly: they are means of game returns and of the dyadic values below, which every
IEEE-754 machine computes alike. Each case is named ``<algorithm>-<game>-<what it covers>``.
"""

from __future__ import annotations

import dataclasses
from pathlib import Path

import pyspiel
import pytest

from cwm import games, model
from cwm.agents import HistoryTracker, PlayerView, inference_sampler
from cwm.contract import INFERENCE_API
from cwm.sandbox import load_source
from planners import ISMCTS, MCTS
from planners.config import SearchConfig

REFERENCE = Path(__file__).resolve().parent.parent / "data" / "reference"


@dataclasses.dataclass(frozen=True)
class Golden:
    action: int
    simulations: int
    visits: dict[int, int]
    values: dict[int, float]
    draws: int = 0
    rejected: int = 0


def value(state, player: int) -> float:
    """A fixed, made-up leaf value in quarters (exact in binary): a function of the history and the player."""
    history = state.history()
    return ((sum(history) + 3 * player + len(history)) % 7 - 3) / 4.0


def _play(game: str, moves: list[str]) -> pyspiel.State:
    state = pyspiel.load_game(game).new_initial_state()
    for move in moves:
        state.apply_action(state.string_to_action(move))
    return state


def position(game: str, moves: str = "") -> pyspiel.State:
    """The state after ``moves``, action strings separated by spaces."""
    return _play(game, moves.split())


def _leduc(moves: str) -> pyspiel.State:
    """A Leduc state after ``moves``: a number is the card a chance deal gives, a word a player's move."""
    return _play("leduc_poker", [f"Chance outcome:{m}" if m.isdigit() else m for m in moves.split()])


MCTS_CASES = {
    "mcts-ttt-solver": lambda _: (MCTS(SearchConfig(num_simulations=300, rollouts=2), seed=7),
                                  position("tic_tac_toe")),
    "mcts-ttt-plain": lambda _: (MCTS(SearchConfig(num_simulations=300, rollouts=2, solve=False), seed=7),
                                 position("tic_tac_toe")),
    "mcts-ttt-midgame-solver": lambda _: (MCTS(SearchConfig(num_simulations=400, rollouts=1), seed=8),
                                          position("tic_tac_toe", "x(1,1) o(0,0) x(2,2)")),
    "mcts-ttt-midgame-plain": lambda _: (MCTS(SearchConfig(num_simulations=400, rollouts=1, solve=False), seed=8),
                                         position("tic_tac_toe", "x(1,1) o(0,0) x(2,2)")),
    "mcts-ttt-solver-proves": lambda _: (MCTS(SearchConfig(num_simulations=1000, rollouts=1), seed=0),
                                         position("tic_tac_toe", "x(0,0) o(1,0) x(0,1) o(1,1)")),
    "mcts-ttt-value-leaves": lambda _: (
        MCTS(SearchConfig(num_simulations=200, rollouts=0, solve=False), value_fn=value, seed=1),
        position("tic_tac_toe")),
    "mcts-ttt-rollout-cutoff-value": lambda _: (
        MCTS(SearchConfig(num_simulations=200, rollouts=2, max_rollout_steps=2, leaf="rollout", solve=False),
             value_fn=value, seed=2),
        position("tic_tac_toe")),
    "mcts-ttt-rollout-cutoff-neutral": lambda _: (
        MCTS(SearchConfig(num_simulations=200, rollouts=3, max_rollout_steps=2), seed=3), position("tic_tac_toe")),
    "mcts-ttt-model": lambda ttt_model: (MCTS(SearchConfig(num_simulations=200, rollouts=2), seed=4),
                                         ttt_model.new_initial_state()),
    "mcts-pig-chance": lambda _: (MCTS(SearchConfig(num_simulations=300, rollouts=1), seed=5),
                                  position("pig(winscore=10)")),
    "mcts-connect-four-max-utility": lambda _: (
        MCTS(SearchConfig(num_simulations=200, rollouts=1), max_utility=1.0, seed=6),
        position("connect_four", "x3 o3 x2")),
}

MCTS_GOLDEN = {
    'mcts-ttt-solver': Golden(action=4, simulations=300,
        visits={2: 36, 0: 37, 8: 41, 3: 22, 4: 68, 5: 18, 1: 23, 6: 39, 7: 16},
        values={2: 0.2777777777777778, 0: 0.32432432432432434, 8: 0.36585365853658536, 3: 0.09090909090909091,
                4: 0.5294117647058824, 5: -0.027777777777777776, 1: 0.10869565217391304, 6: 0.3717948717948718,
                7: -0.09375}),
    'mcts-ttt-plain': Golden(action=4, simulations=300,
        visits={2: 36, 0: 37, 8: 41, 3: 22, 4: 68, 5: 18, 1: 23, 6: 39, 7: 16},
        values={2: 0.2777777777777778, 0: 0.32432432432432434, 8: 0.36585365853658536, 3: 0.09090909090909091,
                4: 0.5294117647058824, 5: -0.027777777777777776, 1: 0.10869565217391304, 6: 0.3717948717948718,
                7: -0.09375}),
    'mcts-ttt-midgame-solver': Golden(action=2, simulations=200,
        visits={2: 44, 5: 32, 1: 26, 6: 36, 3: 22, 7: 40},
        values={2: -0.06818181818181818, 5: -0.65625, 1: -0.07692307692307693, 6: -0.2222222222222222,
                3: -0.36363636363636365, 7: -0.525}),
    'mcts-ttt-midgame-plain': Golden(action=6, simulations=400,
        visits={2: 103, 5: 26, 1: 66, 6: 118, 3: 51, 7: 36},
        values={2: -0.11650485436893204, 5: -0.6153846153846154, 1: -0.24242424242424243, 6: -0.0847457627118644,
                3: -0.3333333333333333, 7: -0.4722222222222222}),
    'mcts-ttt-solver-proves': Golden(action=2, simulations=4,
        visits={8: 1, 5: 1, 7: 1, 2: 1},
        values={8: 0.0, 5: 1.0, 7: -1.0, 2: 1.0}),
    'mcts-ttt-value-leaves': Golden(action=0, simulations=200,
        visits={1: 21, 6: 25, 5: 20, 8: 24, 2: 18, 7: 23, 3: 24, 4: 19, 0: 26},
        values={1: -0.03571428571428571, 6: 0.07, 5: -0.075, 8: 0.052083333333333336, 2: -0.125,
                7: -0.021739130434782608, 3: 0.052083333333333336, 4: -0.11842105263157894, 0: 0.08653846153846154}),
    'mcts-ttt-rollout-cutoff-value': Golden(action=4, simulations=200,
        visits={8: 22, 5: 20, 4: 34, 7: 18, 0: 23, 3: 20, 6: 16, 2: 25, 1: 22},
        values={8: 0.03977272727272727, 5: -0.00625, 4: 0.27205882352941174, 7: -0.020833333333333332,
                0: 0.09239130434782608, 3: -0.00625, 6: -0.125, 2: 0.135, 1: 0.0625}),
    'mcts-ttt-rollout-cutoff-neutral': Golden(action=4, simulations=200,
        visits={2: 20, 6: 22, 4: 26, 0: 23, 3: 21, 7: 22, 1: 21, 8: 23, 5: 22},
        values={2: 0.016666666666666666, 6: 0.0606060606060606, 4: 0.15384615384615383, 0: 0.07246376811594202,
                3: 0.047619047619047616, 7: 0.0606060606060606, 1: 0.031746031746031744, 8: 0.07246376811594202,
                5: 0.0606060606060606}),
    'mcts-ttt-model': Golden(action=4, simulations=200,
        visits={2: 20, 6: 23, 3: 29, 7: 12, 4: 34, 5: 24, 0: 21, 1: 16, 8: 21},
        values={2: 0.225, 6: 0.32608695652173914, 3: 0.39655172413793105, 7: -0.08333333333333333,
                4: 0.47058823529411764, 5: 0.3125, 0: 0.23809523809523808, 1: 0.0625, 8: 0.2619047619047619}),
    'mcts-pig-chance': Golden(action=0, simulations=300,
        visits={1: 38, 0: 262},
        values={1: -0.10526315789473684, 0: 0.42748091603053434}),
    'mcts-connect-four-max-utility': Golden(action=5, simulations=200,
        visits={5: 46, 2: 16, 0: 25, 3: 20, 6: 22, 4: 34, 1: 37},
        values={5: -0.13043478260869565, 2: -0.625, 0: -0.36, 3: -0.5, 6: -0.45454545454545453,
                4: -0.23529411764705882, 1: -0.08108108108108109}),
}

# The trees of the MCTS cases, recorded from the same searches before the refactor (commit a1fd6a9): the
# principal variation (each node's most visited child, the first expanded on ties) to depth 4 as (action,
# visits, mean return of the mover), and the number of nodes.
MCTS_TREES = {
    'mcts-ttt-solver': ([(4, 68, 0.5294117647058824), (8, 10, -0.4), (1, 2, 0.5), (3, 1, 0.0)], 301),
    'mcts-ttt-plain': ([(4, 68, 0.5294117647058824), (8, 10, -0.4), (1, 2, 0.5), (3, 1, 0.0)], 301),
    'mcts-ttt-midgame-solver': ([(2, 44, -0.06818181818181818), (1, 27, 0.2962962962962963), (7, 16, -0.375),
                                 (5, 5, 0.4)], 201),
    'mcts-ttt-midgame-plain': ([(6, 118, -0.0847457627118644), (3, 71, 0.4225352112676056),
                                (5, 34, -0.14705882352941177), (7, 13, 0.23076923076923078)], 281),
    'mcts-ttt-solver-proves': ([(8, 1, 0.0)], 5),
    'mcts-ttt-value-leaves': ([(0, 26, 0.08653846153846154), (1, 4, 0.25), (7, 1, 0.25)], 201),
    'mcts-ttt-rollout-cutoff-value': ([(4, 34, 0.27205882352941174), (5, 5, 0.0), (7, 1, 0.5)], 201),
    'mcts-ttt-rollout-cutoff-neutral': ([(4, 26, 0.15384615384615383), (3, 4, -0.16666666666666666), (6, 1, 0.0)],
                                        201),
    'mcts-ttt-model': ([(4, 34, 0.47058823529411764), (0, 5, -0.3), (6, 1, 0.0)], 201),
    'mcts-pig-chance': ([(0, 262, 0.42748091603053434), (4, 51, 0.0), (0, 37, 0.7297297297297297), (3, 9, 0.0)],
                        269),
    'mcts-connect-four-max-utility': ([(5, 46, -0.13043478260869565), (4, 13, 0.5384615384615384), (1, 4, 0.0),
                                       (2, 1, 1.0)], 201),
}


def _leduc_view():
    """A Leduc decision (round 2, player 0 to act) as the CWM agent sees it: the player's own events over the
    hand-written reference model, with its inference sampler."""
    wm = model.WorldModel(load_source((REFERENCE / "leduc_poker_model.py").read_text(), name="leduc_model"),
                          codec=model.ActionCodec.from_game(games.load_game("leduc_poker")), name="leduc_model")
    resample = load_source((REFERENCE / "leduc_poker_inference.py").read_text(), name="leduc_inference",
                           api=INFERENCE_API).resample_history
    real = _leduc("0 3 Raise Call 4")
    tracker = HistoryTracker(games.resolve("leduc_poker"), real.current_player())
    tracker.sync(real)
    legal = [real.action_to_string(real.current_player(), a) for a in real.legal_actions()]
    return inference_sampler(wm, resample), PlayerView(wm, tracker.events, real.current_player(), legal)


def _model_inference_case():
    sampler, view = _leduc_view()
    return ISMCTS(SearchConfig(num_simulations=200, rollouts=2), sampler=sampler, seed=6), view


ISMCTS_CASES = {
    "ismcts-leduc": lambda: (ISMCTS(SearchConfig(num_simulations=200, rollouts=2), seed=3), _leduc("0 3")),
    "ismcts-leduc-availability": lambda: (
        ISMCTS(SearchConfig(num_simulations=200, rollouts=2, availability_counts=True), seed=3),
        _leduc("0 3 Raise Call 4")),
    "ismcts-leduc-value-leaves": lambda: (ISMCTS(SearchConfig(num_simulations=150, rollouts=0), value_fn=value, seed=4),
                                          _leduc("0 3")),
    "ismcts-leduc-rollout-cutoff": lambda: (
        ISMCTS(SearchConfig(num_simulations=150, rollouts=2, max_rollout_steps=2, leaf="rollout"), value_fn=value,
               seed=5),
        _leduc("0 3 Raise Call 4")),
    "ismcts-leduc-model-inference": _model_inference_case,
}

ISMCTS_GOLDEN = {
    'ismcts-leduc': Golden(action=1, simulations=200, draws=200, rejected=0,
        visits={1: 150, 2: 49},
        values={1: -0.9666666666666667, 2: -1.5204081632653061}),
    'ismcts-leduc-availability': Golden(action=1, simulations=200, draws=200, rejected=0,
        visits={1: 198, 2: 1},
        values={1: -2.696969696969697, 2: -7.0}),
    'ismcts-leduc-value-leaves': Golden(action=1, simulations=150, draws=150, rejected=0,
        visits={1: 81, 2: 68},
        values={1: 0.13580246913580246, 2: -0.025735294117647058}),
    'ismcts-leduc-rollout-cutoff': Golden(action=1, simulations=150, draws=150, rejected=0,
        visits={1: 121, 2: 28},
        values={1: -2.5557851239669422, 2: -3.0892857142857144}),
    'ismcts-leduc-model-inference': Golden(action=1, simulations=200, draws=200, rejected=0,
        visits={1: 194, 2: 5},
        values={1: -2.231958762886598, 2: -4.7}),
}

# The ISMCTS cases' trees, recorded likewise: the information states reached and their visits summed.
ISMCTS_TREES = {
    'ismcts-leduc': (88, 630),
    'ismcts-leduc-availability': (11, 482),
    'ismcts-leduc-value-leaves': (111, 482),
    'ismcts-leduc-rollout-cutoff': (14, 371),
    'ismcts-leduc-model-inference': (14, 403),
}


def _assert_matches(result, golden: Golden) -> None:
    # items in order: the root's children in the order the search expanded them
    assert list(result.visits.items()) == list(golden.visits.items())
    assert list(result.values.items()) == list(golden.values.items())
    assert (result.action, result.simulations, result.fallback) == (golden.action, golden.simulations, False)


@pytest.mark.parametrize("name", MCTS_CASES)
def test_mcts_golden(name, ttt_model):
    search, state = MCTS_CASES[name](ttt_model)
    history = str(state)
    result = search.search(state, keep_tree=True)
    _assert_matches(result, MCTS_GOLDEN[name])
    assert str(state) == history  # the searched state is left as it was
    assert (search.searches, search.simulations) == (1, MCTS_GOLDEN[name].simulations)
    line, nodes = MCTS_TREES[name]
    assert [(n.action, n.visits, n.total / n.visits) for n in result.tree.principal_variation()[:4]] == line
    assert sum(1 for _ in result.tree.walk()) == nodes


@pytest.mark.parametrize("name", ISMCTS_CASES)
def test_ismcts_golden(name):
    search, state = ISMCTS_CASES[name]()
    golden = ISMCTS_GOLDEN[name]
    result = search.search(state, keep_tree=True)
    _assert_matches(result, golden)
    assert (search.draws, search.failed_draws, search.fallbacks) == (golden.draws, golden.rejected, 0)
    nodes = result.tree.nodes
    assert (len(nodes), sum(n.visits for n in nodes.values())) == ISMCTS_TREES[name]
    root = nodes[result.tree.root_key]
    assert {a: int(stat[0]) for a, stat in root.stats.items()} == golden.visits


def test_the_goldens_cover_what_they_claim():
    """The table must exercise what its names say: the solver stopping early, chance nodes, cut rollouts."""
    assert MCTS_GOLDEN["mcts-ttt-solver-proves"].simulations < 1000  # the solver proved the root
    assert MCTS_GOLDEN["mcts-ttt-midgame-solver"] != MCTS_GOLDEN["mcts-ttt-midgame-plain"]
    assert position("pig(winscore=10)").child(0).is_chance_node()  # rolling in pig is a chance event
    assert set(MCTS_CASES) == set(MCTS_GOLDEN) == set(MCTS_TREES)
    assert set(ISMCTS_CASES) == set(ISMCTS_GOLDEN) == set(ISMCTS_TREES)
