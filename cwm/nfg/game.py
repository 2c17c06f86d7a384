"""The formal two-player matrix game behind every nfg task, with exact (fractional) payoffs."""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping, Sequence
from fractions import Fraction

import pyspiel

from cwm import games
from cwm.types import JSON, CwmError


class NfgFormatError(CwmError, ValueError):
    """A game, task or answer record that is malformed; the message names the field and the value."""


def to_fraction(value: object, *, where: str = "value") -> Fraction:
    """Reads an int, a finite float, or a ``"a/b"`` / ``"0.35"`` string as an exact fraction.

    Raises:
      NfgFormatError: the value is not a number (``where`` names it in the message).
    """
    if isinstance(value, bool):
        raise NfgFormatError(f"{where}: expected a number, got the boolean {value!r}")
    if isinstance(value, (int, Fraction)):
        return Fraction(value)
    if isinstance(value, float):
        if value != value or value in (float("inf"), float("-inf")):
            raise NfgFormatError(f"{where}: expected a finite number, got {value!r}")
        return Fraction(str(value))
    if isinstance(value, str):
        try:
            return Fraction(value.strip())
        except (ValueError, ZeroDivisionError) as e:
            raise NfgFormatError(f"{where}: {value!r} is not a number or a fraction a/b") from e
    raise NfgFormatError(f"{where}: expected a number, got {type(value).__name__} {value!r}")


def fraction_json(value: Fraction) -> JSON:
    """An exact fraction as JSON: an int when integral, else the string ``"a/b"``."""
    return value.numerator if value.denominator == 1 else f"{value.numerator}/{value.denominator}"


@dataclasses.dataclass(frozen=True)
class MatrixGame:
    """A two-player simultaneous-move game given by its payoff table.

    Attributes:
      players: the two players' names as the task text calls them (player 0 picks the row).
      actions: each player's action names, in the order the text lists them.
      payoffs: ``payoffs[i][j] = (u0, u1)`` when player 0 plays ``actions[0][i]`` and player 1
        plays ``actions[1][j]``; exact fractions.
      unit: how the text states payoffs: ``"points"`` or ``"dollars"``.
    """

    players: tuple[str, str]
    actions: tuple[tuple[str, ...], tuple[str, ...]]
    payoffs: tuple[tuple[tuple[Fraction, Fraction], ...], ...]
    unit: str = "points"

    def __post_init__(self) -> None:
        rows, cols = len(self.actions[0]), len(self.actions[1])
        if rows < 1 or cols < 1:
            raise NfgFormatError(f"game: each player needs at least one action, got {self.actions}")
        for player, names in enumerate(self.actions):
            if len({n.lower() for n in names}) != len(names):
                raise NfgFormatError(f"game: player {player}'s action names repeat: {list(names)}")
        if len(self.payoffs) != rows or any(len(row) != cols for row in self.payoffs):
            raise NfgFormatError(f"game: the payoff table must be {rows}x{cols} (actions {self.actions})")
        if self.unit not in ("points", "dollars"):
            raise NfgFormatError(f"game: unit must be 'points' or 'dollars', got {self.unit!r}")

    @staticmethod
    def other(player: int) -> int:
        """The other player's index."""
        return 1 - player

    def index(self, player: int, action: str) -> int:
        """The position of ``action`` among ``player``'s actions (case-insensitive).

        Raises:
          NfgFormatError: the player has no such action.
        """
        for i, name in enumerate(self.actions[player]):
            if name.lower() == action.lower():
                return i
        raise NfgFormatError(f"player {player} ({self.players[player]}) has no action {action!r}; "
                             f"actions are {list(self.actions[player])}")

    def payoff(self, player: int, own: str, other: str) -> Fraction:
        """``player``'s payoff when it plays ``own`` and the other player plays ``other``."""
        mine, theirs = self.index(player, own), self.index(self.other(player), other)
        row, col = (mine, theirs) if player == 0 else (theirs, mine)
        return self.payoffs[row][col][player]

    def matrix(self, player: int) -> list[list[Fraction]]:
        """``player``'s payoffs with its own actions as rows and the other player's as columns."""
        own, other = self.actions[player], self.actions[self.other(player)]
        return [[self.payoff(player, a, b) for b in other] for a in own]

    def is_zero_sum(self) -> bool:
        """Whether every outcome's payoffs sum to zero."""
        return all(u0 + u1 == 0 for row in self.payoffs for u0, u1 in row)

    def to_json(self) -> JSON:
        return {
            "players": list(self.players),
            "actions": [list(a) for a in self.actions],
            "payoffs": [[[fraction_json(u0), fraction_json(u1)] for u0, u1 in row] for row in self.payoffs],
            "unit": self.unit,
        }

    @classmethod
    def from_json(cls, data: Mapping[str, JSON]) -> MatrixGame:
        """Reads ``to_json``'s output back.

        Raises:
          NfgFormatError: a field is missing or malformed.
        """
        try:
            players = tuple(str(p) for p in data["players"])
            actions = tuple(tuple(str(a) for a in acts) for acts in data["actions"])
            table = data["payoffs"]
        except (KeyError, TypeError) as e:
            raise NfgFormatError(f"game: missing or malformed field {e}") from e
        if len(players) != 2 or len(actions) != 2:
            raise NfgFormatError(f"game: expected two players with action lists, got {players}, {actions}")
        payoffs = tuple(
            tuple(_pair(cell, f"game.payoffs[{i}][{j}]") for j, cell in enumerate(row)) for i, row in enumerate(table)
        )
        return cls(players, actions, payoffs, unit=str(data.get("unit", "points")))  # type: ignore[arg-type]

    @classmethod
    def from_tables(cls, players: Sequence[str], actions: Sequence[Sequence[str]],
                    row_payoffs: Sequence[Sequence[object]], col_payoffs: Sequence[Sequence[object]],
                    *, unit: str = "points") -> MatrixGame:
        """Builds a game from the two players' payoff tables (rows = player 0's actions)."""
        table = tuple(
            tuple((to_fraction(r, where="row payoff"), to_fraction(c, where="column payoff")) for r, c in zip(rr, cr))
            for rr, cr in zip(row_payoffs, col_payoffs)
        )
        return cls((players[0], players[1]), (tuple(actions[0]), tuple(actions[1])), table, unit=unit)

    @classmethod
    def from_openspiel(cls, game: str | pyspiel.MatrixGame, *, players: Sequence[str] = ("Player 1", "Player 2"),
                       unit: str = "points") -> MatrixGame:
        """Reads an OpenSpiel matrix game (``"matrix_pd"``, ``"matrix_rps"`` or a loaded game)."""
        g = pyspiel.load_game(game) if isinstance(game, str) else game
        if not isinstance(g, pyspiel.MatrixGame):
            raise NfgFormatError(f"{game!r} is not an OpenSpiel matrix game")
        rows, cols = range(g.num_rows()), range(g.num_cols())
        return cls.from_tables(
            players,
            [[g.row_action_name(i) for i in rows], [g.col_action_name(j) for j in cols]],
            [[g.row_utility(i, j) for j in cols] for i in rows],
            [[g.col_utility(i, j) for j in cols] for i in rows],
            unit=unit,
        )

    @classmethod
    def from_registry(cls, name: str, *, players: Sequence[str] = ("Player 1", "Player 2"),
                      unit: str = "points") -> MatrixGame:
        """The stage game of a registered matrix game (``"prisoners_dilemma"``, ``"rock_paper_scissors"``).

        Raises:
          NfgFormatError: the registered game's ground truth is not an OpenSpiel matrix game.
        """
        return cls.from_openspiel(games.resolve(name).openspiel, players=players, unit=unit)

    def to_openspiel(self) -> pyspiel.MatrixGame:
        """The same game as an OpenSpiel matrix game (payoffs as floats)."""
        return pyspiel.create_matrix_game(
            "cwm_nfg", "cwm nfg task game", list(self.actions[0]), list(self.actions[1]),
            [[float(u0) for u0, _ in row] for row in self.payoffs],
            [[float(u1) for _, u1 in row] for row in self.payoffs],
        )


def _pair(cell: JSON, where: str) -> tuple[Fraction, Fraction]:
    if not isinstance(cell, (list, tuple)) or len(cell) != 2:
        raise NfgFormatError(f"{where}: expected [payoff0, payoff1], got {cell!r}")
    return to_fraction(cell[0], where=where), to_fraction(cell[1], where=where)
