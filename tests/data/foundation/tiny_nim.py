"""A user's own game, for bring-your-own-game tests: Nim with one pile of 7, take 1 or 2, last take wins.

It registers itself with OpenSpiel as "tiny_nim"; cwm loads it as ``path/to/tiny_nim.py:tiny_nim``.
"""

import numpy as np
import pyspiel

_TYPE = pyspiel.GameType(
    short_name="tiny_nim",
    long_name="Tiny Nim",
    dynamics=pyspiel.GameType.Dynamics.SEQUENTIAL,
    chance_mode=pyspiel.GameType.ChanceMode.DETERMINISTIC,
    information=pyspiel.GameType.Information.PERFECT_INFORMATION,
    utility=pyspiel.GameType.Utility.ZERO_SUM,
    reward_model=pyspiel.GameType.RewardModel.TERMINAL,
    max_num_players=2,
    min_num_players=2,
    provides_information_state_string=True,
    provides_information_state_tensor=False,
    provides_observation_string=True,
    provides_observation_tensor=False,
    parameter_specification={},
)
_INFO = pyspiel.GameInfo(num_distinct_actions=2, max_chance_outcomes=0, num_players=2, min_utility=-1.0,
                         max_utility=1.0, utility_sum=0.0, max_game_length=7)


class TinyNimGame(pyspiel.Game):
    def __init__(self, params=None):
        super().__init__(_TYPE, _INFO, params or {})

    def new_initial_state(self):
        return TinyNimState(self)

    def make_py_observer(self, iig_obs_type=None, params=None):
        return _Observer()


class TinyNimState(pyspiel.State):
    def __init__(self, game):
        super().__init__(game)
        self.pile = 7
        self.player = 0
        self.winner = None

    def current_player(self):
        return pyspiel.PlayerId.TERMINAL if self.winner is not None else self.player

    def _legal_actions(self, player):
        return [a for a in (0, 1) if a + 1 <= self.pile]

    def _apply_action(self, action):
        self.pile -= action + 1
        if self.pile == 0:
            self.winner = self.player
        self.player = 1 - self.player

    def _action_to_string(self, player, action):
        return f"take {action + 1}"

    def is_terminal(self):
        return self.winner is not None

    def returns(self):
        if self.winner is None:
            return [0.0, 0.0]
        return [1.0, -1.0] if self.winner == 0 else [-1.0, 1.0]

    def __str__(self):
        return f"pile {self.pile}"


class _Observer:
    def __init__(self):
        self.tensor = np.zeros(0, np.float32)
        self.dict = {}

    def set_from(self, state, player):
        pass

    def string_from(self, state, player):
        return f"pile {state.pile}, player {state.player} to move"


pyspiel.register_game(_TYPE, TinyNimGame)
