"""Fox and hounds on a 6x6 board: an asymmetric chase of our own rules (an OpenSpiel Python game).

Rules: ``game_rules/fox_and_hounds.md``. Player 0 has three hounds (they move first and step one square
diagonally forward only); player 1 is the fox (one piece, steps one square diagonally in any direction).
Pieces never capture or jump. The fox wins by reaching rank 1 or when the hounds have no move; the hounds
win when the fox has no move. Hound moves are finite, so every game ends within 30 plies. Moves are
written ``"c6-b5"``; observation strings are JSON. With perfect play the hounds win.
"""

from __future__ import annotations

import json
from typing import Any

import numpy as np
import pyspiel

SIZE = 6
FILES = "abcdef"
HOUNDS, FOX = 0, 1
FOX_START = "c6"
HOUNDS_START = ("b1", "d1", "f1")
# Directions as (file step, rank step); an action id is square * 4 + direction.
DIRECTIONS = ((-1, 1), (1, 1), (-1, -1), (1, -1))  # up-left, up-right, down-left, down-right
HOUND_DIRECTIONS = (0, 1)  # hounds only step towards rank 6
MAX_PLIES = 30  # 15 hound moves at most (3 hounds, 5 ranks each), each answered by the fox

_GAME_TYPE = pyspiel.GameType(
    short_name="fox_and_hounds",
    long_name="Fox and Hounds (6x6)",
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
    provides_observation_tensor=True,
    parameter_specification={},
)
_GAME_INFO = pyspiel.GameInfo(
    num_distinct_actions=SIZE * SIZE * len(DIRECTIONS),
    max_chance_outcomes=0,
    num_players=2,
    min_utility=-1.0,
    max_utility=1.0,
    utility_sum=0.0,
    max_game_length=MAX_PLIES,
)


def square_name(square: int) -> str:
    """Square id ``(rank - 1) * 6 + file`` -> ``"a1"`` .. ``"f6"``."""
    return f"{FILES[square % SIZE]}{square // SIZE + 1}"


def square_id(name: str) -> int:
    return (int(name[1]) - 1) * SIZE + FILES.index(name[0])


def target(square: int, direction: int) -> int | None:
    """The square one diagonal step from ``square`` in ``direction``, or ``None`` off the board."""
    df, dr = DIRECTIONS[direction]
    f, r = square % SIZE + df, square // SIZE + dr
    return r * SIZE + f if 0 <= f < SIZE and 0 <= r < SIZE else None


def action_name(action: int) -> str:
    square, direction = divmod(action, len(DIRECTIONS))
    to = target(square, direction)
    return f"{square_name(square)}-{square_name(to) if to is not None else 'off'}"


def moves(fox: int, hounds: tuple[int, ...], player: int) -> list[int]:
    """Action ids of ``player``'s moves, ascending."""
    occupied = {fox, *hounds}
    pieces = [fox] if player == FOX else sorted(hounds)
    directions = range(len(DIRECTIONS)) if player == FOX else HOUND_DIRECTIONS
    out = [sq * len(DIRECTIONS) + d for sq in pieces for d in directions
           if (to := target(sq, d)) is not None and to not in occupied]
    return sorted(out)


class FoxAndHoundsGame(pyspiel.Game):
    """Fox and hounds, 6x6 (no parameters)."""

    def __init__(self, params: dict | None = None):
        super().__init__(_GAME_TYPE, _GAME_INFO, params or {})

    def new_initial_state(self) -> FoxAndHoundsState:
        return FoxAndHoundsState(self)

    def make_py_observer(self, iig_obs_type: Any = None, params: dict | None = None) -> Any:
        if iig_obs_type is None or (iig_obs_type.public_info and not iig_obs_type.perfect_recall):
            return FoxAndHoundsObserver(params)
        return FoxAndHoundsHistoryObserver(params)


class FoxAndHoundsState(pyspiel.State):
    """The fox's square, the hounds' squares, the side to move, the ply count and the winner."""

    def __init__(self, game: FoxAndHoundsGame):
        super().__init__(game)
        self.fox = square_id(FOX_START)
        self.hounds = tuple(sorted(square_id(s) for s in HOUNDS_START))
        self.to_move = HOUNDS
        self.plies = 0
        self.winner: int | None = None

    def current_player(self) -> int:
        return pyspiel.PlayerId.TERMINAL if self.is_terminal() else self.to_move

    def _legal_actions(self, player: int) -> list[int]:
        return [] if self.is_terminal() else moves(self.fox, self.hounds, player)

    def _apply_action(self, action: int) -> None:
        if self.is_terminal() or action not in moves(self.fox, self.hounds, self.to_move):
            raise ValueError(f"fox_and_hounds: action {action} is not legal for player {self.current_player()} "
                             f"in state {self}")
        square, direction = divmod(action, len(DIRECTIONS))
        to = target(square, direction)
        assert to is not None
        if self.to_move == FOX:
            self.fox = to
        else:
            self.hounds = tuple(sorted(to if h == square else h for h in self.hounds))
        self.plies += 1
        self.to_move = 1 - self.to_move
        if self.fox // SIZE == 0:
            self.winner = FOX
        elif not moves(self.fox, self.hounds, self.to_move):  # the side to move is stuck: it loses
            self.winner = 1 - self.to_move

    def _action_to_string(self, player: int, action: int) -> str:
        return action_name(action)

    def is_terminal(self) -> bool:
        return self.winner is not None

    def returns(self) -> list[float]:
        if self.winner is None:
            return [0.0, 0.0]
        return [1.0, -1.0] if self.winner == HOUNDS else [-1.0, 1.0]

    def board_rows(self) -> list[str]:
        """Rank 6 first, files a..f left to right: ``F`` the fox, ``H`` a hound, ``.`` empty."""
        cells = ["."] * (SIZE * SIZE)
        cells[self.fox] = "F"
        for h in self.hounds:
            cells[h] = "H"
        return ["".join(cells[r * SIZE:(r + 1) * SIZE]) for r in range(SIZE - 1, -1, -1)]

    def observation_dict(self) -> dict[str, Any]:
        """The whole position (both players see the same)."""
        return {"board": self.board_rows(), "to_move": "fox" if self.to_move == FOX else "hounds",
                "plies": self.plies}

    def __str__(self) -> str:
        return json.dumps(self.observation_dict(), separators=(",", ":"))


class FoxAndHoundsObserver:
    """Observation: the JSON position string; tensor = fox plane, hounds plane, side-to-move plane."""

    def __init__(self, params: dict | None):
        if params:
            raise ValueError(f"fox_and_hounds observer: no parameters are supported, got {params}")
        shape = (3, SIZE, SIZE)
        self.tensor = np.zeros(int(np.prod(shape)), np.float32)
        self.dict = {"observation": self.tensor.reshape(shape)}

    def set_from(self, state: FoxAndHoundsState, player: int) -> None:
        planes = self.dict["observation"]
        planes.fill(0)
        planes[0, state.fox // SIZE, state.fox % SIZE] = 1
        for h in state.hounds:
            planes[1, h // SIZE, h % SIZE] = 1
        planes[2] = state.to_move

    def string_from(self, state: FoxAndHoundsState, player: int) -> str:
        return str(state)


class FoxAndHoundsHistoryObserver:
    """Information state (perfect recall): the move history as JSON; no tensor."""

    def __init__(self, params: dict | None):
        if params:
            raise ValueError(f"fox_and_hounds observer: no parameters are supported, got {params}")
        self.tensor = None
        self.dict: dict = {}

    def set_from(self, state: FoxAndHoundsState, player: int) -> None:
        pass

    def string_from(self, state: FoxAndHoundsState, player: int) -> str:
        return json.dumps({"moves": [action_name(int(a)) for a in state.history()]}, separators=(",", ":"))


pyspiel.register_game(_GAME_TYPE, FoxAndHoundsGame)
