"""A person playing at a terminal: the position (or, with hidden information, their own observation), the
moves played since their last turn, and a prompt that accepts only a legal move.

Input is validated: a move is the game's own notation (``x(1,1)``, ``x3``), matched exactly or ignoring
case, or its number in the list ``?`` prints; anything else gets a one-line message and the prompt again.
``quit`` (or the end of input) resigns, which the arena scores as a forfeit with that reason.
"""

from __future__ import annotations

from collections.abc import Callable

import pyspiel

from cwm.agents.base import AgentBase, AgentError
from cwm.types import CHANCE

HELP = {"?", "help", "moves"}
QUIT = {"quit", "resign", "exit"}


class Resigned(AgentError):
    """The person resigned (typed ``quit``, or their input ended)."""

    kind = "exception"


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
        self._show(state, player)
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
            self.write("legal moves: " + "  ".join(f"{i}:{name}" for i, name in enumerate(names, 1)))
            return None
        if typed.lower() in QUIT:
            raise Resigned("the human player resigned")
        if typed in legal:
            return legal[typed]
        folded = [name for name in names if name.lower() == typed.lower()]
        if len(folded) == 1:
            return legal[folded[0]]
        if typed.isdigit() and 1 <= int(typed) <= len(names):
            return legal[names[int(typed) - 1]]
        shown = typed if len(typed) <= 40 else typed[:40] + "..."
        self.write(f"{shown!r} is not a legal move here; type ? to list them" if typed else "type a move, or ?")
        return None

    def _show(self, state: pyspiel.State, player: int) -> None:
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
            self.write(str(state))
        else:
            self.write(f"what you see (seat {player}):\n{state.observation_string(player)}")
        self._seen = len(history)
