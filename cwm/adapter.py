"""Expose a world model as a registered OpenSpiel Python game, so OpenSpiel's own algorithms run on it.

``as_openspiel_game(model, reference=gt_game)`` registers a game type under a unique short name and
returns the loaded ``pyspiel.Game``. Its states wrap ``cwm.model.ModelState``: every invariant the
wrapper enforces (legal actions, terminal states don't move, chance sums to 1) holds here too.
"""

from __future__ import annotations

import itertools
import json
from typing import Any

import numpy as np
import pyspiel

from cwm.model import ModelState, WorldModel
from cwm.types import CHANCE, TERMINAL

_counter = itertools.count()


class _Observer:
    """Observation strings (JSON of the model's observation); no tensor, since models speak JSON."""

    def __init__(self, information_state: bool):
        self.tensor = np.zeros(0, np.float32)
        self.dict: dict[str, np.ndarray] = {}
        self._information_state = information_state

    def set_from(self, state: ModelSpielState, player: int) -> None:
        del state, player  # no tensor to fill

    def string_from(self, state: ModelSpielState, player: int) -> str:
        if self._information_state:
            return state.model_state.information_state_string(player)
        return state.model_state.observation_string(player)


class ModelSpielState(pyspiel.State):
    """A ``pyspiel.State`` backed by a ``ModelState`` (shared, never deep-copied)."""

    def __init__(self, game: pyspiel.Game, model_state: ModelState):
        super().__init__(game)
        self.model_state = model_state

    def current_player(self) -> int:
        p = self.model_state.current_player()
        if p == TERMINAL:
            return int(pyspiel.PlayerId.TERMINAL)
        if p == CHANCE:
            return int(pyspiel.PlayerId.CHANCE)
        return p

    def _legal_actions(self, player: int) -> list[int]:
        return sorted(self.model_state.legal_actions(player))

    def chance_outcomes(self) -> list[tuple[int, float]]:
        return sorted(self.model_state.chance_outcomes())

    def _apply_action(self, action: int) -> None:
        self.model_state = self.model_state.child(action)

    def _action_to_string(self, player: int, action: int) -> str:
        return self.model_state.action_to_string(player, action)

    def is_terminal(self) -> bool:
        return self.model_state.is_terminal()

    def returns(self) -> list[float]:
        return self.model_state.returns()

    def rewards(self) -> list[float]:
        return self.model_state.rewards()

    def __str__(self) -> str:
        return json.dumps(self.model_state.raw, sort_keys=True)


def as_openspiel_game(
    model: WorldModel,
    *,
    reference: pyspiel.Game | None = None,
    short_name: str | None = None,
    max_game_length: int = 1000,
    min_utility: float = -1.0,
    max_utility: float = 1.0,
) -> pyspiel.Game:
    """Registers ``model`` as an OpenSpiel Python game and returns it loaded.

    Args:
      model: the world model (its codec decides the action ids).
      reference: the ground-truth game, whose type and bounds (actions, utilities, length) are copied.
      short_name: the registered name; a unique ``cwm_model_<n>`` by default.
      max_game_length, min_utility, max_utility: bounds used when there is no reference game.
    """
    name = short_name or f"cwm_model_{next(_counter)}"
    game_type, info = _type_and_info(model, reference, name, max_game_length, min_utility, max_utility)

    class _Game(pyspiel.Game):
        def __init__(self, params: dict[str, Any] | None = None):
            super().__init__(game_type, info, params or {})

        def new_initial_state(self) -> ModelSpielState:
            return ModelSpielState(self, model.new_initial_state())

        def make_py_observer(self, iig_obs_type: Any = None, params: Any = None) -> _Observer:
            perfect_recall = bool(iig_obs_type and iig_obs_type.perfect_recall)
            return _Observer(information_state=perfect_recall)

    _Game.__name__ = f"ModelGame_{name}"
    pyspiel.register_game(game_type, _Game)
    return pyspiel.load_game(name)


def _type_and_info(model: WorldModel, reference: pyspiel.Game | None, name: str, max_len: int,
                   min_u: float, max_u: float) -> tuple[pyspiel.GameType, pyspiel.GameInfo]:
    ref_type = reference.get_type() if reference is not None else None
    game_type = pyspiel.GameType(
        short_name=name,
        long_name=f"cwm world model {model.name}",
        dynamics=pyspiel.GameType.Dynamics.SEQUENTIAL,
        chance_mode=ref_type.chance_mode if ref_type else pyspiel.GameType.ChanceMode.EXPLICIT_STOCHASTIC,
        information=ref_type.information if ref_type else pyspiel.GameType.Information.IMPERFECT_INFORMATION,
        utility=ref_type.utility if ref_type else pyspiel.GameType.Utility.GENERAL_SUM,
        reward_model=ref_type.reward_model if ref_type else pyspiel.GameType.RewardModel.TERMINAL,
        max_num_players=model.num_players,
        min_num_players=model.num_players,
        provides_information_state_string=True,
        provides_information_state_tensor=False,
        provides_observation_string=True,
        provides_observation_tensor=False,
        parameter_specification={},
    )
    if reference is not None and ref_type is not None:
        info = pyspiel.GameInfo(
            num_distinct_actions=reference.num_distinct_actions(),
            max_chance_outcomes=reference.max_chance_outcomes(),
            num_players=model.num_players,
            min_utility=reference.min_utility(),
            max_utility=reference.max_utility(),
            utility_sum=reference.utility_sum() if ref_type.utility == pyspiel.GameType.Utility.ZERO_SUM else None,
            max_game_length=reference.max_game_length(),
        )
    else:
        info = pyspiel.GameInfo(
            num_distinct_actions=max(1, model.codec.num_distinct_actions),
            max_chance_outcomes=model.codec.max_chance_outcomes,
            num_players=model.num_players,
            min_utility=min_u,
            max_utility=max_u,
            utility_sum=None,
            max_game_length=max_len,
        )
    return game_type, info
