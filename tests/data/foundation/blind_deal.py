"""A user's hidden-information game whose deal is too large for the generic resampler: sixteen cards dealt one
at a time, alternately, eight to each player; each player sees only its own cards. Then each player says
"low" or "high" once (player 0 first), and the player with the higher total of its cards wins one chip,
doubled if it said "high" (a draw pays nothing).

Player 1's cards may have come in any of 8! = 40,320 orders, more than the generic resampler enumerates,
and a random deal matches player 0's eight cards in order with odds far below what rejection sampling
tries: every draw fails, as on a user's 21-card rummy game. The engine has no ``resample_from_infostate``.
Registers itself with OpenSpiel as "blind_deal"; cwm loads it as ``path/to/blind_deal.py:blind_deal``.
"""

import numpy as np
import pyspiel

CARDS = 16
_TYPE = pyspiel.GameType(
    short_name="blind_deal",
    long_name="Blind Deal",
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
_INFO = pyspiel.GameInfo(num_distinct_actions=2, max_chance_outcomes=CARDS, num_players=2, min_utility=-2.0,
                         max_utility=2.0, utility_sum=0.0, max_game_length=CARDS + 2)


class BlindDealGame(pyspiel.Game):
    def __init__(self, params=None):
        super().__init__(_TYPE, _INFO, params or {})

    def new_initial_state(self):
        return BlindDealState(self)

    def make_py_observer(self, iig_obs_type=None, params=None):
        return _Observer(iig_obs_type is not None and iig_obs_type.perfect_recall)


class BlindDealState(pyspiel.State):
    def __init__(self, game):
        super().__init__(game)
        self.dealt = []
        self.calls = ""

    def current_player(self):
        if len(self.dealt) < CARDS:
            return pyspiel.PlayerId.CHANCE
        if len(self.calls) == 2:
            return pyspiel.PlayerId.TERMINAL
        return len(self.calls)

    def _legal_actions(self, player):
        return [0, 1]

    def chance_outcomes(self):
        left = [c for c in range(CARDS) if c not in self.dealt]
        return [(c, 1.0 / len(left)) for c in left]

    def _apply_action(self, action):
        if len(self.dealt) < CARDS:
            self.dealt.append(action)
        else:
            self.calls += "lh"[action]

    def _action_to_string(self, player, action):
        return f"deal {action}" if player == pyspiel.PlayerId.CHANCE else ("low", "high")[action]

    def is_terminal(self):
        return len(self.calls) == 2

    def returns(self):
        if not self.is_terminal():
            return [0.0, 0.0]
        totals = [sum(self.dealt[p::2]) for p in (0, 1)]
        if totals[0] == totals[1]:
            return [0.0, 0.0]
        winner = 0 if totals[0] > totals[1] else 1
        stake = 2.0 if self.calls[winner] == "h" else 1.0
        out = [-stake, -stake]
        out[winner] = stake
        return out

    def view(self, player):
        return f"cards {self.dealt[player::2]} calls {self.calls}"

    def __str__(self):
        return f"dealt {self.dealt} calls {self.calls}"


class _Observer:
    def __init__(self, perfect_recall):
        self.perfect_recall = perfect_recall
        self.tensor = np.zeros(0, np.float32)
        self.dict = {}

    def set_from(self, state, player):
        pass

    def string_from(self, state, player):
        return f"player {player}: {state.view(player)}" if self.perfect_recall else state.view(player)


pyspiel.register_game(_TYPE, BlindDealGame)
