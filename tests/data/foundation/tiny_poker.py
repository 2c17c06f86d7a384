"""A user's own hidden-information game, for bring-your-own-game tests: three-card poker with four bets.

Chance deals player 0, then player 1, one of the cards 0, 1, 2 (no card twice); each player sees only its
own card. Players then alternate "pass" or "bet" four times (player 0 first); each bet adds one chip to
the bettor's stake (one chip each to start); the higher card wins the loser's stake. The engine has no
``resample_from_infostate`` (as a user's game often has not). Registers itself with OpenSpiel as
"tiny_poker"; cwm loads it as ``path/to/tiny_poker.py:tiny_poker``.
"""

import numpy as np
import pyspiel

_TYPE = pyspiel.GameType(
    short_name="tiny_poker",
    long_name="Tiny Poker",
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
_INFO = pyspiel.GameInfo(num_distinct_actions=3, max_chance_outcomes=3, num_players=2, min_utility=-3.0,
                         max_utility=3.0, utility_sum=0.0, max_game_length=6)
BETS = 4


class TinyPokerGame(pyspiel.Game):
    def __init__(self, params=None):
        super().__init__(_TYPE, _INFO, params or {})

    def new_initial_state(self):
        return TinyPokerState(self)

    def make_py_observer(self, iig_obs_type=None, params=None):
        return _Observer(iig_obs_type is not None and iig_obs_type.perfect_recall)


class TinyPokerState(pyspiel.State):
    def __init__(self, game):
        super().__init__(game)
        self.cards = []
        self.bets = ""

    def current_player(self):
        if len(self.cards) < 2:
            return pyspiel.PlayerId.CHANCE
        if len(self.bets) == BETS:
            return pyspiel.PlayerId.TERMINAL
        return len(self.bets) % 2

    def _legal_actions(self, player):
        return [0, 1]

    def chance_outcomes(self):
        left = [c for c in range(3) if c not in self.cards]
        return [(c, 1.0 / len(left)) for c in left]

    def _apply_action(self, action):
        if len(self.cards) < 2:
            self.cards.append(action)
        else:
            self.bets += "pb"[action]

    def _action_to_string(self, player, action):
        return f"deal {action}" if player == pyspiel.PlayerId.CHANCE else ("pass", "bet")[action]

    def is_terminal(self):
        return len(self.bets) == BETS

    def returns(self):
        if not self.is_terminal():
            return [0.0, 0.0]
        stakes = [1 + self.bets[p::2].count("b") for p in (0, 1)]
        loser = 0 if self.cards[0] < self.cards[1] else 1
        out = [0.0, 0.0]
        out[loser], out[1 - loser] = -float(stakes[loser]), float(stakes[loser])
        return out

    def view(self, player):
        card = self.cards[player] if len(self.cards) > player else "?"
        return f"card {card} bets {self.bets}"

    def __str__(self):
        return f"cards {self.cards} bets {self.bets}"


class _Observer:
    def __init__(self, perfect_recall):
        self.perfect_recall = perfect_recall
        self.tensor = np.zeros(0, np.float32)
        self.dict = {}

    def set_from(self, state, player):
        pass

    def string_from(self, state, player):
        return f"player {player}: {state.view(player)}" if self.perfect_recall else state.view(player)


pyspiel.register_game(_TYPE, TinyPokerGame)
