"""A player's information-state key on any engine: the engine's ``information_state_string`` where it has
one, else the player's perfect-recall *trace*, hashed.

The trace is what ``planners.gt_resample`` replays histories against: at every state so far, the player's
role there (to act, waiting, or the game is over) and what it observes (``observation_string``), and its own
action wherever it acted. The key counts only the steps the player sees: a move of another player (or of
chance) after which the player's role and observation are what they were is not in the key, as the player
cannot tell it happened (phantom tic-tac-toe's failed tries of the opponent, which the engine's
information states do not count either). Two states get the same trace key exactly when the player's traces,
so reduced, are equal, so on an engine with perfect-recall information states the keys split and merge states
as the engine's strings do (tested on Kuhn and Leduc poker, phantom tic-tac-toe and dark hex). The key is a
chain of BLAKE2b digests (128 bits): each seen step hashes the previous digest with the player's own action
and the next (role, observation), so a key can be extended by one move without replaying the history
(``TraceKeys``) and is the same as the key the replay gives.
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
    return _replay(state, [player])[0][0].hex()


_Chain = tuple[bytes, bytes]  # a player's trace so far: its digest, and its last (role, observation) token


def _replay(state: pyspiel.State, players: list[int]) -> list[_Chain]:
    """The traces of ``players`` at ``state``, from one replay of its history."""
    replay = state.get_game().new_initial_state()
    chains = [_start(replay, p) for p in players]
    for action in state.history():
        mover = replay.current_player()
        replay.apply_action(action)
        chains = [_extend(c, int(action) if mover == p else None, replay, p) for p, c in zip(players, chains)]
    return chains


class TraceKeys:
    """Every player's trace key along one line of play, extended move by move (no replay).

    Args:
      state: where the line starts; its keys come from one replay of its history.
    """

    def __init__(self, state: pyspiel.State):
        self._chains = _replay(state, list(range(state.num_players())))

    def key(self, player: int) -> str:
        """``player``'s key at the current state of the line."""
        return self._chains[player][0].hex()

    def moved(self, mover: int, action: int, state: pyspiel.State) -> None:
        """Extends every key by ``mover``'s ``action`` (``mover`` may be chance), ``state`` the state after it."""
        self._chains = [_extend(c, action if mover == p else None, state, p) for p, c in enumerate(self._chains)]


def _token(state: pyspiel.State, player: int) -> bytes:
    if state.is_terminal():
        role = _OVER
    else:
        role = _ACTS if state.current_player() == player else _WAITS
    return f"{role}|{state.observation_string(player)}".encode()


def _start(state: pyspiel.State, player: int) -> _Chain:
    token = _token(state, player)
    return hashlib.blake2b(f"player {player}|".encode() + token, digest_size=16).digest(), token


def _extend(chain: _Chain, own: int | None, state: pyspiel.State, player: int) -> _Chain:
    """``chain`` after a move (``own``: the player's action, ``None`` for another's) that led to ``state``; a
    move the player did not make and after which it is where it was (same role, same observation) is unseen:
    the chain stays as it was."""
    digest, last = chain
    token = _token(state, player)
    if own is None and token == last:
        return chain
    step = b"-" if own is None else str(own).encode()
    return hashlib.blake2b(digest + b"|" + step + b"|" + token, digest_size=16).digest(), token


class EngineKeys:
    """The engine's own information-state strings, behind the interface ``TraceKeys`` has (``moved`` does
    nothing: the engine keeps its own strings)."""

    def __init__(self, state: Any):
        self._state = state

    def key(self, player: int) -> str:
        return self._state.information_state_string(player)

    def moved(self, mover: int, action: int, state: Any) -> None:
        self._state = state
