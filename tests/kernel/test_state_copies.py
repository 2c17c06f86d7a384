"""What the copies around a model's states guarantee: ``thaw`` (a model's ``copy.deepcopy`` of a state) is a
plain, independent deep copy, and a model that keeps the states it returned, or the lists inside them, and
changes them later cannot change the states the planner's tree holds."""

from __future__ import annotations

import copy
import random
import types
from pathlib import Path
from typing import Any

import pytest

from cwm import games, value_rules
from cwm.model import ActionCodec, WorldModel
from cwm.sandbox import load_source
from planners.config import SearchConfig
from planners.mcts import MCTS

REFERENCE = Path(__file__).resolve().parents[1] / "data" / "reference" / "tic_tac_toe_model.py"


def _json(rng: random.Random, depth: int = 0) -> Any:
    """A random JSON value: atoms, lists and dicts (some of atoms only, some nested)."""
    kind = rng.random()
    if depth >= 4 or kind < 0.35:
        return rng.choice([0, 1, -7, 2.5, "x", "", True, False, None])
    if kind < 0.7:
        return [_json(rng, depth + 1) for _ in range(rng.randrange(0, 6))]
    return {f"k{i}": _json(rng, depth + 1) for i in range(rng.randrange(0, 6))}


def _containers(value: Any) -> list[Any]:
    found = []
    if type(value) in (dict, list, value_rules.ReadOnlyDict, value_rules.ReadOnlyList):
        found.append(value)
        for item in (value.values() if isinstance(value, dict) else value):
            found.extend(_containers(item))
    return found


@pytest.mark.parametrize("seed", range(40))
def test_thaw_is_a_plain_independent_deep_copy(seed: int) -> None:
    rng = random.Random(seed)
    original = {"a": _json(rng), "b": [_json(rng), _json(rng)], "c": [1, 2, 3]}
    frozen = value_rules.state(original)
    thawed = copy.deepcopy(frozen)  # what a model's copy.deepcopy(state) runs: ReadOnlyDict.__deepcopy__ = thaw
    assert thawed == original
    mine, theirs = _containers(thawed), _containers(frozen)
    assert all(type(c) in (dict, list) for c in mine)  # every container writable
    assert not {id(c) for c in mine} & {id(c) for c in theirs}  # none shared with the frozen state
    for c in mine:  # the model changes its copy everywhere: the frozen state does not move
        if type(c) is list:
            c.append("changed")
        else:
            c["changed"] = True
    assert frozen == value_rules.state(original) and frozen != thawed


class _Keeper:
    """The reference tic-tac-toe model, plus a hostile habit: every state it returns carries a list ``seen``
    (which its rules never read), and it keeps each state it returned and appends to their ``seen`` lists,
    and rewrites their ``note``, at every later call."""

    def __init__(self, deep_copies: bool):
        self.ref = load_source(REFERENCE.read_text(), name="ttt_keeper", gate=False)
        self.deep_copies = deep_copies
        self.kept: list[dict[str, Any]] = []

    def _scribble(self) -> None:
        for s in self.kept:
            s["seen"].append(len(self.kept))
            s["note"] = "changed"

    def get_initial_state(self) -> dict[str, Any]:
        return dict(self.ref.get_initial_state(), seen=[], note="")

    def apply_action(self, state: Any, action: str) -> dict[str, Any]:
        self._scribble()
        if self.deep_copies:  # the copy a model makes of the read-only state, changed and returned
            new = copy.deepcopy(state)
            row, col = int(action[2]), int(action[4])
            new["board"][3 * row + col] = "xo"[state["player"]]
            new["player"] = 1 - state["player"]
        else:
            new = dict(self.ref.apply_action(state, action), seen=list(state["seen"]), note=state["note"])
        self.kept.append(new)
        return new

    def __getattr__(self, name: str) -> Any:
        fn = getattr(self.ref, name)

        def call(*args: Any) -> Any:
            self._scribble()
            return fn(*args)

        return call


def _model(functions: Any) -> WorldModel:
    return WorldModel(functions, codec=ActionCodec.from_game(games.load_game("tic_tac_toe")), name="ttt")


@pytest.mark.parametrize("deep_copies", [False, True], ids=["returns-new", "deep-copies"])
def test_a_model_changing_states_it_returned_cannot_change_the_tree(deep_copies: bool) -> None:
    keeper = _Keeper(deep_copies)
    clean = _model(types.SimpleNamespace(**{n: getattr(keeper.ref, n) for n in dir(keeper.ref)
                                             if not n.startswith("__")}))
    config = SearchConfig(num_simulations=300, rollouts=1)
    want = MCTS(config, seed=3).search(clean.new_initial_state())
    root = _model(keeper).new_initial_state()
    got = MCTS(config, seed=3).search(root, keep_tree=True)
    assert len(keeper.kept) >= 300 and len(keeper.kept[0]["seen"]) >= 300  # it did scribble, over and over
    assert (got.action, got.visits, got.values) == (want.action, want.visits, want.values)
    # every state in the tree still reads as the game reached it: replaying its moves gives the same board
    assert got.tree is not None
    nodes = 0
    for _, node in got.tree.walk():
        board = ["."] * 9
        for i, move in enumerate(node.state.history_strings()):
            board[3 * int(move[2]) + int(move[4])] = "xo"[i % 2]
        raw = node.state.raw
        assert list(raw["board"]) == board and raw["player"] == (9 - board.count(".")) % 2
        assert (list(raw["seen"]), raw["note"]) == ([], "")  # nothing the model did later reached it
        nodes += 1
    assert nodes > 300
