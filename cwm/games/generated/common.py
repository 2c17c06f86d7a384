"""What every generated family shares: the OpenSpiel game type, JSON observers, names and rule sentences.

A family module defines a frozen parameter dataclass, draws it from a seed, builds a ``pyspiel.Game`` from
it, and writes its rules as one sentence per parameter in each tier (``Rule``), so the texts and the engine
are made from the same values.
"""

from __future__ import annotations

import dataclasses
import json
from typing import Any, Protocol

import numpy as np
import pyspiel

# Consonants and vowels of generated names (no letters that read as digits or as each other).
_ONSETS = "bdfgklmnprstvz"
_VOWELS = "aeiou"


def game_name(rng: np.random.Generator, seed: int) -> str:
    """A pronounceable made-up word, then the seed: ``"mofera_7"`` (a valid OpenSpiel short name)."""
    syllables = [str(rng.choice(list(_ONSETS))) + str(rng.choice(list(_VOWELS))) for _ in range(3)]
    return f"{''.join(syllables)}_{seed}"


def to_json(obj: Any) -> str:
    """Compact JSON text (observation and information-state strings)."""
    return json.dumps(obj, separators=(",", ":"))


@dataclasses.dataclass(frozen=True)
class Rule:
    """One parameter's rule: its name, its value, and the sentence each tier states it with."""

    parameter: str
    value: Any
    prose: str
    spec: str


class JsonState(Protocol):
    def observation_for(self, player: int) -> dict[str, Any]: ...

    def information_for(self, player: int) -> dict[str, Any]: ...


class SharedView:
    """The views of a perfect-information game: every player sees the whole position (``observation_dict``),
    and its information state is every action so far as the rules write them (``log``)."""

    log: list[str]

    def observation_dict(self) -> dict[str, Any]:
        raise NotImplementedError

    def observation_for(self, player: int) -> dict[str, Any]:
        return self.observation_dict()

    def information_for(self, player: int) -> dict[str, Any]:
        return {"moves": list(self.log)}


def check_params(family: str, problems: dict[str, bool]) -> None:
    """Refuses parameters a family's engine cannot play (a hand-edited ``PARAMS``, say): ``problems`` maps
    a description of each constraint to whether it is broken.

    Raises:
      ValueError: one line naming the family and every broken constraint.
    """
    broken = [what for what, bad in problems.items() if bad]
    if broken:
        raise ValueError(f"{family} parameters: {'; '.join(broken)}")


def game_type(name: str, long_name: str, *, chance: bool, perfect: bool = True) -> pyspiel.GameType:
    """A sequential two-player zero-sum game type with terminal rewards and string observations."""
    return pyspiel.GameType(
        short_name=name,
        long_name=long_name,
        dynamics=pyspiel.GameType.Dynamics.SEQUENTIAL,
        chance_mode=(pyspiel.GameType.ChanceMode.EXPLICIT_STOCHASTIC if chance
                     else pyspiel.GameType.ChanceMode.DETERMINISTIC),
        information=(pyspiel.GameType.Information.PERFECT_INFORMATION if perfect
                     else pyspiel.GameType.Information.IMPERFECT_INFORMATION),
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


class JsonObserver:
    """A player's observation as JSON text (``perfect_recall=False``), or its information state as JSON text
    (``True``); no tensors."""

    def __init__(self, iig_obs_type: Any, params: dict | None):
        if params:
            raise ValueError(f"generated game observer: no parameters are supported, got {params}")
        self.perfect_recall = bool(iig_obs_type.perfect_recall) if iig_obs_type is not None else False
        self.tensor = np.zeros(0, np.float32)
        self.dict: dict[str, np.ndarray] = {}

    def set_from(self, state: JsonState, player: int) -> None:
        pass

    def string_from(self, state: JsonState, player: int) -> str:
        if self.perfect_recall:
            return to_json(state.information_for(player))
        return to_json(state.observation_for(player))


def make_observer(iig_obs_type: Any = None, params: dict | None = None) -> JsonObserver:
    """``make_py_observer`` of every generated game."""
    return JsonObserver(iig_obs_type or pyspiel.IIGObservationType(perfect_recall=False), params)


def register_game(gtype: pyspiel.GameType, info: pyspiel.GameInfo, state_class: Any, params: Any,
                  class_name: str) -> type[pyspiel.Game]:
    """The OpenSpiel game class of a generated game (no parameters of its own): its states are
    ``state_class(game, params)``, its observer ``make_observer``; registered with OpenSpiel under ``gtype``."""

    class Game(pyspiel.Game):
        def __init__(self, game_params: dict | None = None):
            super().__init__(gtype, info, game_params or {})
            self.params = params

        def new_initial_state(self) -> Any:
            return state_class(self, params)

        def make_py_observer(self, iig_obs_type: Any = None, obs_params: dict | None = None) -> Any:
            return make_observer(iig_obs_type, obs_params)

    Game.__name__ = Game.__qualname__ = class_name
    pyspiel.register_game(gtype, Game)
    return Game



# ---------------------------------------------------------------------------------------------------
# Cards (the card families): suits S, H, D, C; ranks 1 (low) up; card id = suit index * ranks + rank - 1

SUITS = "SHDC"
SUIT_NAMES = {"S": "spades", "H": "hearts", "D": "diamonds", "C": "clubs"}


def card_name(card: int, ranks: int) -> str:
    """``"H3"``: suit letter, then rank."""
    return f"{SUITS[card // ranks]}{card % ranks + 1}"


def card_id(name: str, ranks: int) -> int:
    """The id of ``"H3"`` in a deck of ``ranks`` ranks a suit."""
    return SUITS.index(name[0]) * ranks + int(name[1:]) - 1


def draw_cards(pool: list[int], k: int, uniform: Any) -> list[int]:
    """``k`` cards of ``pool`` without replacement, each pick by one ``uniform()`` float in [0, 1)."""
    pool, out = list(pool), []
    for _ in range(k):
        out.append(pool.pop(min(int(float(uniform()) * len(pool)), len(pool) - 1)))
    return out
