"""MCTS and ISMCTS with more than two players: max^n finds the mover's best move on a three-player game,
the paranoid search differs where a coalition changes the best move and nowhere in a two-player zero-sum
game, and both searches beat random players on three-player games over seat rotations (a paired test, as
the arena makes)."""

from __future__ import annotations

import dataclasses

import numpy as np
import pyspiel
import pytest

from cwm.stats import paired
from cwm.types import TERMINAL, UsageError
from planners import ISMCTS, MCTS, ISMCTSSettings, MCTSSettings
from planners.search import paranoid

# A three-player game as data: each inner node names its player and its children by action; a leaf is the
# return vector. Player 0 picks "safe" (0.5 each to players 0 and 1) or "trust"; after "trust" player 1
# picks "share", good for player 0 and best for player 1, or "spite", worst for player 0 at a cost to
# player 1 (player 2 gains). Max^n: player 1 shares, so player 0 trusts (1.0 > 0.5). Paranoid: player 1 is
# taken to spite player 0, so player 0 plays safe (0.5 > 0.0).
COALITION = (0, {0: (0.5, 0.5, 0.0),  # safe
                 1: (1, {0: (1.0, 0.6, 0.0),  # share
                         1: (0.0, 0.4, 0.6)})})  # spite
SAFE, TRUST = 0, 1


@dataclasses.dataclass(frozen=True)
class TreeState:
    """A state of a game given as a tree (``COALITION``), shaped like ``pyspiel.State`` for the planners."""

    node: object
    path: tuple[int, ...] = ()

    def current_player(self) -> int:
        return self.node[0] if isinstance(self.node[1], dict) else TERMINAL  # type: ignore[index]

    def is_terminal(self) -> bool:
        return self.current_player() == TERMINAL

    def is_chance_node(self) -> bool:
        return False

    def num_players(self) -> int:
        return 3

    def legal_actions(self) -> list[int]:
        return [] if self.is_terminal() else sorted(self.node[1])  # type: ignore[index]

    def child(self, action: int) -> TreeState:
        return TreeState(self.node[1][action], self.path + (action,))  # type: ignore[index]

    def clone(self) -> TreeState:
        return self

    def returns(self) -> list[float]:
        return list(self.node) if self.is_terminal() else [0.0, 0.0, 0.0]  # type: ignore[arg-type]

    def information_state_string(self, player: int) -> str:
        return repr(self.path)  # perfect information


def _mcts(backup: str, seed: int = 0, **kw) -> MCTS:
    return MCTS(MCTSSettings(num_simulations=kw.pop("sims", 200), rollouts=kw.pop("rollouts", 1), backup=backup,
                             **kw), seed=seed)


def _ismcts(backup: str, seed: int = 0, **kw) -> ISMCTS:
    extra = kw.pop("extra", {})
    return ISMCTS(ISMCTSSettings(num_simulations=kw.pop("sims", 200), rollouts=kw.pop("rollouts", 1), backup=backup,
                                 **kw), seed=seed, **extra)


def _perfect_sampler(state, player, rng):
    return state.clone() if not isinstance(state, TreeState) else TreeState(state.node, state.path)


def test_the_paranoid_vector_is_the_root_players_return_for_it_and_its_negation_for_the_others():
    assert paranoid([1.0, 0.6, 0.0], 0) == [1.0, -1.0, -1.0]
    assert paranoid([0.0, 0.4, 0.6], 2) == [-0.6, -0.6, 0.6]


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_maxn_trusts_a_partner_whose_own_interest_helps_and_paranoid_does_not(seed):
    root = TreeState(COALITION)
    maxn = _mcts("maxn", seed, solve=False).search(root)
    assert maxn.action == TRUST
    assert maxn.values[TRUST] > maxn.values[SAFE]
    fearful = _mcts("paranoid", seed, solve=False).search(root)
    assert fearful.action == SAFE
    assert fearful.values[TRUST] < fearful.values[SAFE]


@pytest.mark.parametrize("seed", [0, 1])
def test_the_solver_proves_the_maxn_and_the_paranoid_value_of_the_root(seed):
    # the tree is small enough to prove: max^n's value is the shared outcome, paranoid's the safe one as the
    # root player sees it (the others' entries are its return negated)
    maxn = _mcts("maxn", seed, solve=True).search(TreeState(COALITION), keep_tree=True)
    assert maxn.action == TRUST and maxn.tree.root.outcome == [1.0, 0.6, 0.0]
    fearful = _mcts("paranoid", seed, solve=True).search(TreeState(COALITION), keep_tree=True)
    assert fearful.action == SAFE and fearful.tree.root.outcome == [0.5, -0.5, -0.5]
    assert maxn.simulations < 200 and fearful.simulations < 200  # stopped once the root was proven


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_ismcts_maxn_and_paranoid_differ_where_the_coalition_matters(seed):
    root = TreeState(COALITION)
    assert _ismcts("maxn", seed, extra={"sampler": _perfect_sampler}).search(root).action == TRUST
    assert _ismcts("paranoid", seed, extra={"sampler": _perfect_sampler}).search(root).action == SAFE


def _pig_turn(game: pyspiel.Game, mover: int, rolls: list[int]) -> pyspiel.State:
    """A Pig state where every player before ``mover`` stopped at once and ``mover`` rolled ``rolls``
    (chance outcome ``k`` is a die of ``k + 1``)."""
    state = game.new_initial_state()
    for _ in range(mover):
        state.apply_action(1)  # stop with nothing
    for k in rolls:
        state.apply_action(0)  # roll
        state.apply_action(k)
    assert state.current_player() == mover
    return state


@pytest.mark.parametrize("mover", [0, 1, 2])
@pytest.mark.parametrize("solve", [True, False])
def test_maxn_stops_when_stopping_wins_whichever_seat_moves(mover, solve):
    # Pig to 10 points, three players: the mover has rolled 6 + 5 this turn, so "stop" wins the game at
    # once, while "roll" loses the 11 points on a one (1 in 6) and wins no more than stopping does.
    game = pyspiel.load_game("pig(players=3,winscore=10)")
    state = _pig_turn(game, mover, [5, 4])
    for backup in ("maxn", "paranoid"):
        result = _mcts(backup, 7, solve=solve, sims=300).search(state)
        assert state.action_to_string(mover, result.action) == "stop", (backup, result)


@pytest.mark.parametrize("seed", [3, 4])
def test_paranoid_is_maxn_in_a_two_player_zero_sum_game(seed):
    # With two players the coalition is the opponent, whose return is the negation already: the same
    # search, move for move, visit for visit (the solver's shortcut aside, so it is off here).
    state = pyspiel.load_game("connect_four").new_initial_state()
    for a in (3, 3, 2):
        state.apply_action(a)
    a = _mcts("maxn", seed, solve=False, sims=300).search(state)
    b = _mcts("paranoid", seed, solve=False, sims=300).search(state)
    assert (a.action, a.visits, a.values) == (b.action, b.visits, b.values)
    kuhn = pyspiel.load_game("kuhn_poker").new_initial_state()
    for a_ in (0, 2):
        kuhn.apply_action(a_)
    c, d = _ismcts("maxn", seed).search(kuhn), _ismcts("paranoid", seed).search(kuhn)
    assert (c.action, c.visits, c.values) == (d.action, d.visits, d.values)


# -- strength against random players over seat rotations --------------------------------------------


def _play(game: pyspiel.Game, searchers: list[object], deal: int) -> list[float]:
    """One game, seat ``i`` played by ``searchers[i]`` (``None``: uniformly random); chance from ``deal``."""
    rng = np.random.default_rng(deal)
    state = game.new_initial_state()
    while not state.is_terminal():
        p = state.current_player()
        if state.is_chance_node():
            outcomes = state.chance_outcomes()
            action = outcomes[rng.choice(len(outcomes), p=[q for _, q in outcomes])][0]
        elif searchers[p] is None:
            legal = state.legal_actions()
            action = legal[rng.integers(len(legal))]
        else:
            action = searchers[p].step(state)  # type: ignore[attr-defined]
        state.apply_action(action)
    return state.returns()


def _edges(game: pyspiel.Game, make, deals: int) -> list[float]:
    """Per deal, the searcher's pairwise edge over the two random players, averaged over the three cyclic
    seat rotations played on that deal: each (searcher, random player) pair of a game scores 1 for the
    higher return, 1/2 for a tie, and the edge is that score minus 1/2 (the arena's pairwise decomposition)."""
    values = []
    for deal in range(deals):
        scores = []
        for seat in range(3):
            searchers: list[object] = [None, None, None]
            searchers[seat] = make(1000 * deal + seat)
            returns = _play(game, searchers, deal)
            for other in (s for s in range(3) if s != seat):
                scores.append(1.0 if returns[seat] > returns[other] else 0.5 if returns[seat] == returns[other] else 0.0)
        values.append(sum(scores) / len(scores) - 0.5)
    return values


def test_maxn_mcts_beats_random_players_at_three_player_pig():
    game = pyspiel.load_game("pig(players=3,winscore=12)")
    values = _edges(game, lambda seed: _mcts("maxn", seed, sims=60, rollouts=1), deals=16)
    result = paired(values, bound=0.5)
    assert result.lo > 0, result  # ahead of random at 95%, over 16 deals of three seatings each


class _RandomPlayer:
    """A uniformly random player with its own stream (seeded like a searcher), in the searcher's seat."""

    def __init__(self, seed: int):
        self.rng = np.random.default_rng(seed)

    def step(self, state: pyspiel.State) -> int:
        legal = state.legal_actions()
        return legal[self.rng.integers(len(legal))]


def test_a_random_player_in_the_searchers_seat_is_not_found_ahead():
    # the negative control of the two tests above: the same rotations and test with no search at all
    game = pyspiel.load_game("pig(players=3,winscore=12)")
    values = _edges(game, _RandomPlayer, deals=16)
    result = paired(values, bound=0.5)
    assert len(set(values)) > 1 and result.lo < 0 < result.hi, result


def test_maxn_ismcts_beats_random_players_at_three_player_leduc_poker():
    # hidden cards, three players: a smaller edge than Pig's (random players fold and call at random), so
    # more deals; 400 deals of three seatings measured about 0.08 [0.03, 0.13] of score
    game = pyspiel.load_game("leduc_poker(players=3)")
    values = _edges(game, lambda seed: _ismcts("maxn", seed, sims=100, rollouts=1), deals=400)
    result = paired(values, bound=0.5)
    assert result.lo > 0, result


@pytest.mark.parametrize("settings", [MCTSSettings, ISMCTSSettings])
def test_an_unknown_backup_is_refused_in_one_line_naming_it(settings):
    with pytest.raises(UsageError, match=r"the backup must be one of \['maxn', 'paranoid'\] \(got 'minimax'\)"):
        settings(backup="minimax").check("search")


def test_a_prior_value_function_must_give_one_value_per_player_beyond_two_players():
    import random

    from planners import PriorValueEvaluator

    state = pyspiel.load_game("pig(players=3,winscore=12)").new_initial_state()
    one = PriorValueEvaluator(lambda s: ({0: 0.5, 1: 0.5}, 0.2))
    with pytest.raises(ValueError, match="one number in a 3-player game"):
        one.evaluate(state, random.Random(0))
    each = PriorValueEvaluator(lambda s: ({0: 0.5, 1: 0.5}, [0.2, -0.1, -0.1]))
    assert each.evaluate(state, random.Random(0)) == ([0.2, -0.1, -0.1], {0: 0.5, 1: 0.5})


def test_ppos_games_rotate_the_learners_seat_over_three_players():
    from planners.env import VectorEnv

    game = pyspiel.load_game("kuhn_poker(players=3)")
    env = VectorEnv(game.new_initial_state, lambda s, p: s.observation_tensor(p), lambda obs, p: list(obs),
                    num_actions=game.num_distinct_actions(), num_envs=6, seed=0)
    step = env.reset()
    assert list(step.seat) == [0, 1, 2, 0, 1, 2]
    rng = np.random.default_rng(1)
    seats_seen: dict[int, set[int]] = {i: {int(step.seat[i])} for i in range(6)}
    for _ in range(40):
        before = step.seat.copy()
        step = env.step([int(rng.choice(np.flatnonzero(m))) for m in step.mask])
        for i in range(6):
            if step.done[i]:  # a finished game pays the learner's return and the next game seats it next
                assert step.seat[i] == (before[i] + 1) % 3
                assert -2.0 <= step.reward[i] <= 4.0
            seats_seen[i].add(int(step.seat[i]))
    assert all(seen == {0, 1, 2} for seen in seats_seen.values())
