"""Helpers shared by the generated-game tests: a family's game built from changed parameters under a fresh
name, a state reached by moves written as the rules write them, and the names of the legal moves."""

from __future__ import annotations

import dataclasses
import itertools
from types import ModuleType
from typing import Any

_names = itertools.count()


def build(family: ModuleType, base: Any, **changes: Any) -> Any:
    """A game of ``family`` with ``base``'s parameters and ``changes``, registered under a fresh test name."""
    short = family.__name__.rsplit(".", 1)[1]
    return family.build_game(f"test_{short}_{next(_names)}", dataclasses.replace(base, **changes))()


def play(g: Any, moves: str) -> Any:
    """The state after ``moves`` (comma-separated, as ``action_to_string`` writes them), each legal where it is
    played; a move after the game ended fails the test."""
    state = g.new_initial_state()
    for move in [m.strip() for m in moves.split(",") if m.strip()]:
        assert not state.is_terminal(), f"{move!r} after the game ended"
        player = state.current_player()
        actions = [a for a, _ in state.chance_outcomes()] if state.is_chance_node() else state.legal_actions()
        named = {state.action_to_string(player, a): a for a in actions}
        assert move in named, f"{move!r} is not legal after {state.history()}: {sorted(named)}"
        state.apply_action(named[move])
    return state


def legal_names(state: Any) -> set[str]:
    return {state.action_to_string(state.current_player(), a) for a in state.legal_actions()}
