"""Generalized chess (army5x5a): a 5x5 army game of our own design (an OpenSpiel Python game).

Rules: ``game_rules/gen_chess.md``. Each side has a general, two infantry and two cavalry on its back rank;
player 0 (upper-case letters) starts on rank 1 and moves first, player 1 (lower case) on rank 5. Capturing
the opposing general wins; ``PASS`` is the only move of a side that has no move; after 100 plies without
a general captured the game is a draw. Moves are written ``"B1_to_B2"``. Observation strings are JSON.
"""

from __future__ import annotations

import json
from typing import Any

import numpy as np
import pyspiel

SIZE = 5
NUM_SQUARES = SIZE * SIZE
FILES = "ABCDE"
MAX_PLIES = 100
PASS = NUM_SQUARES * NUM_SQUARES  # action ids: from_square * 25 + to_square, then PASS
BACK_RANK = "CIGIC"  # files A..E
PIECES = "GIC"  # general, infantry, cavalry
_KING_STEPS = [(df, dr) for df in (-1, 0, 1) for dr in (-1, 0, 1) if (df, dr) != (0, 0)]
_ORTHOGONAL = [(1, 0), (-1, 0), (0, 1), (0, -1)]
_DIAGONAL_JUMPS = [(2, 2), (2, -2), (-2, 2), (-2, -2)]

_GAME_TYPE = pyspiel.GameType(
    short_name="gen_chess",
    long_name="Generalized Chess (army5x5a)",
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
    num_distinct_actions=PASS + 1,
    max_chance_outcomes=0,
    num_players=2,
    min_utility=-1.0,
    max_utility=1.0,
    utility_sum=0.0,
    max_game_length=MAX_PLIES,
)


def square_name(square: int) -> str:
    """Square id ``(rank - 1) * 5 + file`` -> ``"A1"`` .. ``"E5"``."""
    return f"{FILES[square % SIZE]}{square // SIZE + 1}"


def square_id(name: str) -> int:
    return (int(name[1]) - 1) * SIZE + FILES.index(name[0])


def action_name(action: int) -> str:
    if action == PASS:
        return "PASS"
    return f"{square_name(action // NUM_SQUARES)}_to_{square_name(action % NUM_SQUARES)}"


def action_id(name: str) -> int:
    if name == "PASS":
        return PASS
    src, dst = name.split("_to_")
    return square_id(src) * NUM_SQUARES + square_id(dst)


def owner(piece: str) -> int:
    return 0 if piece.isupper() else 1


def offsets(piece: str) -> list[tuple[int, int]]:
    """(file, rank) offsets a piece may move by; ``forward`` is +rank for player 0, -rank for player 1."""
    kind = piece.upper()
    if kind == "G":
        return list(_KING_STEPS)
    if kind == "C":
        return _ORTHOGONAL + _DIAGONAL_JUMPS
    forward = 1 if owner(piece) == 0 else -1
    return [(0, forward), (-1, forward), (1, forward), (-1, 0), (1, 0)]  # infantry


_OFFSETS = {piece: frozenset(offsets(piece)) for piece in PIECES + PIECES.lower()}


def initial_board() -> list[str]:
    """25 cells indexed by square id; ``"."`` is empty."""
    board = ["."] * NUM_SQUARES
    for f, kind in enumerate(BACK_RANK):
        board[f] = kind
        board[(SIZE - 1) * SIZE + f] = kind.lower()
    return board


def moves(board: list[str], player: int) -> list[int]:
    """Action ids of ``player``'s moves (without PASS), ascending."""
    out = []
    for src, piece in enumerate(board):
        if piece == "." or owner(piece) != player:
            continue
        f, r = src % SIZE, src // SIZE
        for df, dr in offsets(piece):
            nf, nr = f + df, r + dr
            if 0 <= nf < SIZE and 0 <= nr < SIZE:
                dst = nr * SIZE + nf
                if board[dst] == "." or owner(board[dst]) != player:
                    out.append(src * NUM_SQUARES + dst)
    return sorted(out)


def is_move(board: list[str], player: int, action: int) -> bool:
    """Whether ``action`` (not PASS) is one of ``player``'s moves on ``board``; as cheap as a membership test."""
    if not 0 <= action < PASS:
        return False
    src, dst = divmod(action, NUM_SQUARES)
    piece, target = board[src], board[dst]
    if piece == "." or owner(piece) != player or (target != "." and owner(target) == player):
        return False
    return (dst % SIZE - src % SIZE, dst // SIZE - src // SIZE) in _OFFSETS[piece]


def board_rows(board: list[str]) -> list[str]:
    """Rank 5 first (player 1's side at the top), files A..E left to right."""
    return ["".join(board[r * SIZE:(r + 1) * SIZE]) for r in range(SIZE - 1, -1, -1)]


class GenChessGame(pyspiel.Game):
    """Generalized chess army5x5a (no parameters)."""

    def __init__(self, params: dict | None = None):
        super().__init__(_GAME_TYPE, _GAME_INFO, params or {})

    def new_initial_state(self) -> GenChessState:
        return GenChessState(self)

    def make_py_observer(self, iig_obs_type: Any = None, params: dict | None = None) -> Any:
        if iig_obs_type is None or (iig_obs_type.public_info and not iig_obs_type.perfect_recall):
            return GenChessObserver(params)
        return GenChessHistoryObserver(params)


class GenChessState(pyspiel.State):
    """The board, the side to move, the ply count and the winner."""

    def __init__(self, game: GenChessGame):
        super().__init__(game)
        self.board = initial_board()
        self.to_move = 0
        self.plies = 0
        self.winner: int | None = None

    def current_player(self) -> int:
        return pyspiel.PlayerId.TERMINAL if self.is_terminal() else self.to_move

    def _legal_actions(self, player: int) -> list[int]:
        return moves(self.board, player) or [PASS]

    def _apply_action(self, action: int) -> None:
        if self.is_terminal() or not (is_move(self.board, self.to_move, action) if action != PASS
                                      else not moves(self.board, self.to_move)):
            raise ValueError(f"gen_chess: action {action} is not legal for player {self.current_player()} "
                             f"in state {self}")
        if action != PASS:
            src, dst = divmod(action, NUM_SQUARES)
            if self.board[dst].upper() == "G":
                self.winner = self.to_move
            self.board[dst], self.board[src] = self.board[src], "."
        self.plies += 1
        self.to_move = 1 - self.to_move

    def _action_to_string(self, player: int, action: int) -> str:
        return action_name(action)

    def is_terminal(self) -> bool:
        return self.winner is not None or self.plies >= MAX_PLIES

    def returns(self) -> list[float]:
        if self.winner is None:
            return [0.0, 0.0]
        return [1.0, -1.0] if self.winner == 0 else [-1.0, 1.0]

    def observation_dict(self) -> dict[str, Any]:
        """The whole position (both players see the same)."""
        return {"board": board_rows(self.board), "to_move": self.to_move, "plies": self.plies}

    def __str__(self) -> str:
        return json.dumps(self.observation_dict(), separators=(",", ":"))


class GenChessObserver:
    """Observation: JSON position string; tensor = one plane per piece kind and side plus a ply plane."""

    def __init__(self, params: dict | None):
        if params:
            raise ValueError(f"gen_chess observer: no parameters are supported, got {params}")
        shape = (2 * len(PIECES) + 2, SIZE, SIZE)  # 6 piece planes, empty, side to move
        self.tensor = np.zeros(int(np.prod(shape)), np.float32)
        self.dict = {"observation": self.tensor.reshape(shape)}

    def set_from(self, state: GenChessState, player: int) -> None:
        planes = self.dict["observation"]
        planes.fill(0)
        for sq, piece in enumerate(state.board):
            r, f = divmod(sq, SIZE)
            if piece == ".":
                planes[2 * len(PIECES), r, f] = 1
            else:
                planes[owner(piece) * len(PIECES) + PIECES.index(piece.upper()), r, f] = 1
        planes[-1] = state.to_move

    def string_from(self, state: GenChessState, player: int) -> str:
        return str(state)


class GenChessHistoryObserver:
    """Information state (perfect recall): the move history as JSON; no tensor."""

    def __init__(self, params: dict | None):
        if params:
            raise ValueError(f"gen_chess observer: no parameters are supported, got {params}")
        self.tensor = None
        self.dict: dict = {}

    def set_from(self, state: GenChessState, player: int) -> None:
        pass

    def string_from(self, state: GenChessState, player: int) -> str:
        return json.dumps({"moves": [action_name(int(a)) for a in state.history()]}, separators=(",", ":"))


pyspiel.register_game(_GAME_TYPE, GenChessGame)
