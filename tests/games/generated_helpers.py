"""Helpers shared by the generated-game tests: a family's game built from changed parameters under a fresh
name, a state reached by moves written as the rules write them, the names of the legal moves, and the states
of uniformly random games."""

from __future__ import annotations

import dataclasses
import itertools
from types import ModuleType
from typing import Any

import numpy as np

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


def random_states(g: Any, n: int, seed: int) -> Any:
    """Yields every non-terminal state of ``n`` games of ``g``, each move and chance outcome drawn uniformly."""
    rng = np.random.default_rng(seed)
    for _ in range(n):
        state = g.new_initial_state()
        while not state.is_terminal():
            yield state
            outcomes = state.chance_outcomes() if state.is_chance_node() else [(a, 1) for a in state.legal_actions()]
            state = state.child(outcomes[rng.integers(len(outcomes))][0])
