"""A player's information-state key on any engine: the engine's ``information_state_string`` where it has
one, else the player's perfect-recall *trace*, hashed.

The trace is what ``planners.gt_resample`` replays histories against: at every state so far, the player's
role there (to act, waiting, or the game is over) and what it observes (``observation_string``), and its own
action wherever it acted. Two states get the same trace key exactly when the player's traces are equal, so
on an engine with perfect-recall information states the keys split and merge states as the engine's strings
do (tested on Kuhn and Leduc poker). The key is a chain of BLAKE2b digests (128 bits): each step hashes the
previous digest with the player's own action and the next (role, observation), so a key can be extended by
one move without replaying the history (``TraceKeys``) and is the same as the key the replay gives.
"""

from __future__ import annotations

import hashlib
from typing import Any

import numpy as np
import pyspiel

from cwm.files import quiet_stderr

_ACTS, _WAITS, _OVER = 0, 1, 2  # the player's role at a state: to act, waiting (chance or another player), game over


def has_information_states(game: pyspiel.Game) -> bool:
    """Whether the engine's states have ``information_state_string``: asked once per game, quietly, at the
    initial state for player 0 and, if that fails, at the first decision (chance drawn with a fixed seed) for
    the player to act there (some engines have them without saying so in their type; some only where a player
    acts)."""
    name = str(game)
    if name not in _INFORMATION_STATES:
        state, rng = game.new_initial_state(), np.random.default_rng(0)
        with quiet_stderr():  # OpenSpiel prints the error before raising it
            found = _answers(state, 0)
            for _ in range(0 if found else _MAX_CHANCE):
                if not state.is_chance_node():
                    break
                outcomes = state.chance_outcomes()  # drawn, not the first: that may deal the same way forever
                state.apply_action(outcomes[rng.integers(len(outcomes))][0])
            found = found or (not state.is_terminal() and not state.is_chance_node()
                              and _answers(state, state.current_player()))
        _INFORMATION_STATES[name] = found
    return _INFORMATION_STATES[name]


def _answers(state: pyspiel.State, player: int) -> bool:
    try:
        state.information_state_string(player)
    except (pyspiel.SpielError, RuntimeError, NotImplementedError):  # the engine has none
        return False
    return True


_INFORMATION_STATES: dict[str, bool] = {}  # game string -> whether its states have information-state strings
_MAX_CHANCE = 10_000  # chance events replayed to reach the first decision


def keys_problem(game: pyspiel.Game) -> str:
    """Why no information-state key can be made for ``game`` (``""`` when one can): an engine with neither
    information-state strings nor observation strings gives a player nothing to key its trace by."""
    if has_information_states(game) or game.get_type().provides_observation_string:
        return ""
    return (f"{game.get_type().short_name} has neither information-state strings nor observation strings, so "
            f"no player's information state can be keyed")


def info_key(state: pyspiel.State, player: int) -> str:
    """``player``'s information-state key at ``state``: the engine's string, else its trace key (a replay)."""
    if has_information_states(state.get_game()):
        return str(state.information_state_string(player))
    return trace_key(state, player)


def trace_key(state: pyspiel.State, player: int) -> str:
    """``player``'s trace key at ``state``, by replaying the state's history from the initial state."""
    return _replay(state, [player])[0].hex()


def _replay(state: pyspiel.State, players: list[int]) -> list[bytes]:
    """The trace digests of ``players`` at ``state``, from one replay of its history."""
    replay = state.get_game().new_initial_state()
    digests = [_start(replay, p) for p in players]
    for action in state.history():
        mover = replay.current_player()
        replay.apply_action(action)
        digests = [_extend(d, int(action) if mover == p else None, replay, p) for p, d in zip(players, digests)]
    return digests


class TraceKeys:
    """Every player's trace key along one line of play, extended move by move (no replay).

    Args:
      state: where the line starts; its keys come from one replay of its history.
    """

    def __init__(self, state: pyspiel.State):
        self._digests = _replay(state, list(range(state.num_players())))

    def key(self, player: int) -> str:
        """``player``'s key at the current state of the line."""
        return self._digests[player].hex()

    def moved(self, mover: int, action: int, state: pyspiel.State) -> None:
        """Extends every key by ``mover``'s ``action`` (``mover`` may be chance), ``state`` the state after it."""
        self._digests = [_extend(d, action if mover == p else None, state, p) for p, d in enumerate(self._digests)]


def _token(state: pyspiel.State, player: int) -> bytes:
    if state.is_terminal():
        role = _OVER
    else:
        role = _ACTS if state.current_player() == player else _WAITS
    return f"{role}|{state.observation_string(player)}".encode()


def _start(state: pyspiel.State, player: int) -> bytes:
    return hashlib.blake2b(f"player {player}|".encode() + _token(state, player), digest_size=16).digest()


def _extend(digest: bytes, own: int | None, state: pyspiel.State, player: int) -> bytes:
    step = b"-" if own is None else str(own).encode()
    return hashlib.blake2b(digest + b"|" + step + b"|" + _token(state, player), digest_size=16).digest()


class EngineKeys:
    """The engine's own information-state strings, behind the interface ``TraceKeys`` has (``moved`` does
    nothing: the engine keeps its own strings)."""

    def __init__(self, state: Any):
        self._state = state

    def key(self, player: int) -> str:
        return self._state.information_state_string(player)

    def moved(self, mover: int, action: int, state: Any) -> None:
        self._state = state
