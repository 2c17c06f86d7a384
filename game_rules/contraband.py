"""Contraband: an asymmetric border game of our own rules, a smuggler against an inspector (an OpenSpiel
Python game).

Rules: ``game_rules/contraband.md``. Player 0, the smuggler, holds 5 goods and over 4 rounds secretly packs
0, 1 or 2 of them into each round's crate; player 1, the inspector, has 2 inspections to spend and either
inspects the crate or waves it through. A crate waved through delivers its goods (+1 each to the
smuggler); an inspected crate loses them (-1 each), and an inspected empty crate pays the smuggler 1 in
compensation. The game is zero-sum: the inspector's return is minus the smuggler's. The inspector never
sees what was packed, what was delivered or the score; only what its own inspections found. Observation
strings are JSON and hold each player's whole record, so they are also its information state.
"""

from __future__ import annotations

import json
from typing import Any

import pyspiel

SMUGGLER, INSPECTOR = 0, 1
ROUNDS = 4
STOCK = 5
INSPECTIONS = 2
MAX_PACK = 2
# Action ids: 0..2 pack that many goods (the smuggler); 3 pass, 4 inspect (the inspector).
PASS, INSPECT = MAX_PACK + 1, MAX_PACK + 2
NUM_ACTIONS = MAX_PACK + 3

_GAME_TYPE = pyspiel.GameType(
    short_name="contraband",
    long_name="Contraband",
    dynamics=pyspiel.GameType.Dynamics.SEQUENTIAL,
    chance_mode=pyspiel.GameType.ChanceMode.DETERMINISTIC,
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
# The smuggler's best case is 6 (five goods delivered and one empty crate inspected, or four delivered and
# two empty crates inspected); its worst is -4 (two crates of two goods inspected).
_GAME_INFO = pyspiel.GameInfo(
    num_distinct_actions=NUM_ACTIONS,
    max_chance_outcomes=0,
    num_players=2,
    min_utility=-6.0,
    max_utility=6.0,
    utility_sum=0.0,
    max_game_length=2 * ROUNDS,
)


def action_name(action: int) -> str:
    if action == PASS:
        return "pass"
    if action == INSPECT:
        return "inspect"
    return f"pack {action}"


class ContrabandGame(pyspiel.Game):
    """Contraband (no parameters)."""

    def __init__(self, params: dict | None = None):
        super().__init__(_GAME_TYPE, _GAME_INFO, params or {})

    def new_initial_state(self) -> ContrabandState:
        return ContrabandState(self)

    def make_py_observer(self, iig_obs_type: Any = None, params: dict | None = None) -> ContrabandObserver:
        return ContrabandObserver(params)


class ContrabandState(pyspiel.State):
    """The rounds played (goods packed, inspected or not), the crate being packed, the stock and the score."""

    def __init__(self, game: ContrabandGame):
        super().__init__(game)
        self.rounds: list[tuple[int, bool]] = []  # (goods packed, inspected) per finished round
        self.crate: int | None = None  # goods packed this round, while the inspector decides

    @property
    def stock(self) -> int:
        return STOCK - sum(packed for packed, _ in self.rounds) - (self.crate or 0)

    @property
    def inspections_left(self) -> int:
        return INSPECTIONS - sum(inspected for _, inspected in self.rounds)

    @property
    def score(self) -> int:
        """The smuggler's points so far."""
        return sum((-packed if packed else 1) if inspected else packed for packed, inspected in self.rounds)

    def current_player(self) -> int:
        if self.is_terminal():
            return pyspiel.PlayerId.TERMINAL
        return SMUGGLER if self.crate is None else INSPECTOR

    def _legal_actions(self, player: int) -> list[int]:
        if self.is_terminal():
            return []
        if player == SMUGGLER:
            return list(range(min(MAX_PACK, self.stock) + 1))
        return [PASS, INSPECT] if self.inspections_left else [PASS]

    def _apply_action(self, action: int) -> None:
        player = self.current_player()
        if player < 0 or action not in self._legal_actions(player):
            raise ValueError(f"contraband: action {action} is not legal for player {player} in state {self}")
        if player == SMUGGLER:
            self.crate = action
        else:
            assert self.crate is not None
            self.rounds.append((self.crate, action == INSPECT))
            self.crate = None

    def _action_to_string(self, player: int, action: int) -> str:
        return action_name(action)

    def is_terminal(self) -> bool:
        return len(self.rounds) == ROUNDS

    def returns(self) -> list[float]:
        if not self.is_terminal():
            return [0.0, 0.0]
        return [float(self.score), float(-self.score)]

    def observation_dict(self, player: int) -> dict[str, Any]:
        """What ``player`` sees: the round, the inspections left, and its own record of the rounds played."""
        common = {"round": min(len(self.rounds) + 1, ROUNDS), "inspections_left": self.inspections_left}
        if player == SMUGGLER:
            return common | {"stock": self.stock, "crate": self.crate, "score": self.score,
                             "log": [{"packed": p, "inspected": i} for p, i in self.rounds]}
        return common | {"log": [{"inspected": i, "found": p if i else None} for p, i in self.rounds]}

    def __str__(self) -> str:
        return json.dumps({"rounds": [[p, i] for p, i in self.rounds], "crate": self.crate},
                          separators=(",", ":"))


class ContrabandObserver:
    """Observation and information state alike: the player's JSON record (it holds its whole history)."""

    def __init__(self, params: dict | None):
        if params:
            raise ValueError(f"contraband observer: no parameters are supported, got {params}")
        self.tensor = None
        self.dict: dict = {}

    def set_from(self, state: ContrabandState, player: int) -> None:
        pass

    def string_from(self, state: ContrabandState, player: int) -> str:
        return json.dumps(state.observation_dict(player), separators=(",", ":"))


pyspiel.register_game(_GAME_TYPE, ContrabandGame)
