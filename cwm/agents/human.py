"""A person playing at a terminal: the position (or, with hidden information, their own observation), the
moves played since their last turn, and a prompt that accepts only a legal move.

Input is validated: a move is the game's own notation (``x(1,1)``, ``x3``), matched exactly or ignoring
case, or its number in the list ``?`` prints; anything else gets a one-line message and the prompt again.
A move's number is the game's action id, so it is the same on every turn (``4`` is ``x(1,1)`` all game),
not its place in the current list. A board drawn as a grid (tic-tac-toe, connect four) is shown with its row
and column numbers. ``quit`` (or the end of input) resigns, which the arena records as a forfeit of kind
``resigned``.
"""

from __future__ import annotations

import re
from collections.abc import Callable

import pyspiel

from cwm.agents.base import AgentBase, AgentError
from cwm.types import CHANCE

HELP = {"?", "help", "moves"}
QUIT = {"quit", "resign", "exit"}
RESIGNED = "resigned"  # the forfeit kind of a person who resigned (beside the arena's FORFEIT_KINDS)
GRID_MARKS = frozenset("|+-= ")  # a board drawn with these (backgammon's frame) is not a plain grid of cells
MOVE_CELL = re.compile(r"\((\d+),(\d+)\)$")  # a move named by its cell, ``x(1,2)``: the rows are numbered too


class Resigned(AgentError):
    """The person resigned (typed ``quit``, or their input ended)."""

    kind = RESIGNED


class HumanAgent(AgentBase):
    """Asks a person for each move.

    Args:
      read: reads one line after showing its prompt (default ``input``; raises ``EOFError`` at the end).
      write: shows one text (default ``print``).
    """

    def __init__(self, *, read: Callable[[str], str] = input, write: Callable[[str], None] = print):
        self.read = read
        self.write = write
        self._seen = 0

    def reset(self) -> None:
        self._seen = 0

    def step(self, state: pyspiel.State) -> int:
        player = state.current_player()
        legal = {state.action_to_string(player, a): int(a) for a in state.legal_actions()}
        self._show(state, player, legal)
        while True:
            try:
                typed = self.read(f"your move as seat {player} (? lists the legal moves, quit resigns): ").strip()
            except EOFError:
                raise Resigned("the human player's input ended (resigned)") from None
            action = self._choice(typed, legal)
            if action is not None:
                return action

    def _choice(self, typed: str, legal: dict[str, int]) -> int | None:
        """The action ``typed`` names, or ``None`` after saying why it names none (or listing the moves)."""
        names = list(legal)
        if typed.lower() in HELP:
            self.write("legal moves: " + "  ".join(f"{legal[name]}:{name}" for name in names))
            return None
        if typed.lower() in QUIT:
            raise Resigned("the human player resigned")
        if typed in legal:
            return legal[typed]
        folded = [name for name in names if name.lower() == typed.lower()]
        if len(folded) == 1:
            return legal[folded[0]]
        if typed.isdecimal() and len(typed) < 10:
            by_id = {a: name for name, a in legal.items()}
            if int(typed) in by_id:
                return int(typed)
            self.write(f"move {int(typed)} is not a legal move here; type ? to list the legal moves with their "
                       f"numbers (the game's action ids)")
            return None
        shown = typed if len(typed) <= 40 else typed[:40] + "..."
        self.write(f"{shown!r} is not a legal move here; type ? to list them" if typed else "type a move, or ?")
        return None

    def _show(self, state: pyspiel.State, player: int, legal: dict[str, int]) -> None:
        """The position for ``player``: the moves since their last turn and the board (with perfect
        information), or only their own observation (with hidden information)."""
        game = state.get_game()
        perfect = game.get_type().information == pyspiel.GameType.Information.PERFECT_INFORMATION
        history = state.history()
        if perfect:
            replay = game.new_initial_state()
            for i, action in enumerate(history):
                if i >= self._seen:
                    mover = replay.current_player()
                    who = "chance" if mover == CHANCE else f"seat {mover}"
                    self.write(f"{who} played {replay.action_to_string(mover, action)}")
                replay.apply_action(action)
            self.write(with_coordinates(str(state), rows=any(MOVE_CELL.search(name) for name in legal)))
        else:
            self.write(f"what you see (seat {player}):\n{state.observation_string(player)}")
        self._seen = len(history)


def with_coordinates(board: str, *, rows: bool) -> str:
    """``board`` with its column numbers above it (and, with ``rows``, each row's number before it) when it is
    drawn as a plain grid: two or more lines of one width (at most 10), one character per cell and no frame.
    Any other drawing is returned unchanged."""
    lines = board.strip("\n").splitlines()
    if len(lines) < 2 or len({len(line) for line in lines}) != 1 or not 2 <= len(lines[0]) <= 10:
        return board
    if any(GRID_MARKS & set(line) for line in lines):
        return board
    margin = "  " if rows else ""
    header = margin + "".join(str(c) for c in range(len(lines[0])))
    body = [(f"{r} " if rows else "") + line for r, line in enumerate(lines)]
    return "\n".join([header, *body])
