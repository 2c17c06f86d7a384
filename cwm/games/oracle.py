"""The oracle model: the CWM contract implemented by replaying the ground truth. It proves the checks right.

Its state is ``{"history": [action ids]}``; every function replays that history in OpenSpiel (with a
small cache), and observations use the same views as the recorded trajectories. A correct checker must
pass it on every game.
"""

from __future__ import annotations

import functools
from typing import Any

import pyspiel

from cwm.games import registry as games
from cwm.model import ActionCodec, WorldModel
from cwm.types import CHANCE, JSON, TERMINAL


class OracleFunctions:
    """The contract functions backed by a ground-truth OpenSpiel game."""

    def __init__(self, game: str | games.GameSpec):
        self.spec = games.resolve(game)
        self.game = games.load_game(self.spec)
        self._replay = functools.lru_cache(maxsize=4096)(self._replay_uncached)

    def _replay_uncached(self, history: tuple[int, ...]) -> pyspiel.State:
        if not history:
            return self.game.new_initial_state()
        state = self._replay(history[:-1]).clone()
        state.apply_action(history[-1])
        return state

    def _state(self, state: JSON) -> pyspiel.State:
        return self._replay(tuple(state["history"]))

    def _id(self, st: pyspiel.State, action: str) -> int:
        player = st.current_player()
        actions = [a for a, _ in st.chance_outcomes()] if player == CHANCE else st.legal_actions()
        for a in actions:
            if st.action_to_string(player, a) == action:
                return int(a)
        raise ValueError(f"{action!r} is not a legal action")

    def get_initial_state(self) -> JSON:
        return {"history": []}

    def get_current_player(self, state: JSON) -> int:
        st = self._state(state)
        return TERMINAL if st.is_terminal() else int(st.current_player())

    def get_legal_actions(self, state: JSON) -> list[str]:
        st = self._state(state)
        if st.is_terminal():
            return []
        player = st.current_player()
        actions = [a for a, _ in st.chance_outcomes()] if player == CHANCE else st.legal_actions()
        return [st.action_to_string(player, a) for a in actions]

    def get_chance_outcomes(self, state: JSON) -> list[tuple[str, float]]:
        st = self._state(state)
        if not st.is_chance_node():
            return []
        return [(st.action_to_string(CHANCE, a), float(p)) for a, p in st.chance_outcomes()]

    def apply_action(self, state: JSON, action: str) -> JSON:
        st = self._state(state)
        return {"history": list(state["history"]) + [self._id(st, action)]}

    def get_observations(self, state: JSON) -> list[JSON]:
        st = self._state(state)
        return [games.observe(self.spec, st, p) for p in range(self.game.num_players())]

    def get_rewards(self, state: JSON) -> list[float]:
        history = tuple(state["history"])
        before = self._replay(history[:-1]).returns() if history else [0.0] * self.game.num_players()
        return list(games.step_rewards(self.spec, self._state(state), before))


def oracle_model(game: str | games.GameSpec, **kwargs: Any) -> WorldModel:
    """A ``WorldModel`` whose functions replay the ground truth of ``game``."""
    functions = OracleFunctions(game)
    return WorldModel(functions, codec=ActionCodec.from_game(functions.game), name=f"oracle[{functions.spec.name}]",
                      **kwargs)
