"""The search tree's cheaper paths: a new leaf asks for its legal actions only when a simulation goes through
it (the same seeded search as asking at once, and a hostile legal list there is still refused), a move's
rewards that are the very objects of the last checked answer are not checked again (a wrong value slipped in
is still refused), and UCT's per-visit-count tables hold exactly the floats the formulas give."""

from __future__ import annotations

import math
import random
from pathlib import Path

import pyspiel
import pytest

from cwm import games, model
from cwm.sandbox import load_source
from cwm.types import ModelContractError
from planners import search
from planners.mcts import MCTS
from planners.settings import MCTSSettings
from planners.tree import Node

REFERENCE = Path(__file__).resolve().parents[1] / "data" / "reference" / "tic_tac_toe_model.py"


def _model(extra: str = "", name: str = "ttt") -> model.WorldModel:
    """The reference tic-tac-toe model, with ``extra`` appended (which may rebind its functions)."""
    source = REFERENCE.read_text() + "\n\n" + extra
    return model.WorldModel(load_source(source), codec=model.ActionCodec.from_game(games.load_game("tic_tac_toe")),
                            name=name)


def _value(state, player: int) -> float:
    """A made-up leaf value (quarters, exact): no rollout asks any state for its legal actions."""
    history = state.history()
    return ((sum(history) + 3 * player + len(history)) % 7 - 3) / 4.0


def _search(sims: int, seed: int, *, solve: bool = True) -> MCTS:
    return MCTS(MCTSSettings(num_simulations=sims, rollouts=0, solve=solve), value_fn=_value, seed=seed)


COUNTED = ("ASKED = []\n_legal = get_legal_actions\n\n\n"
           "def get_legal_actions(state):\n"
           "    ASKED.append(''.join(state['board']))\n"
           "    return _legal(state)\n")


def test_a_new_leaf_asks_for_its_legal_actions_only_when_a_simulation_goes_through_it():
    counted = _model(COUNTED)
    result = _search(300, seed=3, solve=False).search(counted.new_initial_state(), keep_tree=True)
    nodes = [node for _, node in result.tree.walk() if node.player >= 0]
    asked = [node for node in nodes if node.untried is not None]
    assert len(counted.functions.ASKED) == len(asked)  # once per node gone through, never again
    assert len(set(counted.functions.ASKED)) == len(asked)
    # every node with children was gone through; the leaves a simulation valued once were never asked
    assert all(node.untried is not None for node in nodes if node.kids)
    assert len(asked) < len(nodes) / 2
    # asked for when needed, a leaf's legal actions are those the state gives
    leaf = next(node for node in nodes if node.untried is None)
    assert leaf.fetch_legal() == leaf.state.legal_actions() and leaf.untried is not None


@pytest.mark.parametrize("solve, seed", [(False, 0), (True, 1), (True, 7)])
def test_asking_later_gives_the_same_seeded_search_as_asking_at_once(monkeypatch, solve, seed):
    ttt = _model()
    lazy = _search(400, seed, solve=solve).search(ttt.new_initial_state(), keep_tree=True)
    monkeypatch.setattr(Node, "leaf", classmethod(lambda cls, state, mover, action: cls(state, mover, action)))
    eager = _search(400, seed, solve=solve).search(ttt.new_initial_state(), keep_tree=True)
    assert lazy == eager  # the move, the root's visits and values, the simulations run
    lazy_nodes, eager_nodes = ([(path, n.visits, n.total, n.outcome, len(n.kids)) for path, n in r.tree.walk()]
                               for r in (lazy, eager))
    assert lazy_nodes == eager_nodes  # every node, in the same order, with the same statistics


@pytest.mark.parametrize("bad, named", [
    ("legal + legal[:1]", "duplicate"), ("legal + [3]", "list of str"), ("[]", "no legal actions"),
    ("tuple(legal)", "list of str")])
def test_a_hostile_legal_list_at_a_leaf_is_refused_when_a_simulation_goes_through_it(bad, named):
    # sound at the first two moves, wrong from the third on: those nodes are leaves first, gone through later
    hostile = _model("_legal = get_legal_actions\n\n\n"
                     "def get_legal_actions(state):\n"
                     "    legal = _legal(state)\n"
                     f"    return legal if state['board'].count('.') > 7 else {bad}\n", name="hostile")
    with pytest.raises(ModelContractError, match=named) as caught:
        _search(300, seed=0).search(hostile.new_initial_state())
    assert "hostile: step 2" in str(caught.value)


FRESH = ("_rewards = get_rewards\n\n\n"
         "def get_rewards(state):\n"  # new float objects at every call: nothing is remembered
         "    return [float(str(r)) for r in _rewards(state)]\n")
CONSTANT = ("_rewards = get_rewards\n"
            "_ROWS = {(0.0, 0.0): [0.0, 0.0], (1.0, -1.0): [1.0, -1.0], (-1.0, 1.0): [-1.0, 1.0]}\n\n\n"
            "def get_rewards(state):\n"  # the same float objects at every call
            "    return list(_ROWS[tuple(_rewards(state))])\n")


def _random_game(m: model.WorldModel, rng: random.Random) -> list:
    state, states = m.new_initial_state(), []
    while not state.is_terminal():
        state = state.child_from_string(rng.choice(state.legal_action_strings()))
        states.append(state)
    return states


def test_remembered_rewards_give_the_moves_exactly_the_checked_rewards():
    fresh, constant = _model(FRESH), _model(CONSTANT)
    paid = 0
    for seed in range(20):
        a, b = _random_game(fresh, random.Random(seed)), _random_game(constant, random.Random(seed))
        assert [(s.rewards(), s.returns()) for s in a] == [(s.rewards(), s.returns()) for s in b]
        assert all(type(r) is float for s in b for r in s.rewards())
        paid += any(s.returns() != [0.0, 0.0] for s in b)
    assert paid > 5  # the remembered answers include paying rows


@pytest.mark.parametrize("index", [0, 1])
@pytest.mark.parametrize("wrong, named", [
    ("float('nan')", "nan"), ("float('inf')", "inf"), ("True", "True"), ("'1'", "'1'"), ("None", "None")])
def test_a_wrong_reward_slipped_into_a_remembered_list_is_refused_in_the_tree(index, wrong, named):
    # sound constants for the first moves, then a wrong item in the same list object (changed in place)
    slips = _model("_SAME = [0.0, 0.0]\n\n\n"
                   "def get_rewards(state):\n"
                   "    if state['board'].count('.') <= 6:\n"
                   f"        _SAME[{index}] = {wrong}\n"
                   "    return _SAME\n", name="slips")
    state = slips.new_initial_state()
    for move in ("x(0,0)", "o(1,1)"):
        state = state.child_from_string(move)
    with pytest.raises(ModelContractError, match="get_rewards") as caught:
        state.child_from_string("x(2,2)")
    assert "slips: step 2" in str(caught.value) and named in str(caught.value)


def test_a_rewards_list_subclass_or_another_length_is_checked_in_full():
    odd = _model("class Sly(list):\n    pass\n\n\n_ZERO = 0.0\n\n\n"
                 "def get_rewards(state):\n"
                 "    n = state['board'].count('.')\n"
                 "    return [_ZERO, _ZERO] if n > 7 else Sly([_ZERO, _ZERO]) if n == 7 else [_ZERO, _ZERO, _ZERO]\n",
                 name="odd")
    state = odd.new_initial_state().child_from_string("x(0,0)")
    state = state.child_from_string("o(1,1)")  # a list subclass of the same items: the full rule takes it
    assert state.rewards() == [0.0, 0.0]
    with pytest.raises(ModelContractError, match="a list of 2 numbers, got 3"):
        state.child_from_string("x(2,2)")


def test_the_uct_tables_hold_the_floats_of_the_formulas(monkeypatch):
    for limit, size in ((search._TABLE_LIMIT, 5001), (5, 5)):  # past the limit each value is computed
        monkeypatch.setattr(search, "_TABLE_LIMIT", limit)
        monkeypatch.setattr(search, "_INV_SQRT", [math.inf])
        table = [math.nan]
        for n in (1, 2, 3, 9, 4, 700, 1, 5000, 2):  # as the search reads them: the table, grown where short
            old = search._INV_SQRT
            inv = old[n] if n < len(old) else search._grow_inv_sqrt(n)
            assert inv == 1.0 / math.sqrt(n)
            assert old[1:] == search._INV_SQRT[1:len(old)]  # a longer copy: the old table is as it was
            if len(table) <= n < limit:
                table = search._grown(table, n, lambda m: 1.4 * math.sqrt(math.log(m)))
        assert len(search._INV_SQRT) == size and len(table) == size
        assert all(v == 1.0 / math.sqrt(m) for m, v in enumerate(search._INV_SQRT) if m)
        assert all(v == 1.4 * math.sqrt(math.log(m)) for m, v in enumerate(table) if m)


def test_uct_selects_by_the_formula_past_its_tables_first_size():
    # a root visited far more often than the tables first hold: the child the formula picks, ties to the first
    root = Node(_model().new_initial_state(), -1, -1)
    root.untried = []
    kids = [Node(root.state.child(a), 0, a) for a in root.state.legal_actions()[:3]]
    for kid, (visits, total) in zip(kids, ((900, 500.0), (40, 20.0), (60, 31.0))):
        kid.visits, kid.total, kid.mean, kid.inv_sqrt_n = visits, total, total / visits, 1 / math.sqrt(visits)
    root.kids, root.visits = kids, 1000
    for c in (0.0, 0.5, 2.0, 9.0):
        want = max(kids, key=lambda k: k.mean + c * math.sqrt(math.log(root.visits) / k.visits))
        assert search.select_uct(c)(root, random.Random(0)) is want
        assert search.select_uct(c, solver=True)(root, random.Random(0)) is want
    assert {search.select_uct(c)(root, random.Random(0)).action for c in (0.0, 9.0)} == {kids[0].action, kids[1].action}


@pytest.mark.parametrize("first", ["[]", "[0.0]"])
def test_a_short_rewards_list_at_the_first_move_is_refused(first):
    """Nothing has passed yet, so nothing is remembered: a first answer shorter than the players is checked
    in full (an empty list must not pass as the empty 'last answer' the model starts with)."""
    short = _model(f"def get_rewards(state):\n    return {first}\n", name="short")
    with pytest.raises(ModelContractError, match="get_rewards"):
        short.new_initial_state().child_from_string("x(0,0)")


def test_leaves_share_one_empty_child_list_until_their_first_child():
    """A leaf holds the one shared empty tuple and read-only mapping (most leaves never get a child); a node's
    first child gives it its own list and dict, so no search fills the shared ones."""
    from planners import tree

    r = _search(300, seed=1).search(_model().new_initial_state(), keep_tree=True)
    nodes = [n for _, n in r.tree.walk()]
    parents = [n for n in nodes if n.kids]
    leaves = [n for n in nodes if not n.kids]
    assert parents and leaves and tree._NO_KIDS == () and len(tree._NO_ACTIONS) == 0
    assert all(type(n.kids) is list and type(n.by_action) is dict for n in parents)
    assert len({id(n.kids) for n in parents}) == len({id(n.by_action) for n in parents}) == len(parents)
    assert all(n.by_action == {k.action: k for k in n.kids} for n in nodes)
    assert all(n.kids is tree._NO_KIDS and n.by_action is tree._NO_ACTIONS for n in leaves)
    with pytest.raises(TypeError):
        tree._NO_ACTIONS[0] = leaves[0]  # type: ignore[index]


FIELDS = ("state", "player", "mover", "action", "visits", "total", "mean", "inv_sqrt_n", "kids", "by_action",
          "untried", "chance", "outcome", "prior")


def test_a_leaf_made_without_the_class_call_is_the_node_init_makes():
    # Node.leaf (the search's new leaf) must hold exactly what Node(..., legal=False) holds: decision, chance
    # and terminal states alike
    backgammon = pyspiel.load_game("backgammon").new_initial_state()  # a chance node
    ended = pyspiel.load_game("tic_tac_toe").new_initial_state()
    for a in (4, 0, 1, 3, 2, 6):  # x(1,1) o(0,0) x(0,1) o(1,0) x(0,2) o(2,0): o's column, the game is over
        ended.apply_action(a)
    assert ended.is_terminal()
    ttt = _model().new_initial_state()
    for state in (ttt, ttt.child(4), backgammon, ended):
        made, init = Node.leaf(state, 0, 7), Node(state, 0, 7, legal=False)
        assert type(made) is Node and [getattr(made, f) for f in FIELDS] == [getattr(init, f) for f in FIELDS]
    assert Node.leaf(ended, 0, 7).outcome == [-1.0, 1.0] and Node.leaf(backgammon, 0, 7).chance
