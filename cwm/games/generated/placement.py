"""The placement family: two players put stones on a grid to make a line, with rules drawn from a seed.

Parameters (``PlacementParams``) change the rules, not only the sizes: the board, the line length, gravity
(stones drop down columns), blocked cells (fixed by the seed, or placed by chance at the start), custodial
captures (flanking exactly N enemy stones removes them; then a move limit), a misère goal (making the line
loses) and a pie rule (the second player may take over the first stone). ``rules(params)`` states each
parameter as one sentence in each tier; the engine below reads the same values.
"""

from __future__ import annotations

import dataclasses
import json
from typing import Any

import numpy as np
import pyspiel

from cwm.games.generated.common import Rule, SharedView, check_params, game_type, register_game

FAMILY = "placement"
_DIRECTIONS = [(dr, dc) for dr in (-1, 0, 1) for dc in (-1, 0, 1) if (dr, dc) != (0, 0)]
_LINES = [(0, 1), (1, 0), (1, 1), (1, -1)]
EMPTY, BLOCKED, STONES = ".", "#", "xo"


@dataclasses.dataclass(frozen=True)
class PlacementParams:
    """The rules of one placement game.

    Attributes:
      rows, cols: the board (row 1 at the bottom, columns ``a``.. from the left).
      k: stones in a straight line (or more) that end the game.
      gravity: a stone is dropped into a column and falls as far as it can.
      blocked: ``"none"``, ``"fixed"`` (the cells ``blocked_cells``) or ``"chance"`` (``blocked_count``
        cells drawn uniformly at random, one by one, before the first move).
      blocked_cells: the fixed blocked cells (cell ids ``row * cols + col``, row 0 at the bottom).
      blocked_count: how many cells chance blocks.
      capture: 0 (no captures) or N: a move that flanks exactly N enemy stones in a straight line between the
        new stone and another of the mover's stones removes them.
      move_limit: with captures, the game is drawn after this many moves (0: no limit).
      misere: making the line loses instead of winning.
      pie: on its first turn the second player may swap: the first stone becomes its own.
    """

    rows: int
    cols: int
    k: int
    gravity: bool
    blocked: str
    blocked_cells: tuple[int, ...]
    blocked_count: int
    capture: int
    move_limit: int
    misere: bool
    pie: bool

    @property
    def cells(self) -> int:
        return self.rows * self.cols

    @property
    def swap(self) -> int:
        """The action id of the pie rule's swap."""
        return self.cells


def draw(rng: np.random.Generator) -> PlacementParams:
    """The parameters of one game, every rule switched on or off by ``rng`` (consumed in a fixed order)."""
    rows, cols = int(rng.integers(4, 7)), int(rng.integers(4, 8))
    k = int(rng.integers(3, min(rows, cols, 5) + 1))
    gravity = bool(rng.random() < 0.5)
    blocked = str(rng.choice(["none", "fixed", "chance"]))
    count = int(rng.integers(1, 4)) if blocked != "none" else 0
    cells = tuple(sorted(int(c) for c in rng.choice(rows * cols, size=count, replace=False))) if blocked == "fixed" else ()
    capture = 0 if gravity else int(rng.choice([0, 1, 2]))
    return PlacementParams(rows=rows, cols=cols, k=k, gravity=gravity, blocked=blocked, blocked_cells=cells,
                           blocked_count=count if blocked == "chance" else 0, capture=capture,
                           move_limit=2 * rows * cols if capture else 0, misere=bool(rng.random() < 0.4),
                           pie=bool(rng.random() < 0.4))


def cell_name(params: PlacementParams, cell: int) -> str:
    """``"c2"``: column letter (``a`` at the left), then row number (``1`` at the bottom)."""
    row, col = divmod(cell, params.cols)
    return f"{'abcdefgh'[col]}{row + 1}"


# ---------------------------------------------------------------------------------------------------
# The engine


def check(p: PlacementParams) -> None:
    """Refuses parameters the engine cannot play, in one line (``check_params``)."""
    cells = set(range(p.rows * p.cols))
    check_params(FAMILY, {
        "rows and cols must be 1 to 8": not (1 <= p.rows <= 8 and 1 <= p.cols <= 8),
        "k must be 2 to the longer side": not 2 <= p.k <= max(p.rows, p.cols),
        "blocked must be none, fixed or chance": p.blocked not in ("none", "fixed", "chance"),
        "blocked_cells must be distinct cells, and only with blocked fixed":
            len(set(p.blocked_cells)) != len(p.blocked_cells) or not set(p.blocked_cells) <= cells
            or (p.blocked != "fixed" and bool(p.blocked_cells)),
        "blocked_count must leave a cell free, and only with blocked chance":
            not 0 <= p.blocked_count < p.rows * p.cols or (p.blocked != "chance" and p.blocked_count != 0),
        "capture must be >= 0, without gravity, with move_limit > 0 exactly when capturing":
            p.capture < 0 or (p.capture > 0 and p.gravity) or (p.capture > 0) != (p.move_limit > 0),
    })


def build_game(name: str, params: PlacementParams) -> type[pyspiel.Game]:
    """An OpenSpiel game class (no parameters of its own) playing ``params``, registered as ``name``."""
    check(params)
    chance = params.blocked == "chance"
    gtype = game_type(name, f"{name} (generated {FAMILY} game)", chance=chance)
    f = facts(params)
    info = pyspiel.GameInfo(num_distinct_actions=f["num_distinct_actions"], max_chance_outcomes=f["max_chance_outcomes"],
                            num_players=2, min_utility=-1.0, max_utility=1.0, utility_sum=0.0,
                            max_game_length=f["max_game_length"])
    return register_game(gtype, info, PlacementState, params, f"PlacementGame_{name}")


class PlacementState(SharedView, pyspiel.State):
    """The board (``.`` empty, ``#`` blocked, ``x`` player 0, ``o`` player 1), the mover, the move count."""

    def __init__(self, game: pyspiel.Game, params: PlacementParams):
        super().__init__(game)
        self.p = params
        self.board = [BLOCKED if c in params.blocked_cells else EMPTY for c in range(params.cells)]
        self.to_move = 0
        self.moves = 0  # placements and swaps made
        self.chance_left = params.blocked_count
        self.winner: int | None = None
        self.log: list[str] = []  # every action so far, as the rules write it (the information state)

    def current_player(self) -> int:
        if self.is_terminal():
            return pyspiel.PlayerId.TERMINAL
        return pyspiel.PlayerId.CHANCE if self.chance_left else self.to_move

    def chance_outcomes(self) -> list[tuple[int, float]]:
        empty = [c for c in range(self.p.cells) if self.board[c] == EMPTY]
        return [(c, 1.0 / len(empty)) for c in empty]

    def _placements(self) -> list[int]:
        """Cell ids (no gravity) or column ids (gravity) the mover may play."""
        if self.p.gravity:
            top = (self.p.rows - 1) * self.p.cols
            return [c for c in range(self.p.cols) if self.board[top + c] == EMPTY]
        return [c for c in range(self.p.cells) if self.board[c] == EMPTY]

    def _legal_actions(self, player: int) -> list[int]:
        can_swap = self.p.pie and self.moves == 1
        return self._placements() + ([self.p.swap] if can_swap else [])

    def landing(self, column: int) -> int:
        """The cell a stone dropped into ``column`` comes to rest on (gravity)."""
        row = self.p.rows - 1
        while row > 0 and self.board[(row - 1) * self.p.cols + column] == EMPTY:
            row -= 1
        return row * self.p.cols + column

    def _apply_action(self, action: int) -> None:
        if self.is_terminal():
            raise ValueError(f"{self.get_game()}: the game is over; action {action} cannot be played")
        if self.chance_left:
            if not 0 <= action < self.p.cells or self.board[action] != EMPTY:
                raise ValueError(f"{self.get_game()}: chance cannot block cell {action}")
            self.log.append(self._action_to_string(pyspiel.PlayerId.CHANCE, action))
            self.board[action] = BLOCKED
            self.chance_left -= 1
            return
        if action not in self._legal_actions(self.to_move):
            raise ValueError(f"{self.get_game()}: action {action} is not legal in {self}")
        self.log.append(action_name(self.p, action))
        if action == self.p.swap:
            self.board = [STONES[1] if s == STONES[0] else s for s in self.board]
        else:
            cell = self.landing(action) if self.p.gravity else action
            self.board[cell] = STONES[self.to_move]
            self._capture(cell)
            if self._line_through(cell):
                self.winner = 1 - self.to_move if self.p.misere else self.to_move
        self.moves += 1
        self.to_move = 1 - self.to_move

    def _capture(self, cell: int) -> None:
        """Removes each line of exactly ``capture`` enemy stones flanked by ``cell`` and a stone of the mover."""
        n, own = self.p.capture, self.board[cell]
        if not n:
            return
        row, col = divmod(cell, self.p.cols)
        for dr, dc in _DIRECTIONS:
            path = [self._cell(row + i * dr, col + i * dc) for i in range(1, n + 2)]
            if None in path:
                continue
            stones = [self.board[c] for c in path if c is not None]
            if stones[-1] == own and all(s == STONES[1 - STONES.index(own)] for s in stones[:-1]):
                for c in path[:-1]:
                    assert c is not None
                    self.board[c] = EMPTY

    def _cell(self, row: int, col: int) -> int | None:
        inside = 0 <= row < self.p.rows and 0 <= col < self.p.cols
        return row * self.p.cols + col if inside else None

    def _line_through(self, cell: int) -> bool:
        """Whether the stone on ``cell`` is part of ``k`` or more of its colour in a straight line."""
        row, col = divmod(cell, self.p.cols)
        for dr, dc in _LINES:
            count = 1
            for sign in (1, -1):
                step = 1
                while (c := self._cell(row + sign * step * dr, col + sign * step * dc)) is not None \
                        and self.board[c] == self.board[cell]:
                    count, step = count + 1, step + 1
            if count >= self.p.k:
                return True
        return False

    def _action_to_string(self, player: int, action: int) -> str:
        if player == pyspiel.PlayerId.CHANCE:
            return f"block {cell_name(self.p, action)}"
        return action_name(self.p, action)

    def is_terminal(self) -> bool:
        if self.winner is not None:
            return True
        if self.chance_left:
            return False
        out_of_moves = bool(self.p.move_limit) and self.moves >= self.p.move_limit
        return out_of_moves or not self._legal_actions(self.to_move)

    def returns(self) -> list[float]:
        if self.winner is None:
            return [0.0, 0.0]
        return [1.0, -1.0] if self.winner == 0 else [-1.0, 1.0]

    def observation_dict(self) -> dict[str, Any]:
        """The whole position, top row first (both players see the same)."""
        rows = ["".join(self.board[r * self.p.cols:(r + 1) * self.p.cols]) for r in reversed(range(self.p.rows))]
        return {"board": rows, "to_move": self.to_move, "moves": self.moves}

    def __str__(self) -> str:
        return "\n".join(self.observation_dict()["board"]) + f"\nto move: {self.to_move}, moves: {self.moves}"


def action_name(params: PlacementParams, action: int) -> str:
    """A player's action as the rules write it: ``"c2"``, ``"drop c"`` (gravity) or ``"swap"``."""
    if action == params.swap:
        return "swap"
    return f"drop {'abcdefgh'[action]}" if params.gravity else cell_name(params, action)


# ---------------------------------------------------------------------------------------------------
# The rules, one sentence per parameter in each tier


def rules(params: PlacementParams) -> list[Rule]:
    """Each parameter's rule in both tiers, in the order the rules texts give them."""
    p = params
    size = f"The board has {p.rows} rows and {p.cols} columns."
    place = ("On a turn the mover drops one stone into a column that is not full; it falls straight down and "
             "comes to rest on the bottom edge, on a stone or on a blocked cell." if p.gravity else
             "On a turn the mover puts one stone on any empty cell.")
    rules_ = [
        Rule("rows,cols", [p.rows, p.cols], size + f" Columns are lettered a to {'abcdefgh'[p.cols - 1]} from "
             f"the left and rows numbered 1 to {p.rows} from the bottom, so a cell is written like c2.",
             size + f" Cell id = (row - 1) * {p.cols} + column index (a = 0); board strings list the top row first."),
        Rule("gravity", p.gravity, place, place + (" Action `drop <column>` (id = column index)." if p.gravity
                                                   else " Action `<cell>`, e.g. `c2` (id = cell id).")),
        Rule("k", p.k, _line_sentence(p), _line_sentence(p)),
        Rule("misere", p.misere, _goal_sentence(p), _goal_sentence(p)),
        Rule("blocked", [p.blocked, list(p.blocked_cells), p.blocked_count], _blocked_sentence(p),
             _blocked_sentence(p) + (" Chance actions are `block <cell>`, each empty cell equally likely."
                                     if p.blocked == "chance" else "")),
        Rule("capture", [p.capture, p.move_limit], _capture_sentence(p), _capture_sentence(p)),
        Rule("pie", p.pie, _pie_sentence(p), _pie_sentence(p) + (f" Action `swap` (id {p.swap})." if p.pie else "")),
    ]
    return rules_


def _line_sentence(p: PlacementParams) -> str:
    return (f"A line is {p.k} or more stones of one player in an unbroken straight row, column or diagonal; the "
            f"game ends as soon as a move makes one.")


def _goal_sentence(p: PlacementParams) -> str:
    if p.misere:
        return "The player whose move makes a line loses (scores -1) and the other wins (+1)."
    return "The player whose move makes a line wins (scores +1) and the other loses (-1)."


def _blocked_sentence(p: PlacementParams) -> str:
    if p.blocked == "fixed":
        names = ", ".join(cell_name(p, c) for c in p.blocked_cells)
        return f"Cells {names} are blocked: no stone may be put there, and a blocked cell is never part of a line."
    if p.blocked == "chance":
        return (f"Before the first move, {p.blocked_count} empty cell(s) are blocked one after another, each "
                f"chosen at random among the empty cells; no stone may be put on a blocked cell.")
    return "No cell is blocked."


def _capture_sentence(p: PlacementParams) -> str:
    if not p.capture:
        return "Stones are never removed, and if the mover has nowhere to play the game is drawn (0 each)."
    flank = "exactly one enemy stone" if p.capture == 1 else f"exactly {p.capture} enemy stones in a row"
    return (f"After a stone is put down, {flank} lying in a straight line (any of the eight directions) between "
            f"it and another stone of the mover are captured and removed, freeing their cells; captures happen "
            f"before the check for a line. The game is drawn (0 each) if the mover has nowhere to play, or "
            f"after {p.move_limit} moves.")


def _pie_sentence(p: PlacementParams) -> str:
    if not p.pie:
        return "There is no swap: the players simply alternate."
    return ("Pie rule: on the second player's first turn, instead of playing, it may swap: the first player's "
            "stone becomes the second player's, and the first player moves next. A swap counts as a move.")


INTRO = ("A game for two players, x (the first player) and o, who take turns putting stones of their own "
         "colour on a rectangular grid of cells.")
SECTIONS = [("Board", ["rows,cols", "blocked"]), ("Play", ["gravity", "pie"]), ("Goal", ["k", "misere"]),
            ("Captures and the end", ["capture"])]
KNOW = "Both players see the whole board at all times. x moves first, then the players alternate."


def spec_format(params: PlacementParams) -> str:
    """The spec tier's formats: the observation JSON and the action ids."""
    rows = ["." * params.cols for _ in range(params.rows)]
    example = {"board": rows, "to_move": 0, "moves": 0}
    return ("The observation (the same for both players) is a JSON object such as "
            f"`{json.dumps(example, separators=(',', ':'))}`: `board` lists the rows top first, `.` an empty cell, "
            "`#` a blocked one, `x` and `o` the players' stones; `to_move` is the player to move (0 is x); "
            f"`moves` counts the moves made (swaps included). There are {params.cells + 1} action ids; the legal "
            "ones are listed in increasing id order. Returns are 0 until the end.")


def facts(params: PlacementParams) -> dict[str, Any]:
    """The engine's facts: players, chance, information, the most actions a game can take."""
    chance = params.blocked == "chance"
    return {"players": 2, "chance": chance, "information": "perfect", "outcome": "win/draw/loss",
            "num_distinct_actions": params.cells + 1, "max_chance_outcomes": params.cells if chance else 0,
            "max_game_length": params.blocked_count + (params.move_limit or params.cells + int(params.pie))}


RULES_ON = ("gravity", "blocked_fixed", "blocked_chance", "capture", "misere", "pie")


def rules_on(params: PlacementParams) -> list[str]:
    """The rules beyond the plain line game that ``params`` switches on."""
    on = {"gravity": params.gravity, "blocked_fixed": params.blocked == "fixed",
          "blocked_chance": params.blocked == "chance", "capture": bool(params.capture), "misere": params.misere,
          "pie": params.pie}
    return [rule for rule in RULES_ON if on[rule]]
