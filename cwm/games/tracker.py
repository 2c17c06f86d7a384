"""Following a real game from one seat: every move's string, and the seat's own events (its observation at
every state and its own actions), replayed on a private copy of the ground truth. What a CWM agent and a
belief check know of a match, and nothing more."""

from __future__ import annotations

import pyspiel

from cwm import events as player_events
from cwm.games import registry as games
from cwm.types import JSON, AgentError


class HistoryTracker:
    """Follows a real game from one seat: every move's string, and the seat's observation at every state.

    The real history is replayed on a private copy of the ground truth only to produce what the seat is
    shown; an agent built on the tracker reads ``events`` (its own view) and, in perfect-information
    games, ``moves`` (public there).
    """

    def __init__(self, spec: games.GameSpec, player: int):
        self.spec = spec
        self.player = player
        self.game = games.load_game(spec)
        self._shadow = self.game.new_initial_state()
        self.ids: list[int] = []
        self.moves: list[str] = []
        self.events: list[dict[str, JSON]] = [self._event()]

    def _event(self) -> dict[str, JSON]:
        over = self._shadow.is_terminal()
        return player_events.event(games.observe(self.spec, self._shadow, self.player),
                                   final_return=self._shadow.returns()[self.player] if over else None)

    def follows(self, state: pyspiel.State, player: int) -> bool:
        """Whether ``state`` continues the game seen so far from ``player``'s seat (else: a new game)."""
        return player == self.player and state.history()[: len(self.ids)] == self.ids

    def sync(self, state: pyspiel.State) -> None:
        """Catches up with ``state``'s history, which must extend the one seen so far (see ``follows``)."""
        history = state.history()
        if history[: len(self.ids)] != self.ids:
            raise AgentError("the real history does not extend the one this tracker followed (a new game?)")
        for a in history[len(self.ids):]:
            self.ids.append(int(a))
            player = self._shadow.current_player()
            text = self._shadow.action_to_string(player, a)
            if player == self.player:
                self.events[-1]["action"] = text
            self.moves.append(text)
            self._shadow.apply_action(a)
            self.events.append(self._event())
