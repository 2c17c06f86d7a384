"""A user's own game for the tests of bringing a game to cwm from the command line alone: not registered in
cwm, hidden information, chance, and observations written as JSON text.

Two cards are dealt from four (1 to 4), one to each player, each seeing only its own. Player 0 then calls
"low" or "high", and player 1 after it. The higher card wins a stake of one chip plus one per "high" call.
Each player's observation is the JSON object ``{"my_card": C, "calls": [...]}`` (``C`` is null before the
deal). Registers itself with OpenSpiel as "pocket_duel"; cwm loads it as ``path/to/pocket_duel.py:pocket_duel``.
"""

import json

import numpy as np
import pyspiel

CARDS = 4
CALLS = ("low", "high")
_TYPE = pyspiel.GameType(
    short_name="pocket_duel",
    long_name="Pocket Duel",
    dynamics=pyspiel.GameType.Dynamics.SEQUENTIAL,
    chance_mode=pyspiel.GameType.ChanceMode.EXPLICIT_STOCHASTIC,
    information=pyspiel.GameType.Information.IMPERFECT_INFORMATION,
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
_INFO = pyspiel.GameInfo(num_distinct_actions=2, max_chance_outcomes=CARDS, num_players=2, min_utility=-3.0,
                         max_utility=3.0, utility_sum=0.0, max_game_length=4)


class PocketDuelGame(pyspiel.Game):
    def __init__(self, params=None):
        super().__init__(_TYPE, _INFO, params or {})

    def new_initial_state(self):
        return PocketDuelState(self)

    def make_py_observer(self, iig_obs_type=None, params=None):
        return _Observer()


class PocketDuelState(pyspiel.State):
    def __init__(self, game):
        super().__init__(game)
        self.cards = []
        self.calls = []

    def current_player(self):
        if len(self.cards) < 2:
            return pyspiel.PlayerId.CHANCE
        if len(self.calls) == 2:
            return pyspiel.PlayerId.TERMINAL
        return len(self.calls)

    def _legal_actions(self, player):
        return [0, 1]

    def chance_outcomes(self):
        left = [c for c in range(CARDS) if c not in self.cards]
        return [(c, 1.0 / len(left)) for c in left]

    def _apply_action(self, action):
        if len(self.cards) < 2:
            self.cards.append(action)
        else:
            self.calls.append(CALLS[action])

    def _action_to_string(self, player, action):
        return f"deal {action + 1}" if player == pyspiel.PlayerId.CHANCE else CALLS[action]

    def is_terminal(self):
        return len(self.calls) == 2

    def returns(self):
        if not self.is_terminal():
            return [0.0, 0.0]
        stake = 1.0 + self.calls.count("high")
        return [stake, -stake] if self.cards[0] > self.cards[1] else [-stake, stake]

    def rewards(self):
        return self.returns()

    def view(self, player):
        card = self.cards[player] + 1 if len(self.cards) > player else None
        return json.dumps({"my_card": card, "calls": list(self.calls)})

    def __str__(self):
        return f"cards {[c + 1 for c in self.cards]} calls {self.calls}"


class _Observer:
    def __init__(self):
        self.tensor = np.zeros(0, np.float32)
        self.dict = {}

    def set_from(self, state, player):
        pass

    def string_from(self, state, player):
        return state.view(player)


pyspiel.register_game(_TYPE, PocketDuelGame)
