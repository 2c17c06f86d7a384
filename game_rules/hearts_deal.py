"""Hearts, one deal for four players: OpenSpiel's ``hearts`` engine behind stable action strings and JSON
observations (an OpenSpiel Python game).

Rules: ``game_rules/hearts.md``. The play is OpenSpiel's C++ ``hearts`` with its default options (passing
in a direction drawn by chance, no hearts or queen of spades on the first trick, hearts broken by a heart
or the queen, shooting the moon); this module only wraps it, for two reasons. OpenSpiel names every
action of the initial state after a passing direction, whoever asks, and its direction ids 0 to 3 are also
the ids of the first four cards, so an action table read from that state is wrong for the cards; here an
action id always means one thing: ids 0 to 51 are the cards (``"QS"``), for players and deals alike, and
the passing directions are chance outcomes 52 to 55. And the C++ game has no observation string; here a player's observation is the
JSON text of OpenSpiel's observation struct (the other hands as ``"XX"``).
"""

from __future__ import annotations

import json
from typing import Any

import pyspiel

RANKS, SUITS = "23456789TJQKA", "CDHS"
DIRECTIONS = ("No Pass", "Left", "Across", "Right")
NUM_CARDS = 52
_INNER = pyspiel.load_game("hearts")

_GAME_TYPE = pyspiel.GameType(
    short_name="hearts_deal",
    long_name="Hearts (one deal)",
    dynamics=pyspiel.GameType.Dynamics.SEQUENTIAL,
    chance_mode=pyspiel.GameType.ChanceMode.EXPLICIT_STOCHASTIC,
    information=pyspiel.GameType.Information.IMPERFECT_INFORMATION,
    utility=pyspiel.GameType.Utility.GENERAL_SUM,
    reward_model=pyspiel.GameType.RewardModel.TERMINAL,
    max_num_players=4,
    min_num_players=4,
    provides_information_state_string=True,
    provides_information_state_tensor=False,
    provides_observation_string=True,
    provides_observation_tensor=False,
    parameter_specification={},
)
_GAME_INFO = pyspiel.GameInfo(
    num_distinct_actions=_INNER.num_distinct_actions(),
    max_chance_outcomes=NUM_CARDS + len(DIRECTIONS),  # the deals, then the directions
    num_players=4,
    min_utility=0.0,  # 26 minus a player's points: 0 for taking all 26 (or after another's moon shot) ...
    max_utility=26.0,  # ... 26 for taking none, or for shooting the moon
    utility_sum=None,
    max_game_length=_INNER.max_game_length(),
)


def card_name(card: int) -> str:
    """Card id ``4 * rank + suit`` -> ``"2C"`` .. ``"AS"``."""
    return RANKS[card // len(SUITS)] + SUITS[card % len(SUITS)]


class HeartsDealGame(pyspiel.Game):
    """Hearts, one deal (no parameters: OpenSpiel's defaults)."""

    def __init__(self, params: dict | None = None):
        super().__init__(_GAME_TYPE, _GAME_INFO, params or {})

    def new_initial_state(self) -> HeartsDealState:
        return HeartsDealState(self)

    def make_py_observer(self, iig_obs_type: Any = None, params: dict | None = None) -> HeartsDealObserver:
        return HeartsDealObserver(iig_obs_type, params)


class HeartsDealState(pyspiel.State):
    """A wrapped OpenSpiel ``hearts`` state; every move is applied to both."""

    def __init__(self, game: HeartsDealGame):
        super().__init__(game)
        self.inner = _INNER.new_initial_state()

    def current_player(self) -> int:
        return self.inner.current_player()

    def _legal_actions(self, player: int) -> list[int]:
        if player == pyspiel.PlayerId.CHANCE:
            return [a for a, _ in self.chance_outcomes()]
        return self.inner.legal_actions(player)

    def chance_outcomes(self) -> list[tuple[int, float]]:
        shift = NUM_CARDS if self._drawing_direction() else 0
        return [(a + shift, p) for a, p in self.inner.chance_outcomes()]

    def _drawing_direction(self) -> bool:
        """Whether this is the first chance node, which draws the passing direction."""
        return not self.inner.history()

    def _apply_action(self, action: int) -> None:
        self.inner.apply_action(action - NUM_CARDS if self._drawing_direction() else action)

    def _action_to_string(self, player: int, action: int) -> str:
        return DIRECTIONS[action - NUM_CARDS] if action >= NUM_CARDS else card_name(action)

    def is_terminal(self) -> bool:
        return self.inner.is_terminal()

    def returns(self) -> list[float]:
        return self.inner.returns()

    def observation_json(self, player: int) -> str:
        """OpenSpiel's observation struct for ``player`` as compact JSON (other hands shown as ``"XX"``)."""
        return json.dumps(json.loads(self.inner.to_observation_struct(player).to_json()), separators=(",", ":"))

    def resample_from_infostate(self, player_id: int, probability_sampler: Any) -> HeartsDealState:
        """OpenSpiel's resampling of the hidden cards (consistent with ``player_id``'s information state)."""
        drawn = self.inner.resample_from_infostate(player_id, probability_sampler).history()
        state = self.get_game().new_initial_state()
        for i, action in enumerate(drawn):
            state.apply_action(action + NUM_CARDS if i == 0 else action)  # the direction first, as this game names it
        return state

    def __str__(self) -> str:
        return str(self.inner)


class HeartsDealObserver:
    """Observation: the JSON struct text; information state: OpenSpiel's information-state string. No tensors."""

    def __init__(self, iig_obs_type: Any, params: dict | None):
        if params:
            raise ValueError(f"hearts_deal observer: no parameters are supported, got {params}")
        self.perfect_recall = bool(iig_obs_type is not None and iig_obs_type.perfect_recall)
        self.tensor = None
        self.dict: dict = {}

    def set_from(self, state: HeartsDealState, player: int) -> None:
        pass

    def string_from(self, state: HeartsDealState, player: int) -> str:
        if self.perfect_recall:
            return state.inner.information_state_string(player)
        return state.observation_json(player)


pyspiel.register_game(_GAME_TYPE, HeartsDealGame)
