"""Quadranto: 4x4 pursuit where each player sees only the opponent's quadrant (an OpenSpiel Python game).

Rules: ``game_rules/quadranto.md``. Chance places player 0 in the top-left and player 1 in the bottom-right
2x2 quadrant; players alternate (player 0 first) moving Left/Right/Up/Down or Staying; moving onto the
opponent's square catches it (+1 / -1); 20 moves in total without a catch is a draw. Observation and
information-state strings are compact JSON text (cwm's ``json`` view parses them into dicts).
"""

from __future__ import annotations

import functools
import json
from typing import Any

import numpy as np
import pyspiel

SIZE = 4
NUM_SQUARES = SIZE * SIZE
MAX_MOVES = 20
ACTIONS = ("Left", "Right", "Up", "Down", "Stay")
_DELTAS = ((0, -1), (0, 1), (-1, 0), (1, 0), (0, 0))
QUADRANTS = ("top-left", "top-right", "bottom-left", "bottom-right")
START_QUADRANT = (0, 3)  # player 0 starts top-left, player 1 bottom-right
_MAX_STATES = 2 + MAX_MOVES + 1  # two placements, the moves, and the final state

_GAME_TYPE = pyspiel.GameType(
    short_name="quadranto",
    long_name="Quadranto",
    dynamics=pyspiel.GameType.Dynamics.SEQUENTIAL,
    chance_mode=pyspiel.GameType.ChanceMode.EXPLICIT_STOCHASTIC,
    information=pyspiel.GameType.Information.IMPERFECT_INFORMATION,
    utility=pyspiel.GameType.Utility.ZERO_SUM,
    reward_model=pyspiel.GameType.RewardModel.TERMINAL,
    max_num_players=2,
    min_num_players=2,
    provides_information_state_string=True,
    provides_information_state_tensor=True,
    provides_observation_string=True,
    provides_observation_tensor=True,
    parameter_specification={},
)
_GAME_INFO = pyspiel.GameInfo(
    num_distinct_actions=len(ACTIONS),
    max_chance_outcomes=NUM_SQUARES,
    num_players=2,
    min_utility=-1.0,
    max_utility=1.0,
    utility_sum=0.0,
    max_game_length=2 + MAX_MOVES,
)


def square_name(square: int) -> str:
    """``"(row,col)"``, row 0 at the top, col 0 at the left."""
    return f"({square // SIZE},{square % SIZE})"


def quadrant(square: int) -> int:
    """Index into ``QUADRANTS`` of the 2x2 quadrant holding ``square``."""
    return 2 * (square // SIZE // 2) + (square % SIZE) // 2


def quadrant_squares(q: int) -> list[int]:
    return [s for s in range(NUM_SQUARES) if quadrant(s) == q]


_START_SQUARES = tuple(frozenset(quadrant_squares(START_QUADRANT[p])) for p in (0, 1))


def _step(square: int, action: int) -> int | None:
    dr, dc = _DELTAS[action]
    r, c = square // SIZE + dr, square % SIZE + dc
    return r * SIZE + c if 0 <= r < SIZE and 0 <= c < SIZE else None


_STEPS = tuple(tuple(_step(s, a) for a in range(len(ACTIONS))) for s in range(NUM_SQUARES))
_LEGAL = tuple(tuple(a for a in range(len(ACTIONS)) if _STEPS[s][a] is not None) for s in range(NUM_SQUARES))
_ACTION_JSON = tuple(json.dumps(a) for a in ACTIONS)


def step(square: int, action: int) -> int | None:
    """The square reached by ``action`` from ``square``, or None when it would leave the board."""
    return _STEPS[square][action]


def _json(obj: Any) -> str:
    return json.dumps(obj, separators=(",", ":"))


@functools.cache  # at most 17 x 5 x 21 keys; planners ask for the same views often
def _observation_text(mine: int | None, theirs: int | None, moves: int) -> str:
    return _json({
        "my_square": None if mine is None else [mine // SIZE, mine % SIZE],
        "opponent_quadrant": None if theirs is None else QUADRANTS[theirs],
        "moves_made": moves,
    })


class QuadrantoGame(pyspiel.Game):
    """The Quadranto game (no parameters)."""

    def __init__(self, params: dict | None = None):
        super().__init__(_GAME_TYPE, _GAME_INFO, params or {})

    def new_initial_state(self) -> QuadrantoState:
        return QuadrantoState(self)

    def make_py_observer(self, iig_obs_type: Any = None, params: dict | None = None) -> QuadrantoObserver:
        return QuadrantoObserver(iig_obs_type or pyspiel.IIGObservationType(perfect_recall=False), params)


class QuadrantoState(pyspiel.State):
    """Positions, the move count, the winner, and each player's log of (observation, own action).

    A log is the JSON text of its events so far, each followed by a comma (a string, so cloning is cheap).
    """

    def __init__(self, game: QuadrantoGame):
        super().__init__(game)
        self.squares: list[int | None] = [None, None]
        self.moves = 0
        self.winner: int | None = None
        self.logs = ["", ""]

    def current_player(self) -> int:
        if self.is_terminal():
            return pyspiel.PlayerId.TERMINAL
        if self.squares[1] is None:
            return pyspiel.PlayerId.CHANCE
        return self.moves % 2

    def _legal_actions(self, player: int) -> list[int]:
        square = self.squares[player]
        assert square is not None
        return list(_LEGAL[square])

    def chance_outcomes(self) -> list[tuple[int, float]]:
        who = 0 if self.squares[0] is None else 1
        squares = quadrant_squares(START_QUADRANT[who])
        return [(s, 1.0 / len(squares)) for s in squares]

    def _apply_action(self, action: int) -> None:
        player = self.current_player()
        self._check_legal(player, action)
        for p in (0, 1):
            self.logs[p] += f"[{self.observation_json(p)},{_ACTION_JSON[action] if p == player else 'null'}],"
        if player == pyspiel.PlayerId.CHANCE:
            self.squares[0 if self.squares[0] is None else 1] = action
            return
        target = step(self.squares[player], action)  # type: ignore[arg-type]
        self.squares[player] = target
        self.moves += 1
        if target == self.squares[1 - player]:
            self.winner = player

    def _check_legal(self, player: int, action: int) -> None:
        """Raises ValueError unless ``action`` is legal for ``player`` (a placement or a move) here."""
        if player == pyspiel.PlayerId.CHANCE:
            ok = action in _START_SQUARES[0 if self.squares[0] is None else 1]
        else:
            ok = player >= 0 and 0 <= action < len(ACTIONS) and _STEPS[self.squares[player]][action] is not None
        if not ok:
            raise ValueError(f"quadranto: action {action} is not legal for player {player} in state {self}")

    def _action_to_string(self, player: int, action: int) -> str:
        if player == pyspiel.PlayerId.CHANCE:
            return square_name(action)
        return ACTIONS[action]

    def is_terminal(self) -> bool:
        return self.winner is not None or self.moves >= MAX_MOVES

    def returns(self) -> list[float]:
        if self.winner is None:
            return [0.0, 0.0]
        return [1.0, -1.0] if self.winner == 0 else [-1.0, 1.0]

    def observation_dict(self, player: int) -> dict[str, Any]:
        """What ``player`` sees now: its own square, the opponent's quadrant, the number of moves made."""
        mine, theirs = self.squares[player], self.squares[1 - player]
        return {
            "my_square": None if mine is None else [mine // SIZE, mine % SIZE],
            "opponent_quadrant": None if theirs is None else QUADRANTS[quadrant(theirs)],
            "moves_made": self.moves,
        }

    def observation_json(self, player: int) -> str:
        theirs = self.squares[1 - player]
        return _observation_text(self.squares[player], None if theirs is None else quadrant(theirs), self.moves)

    def information_state_json(self, player: int) -> str:
        """Every observation ``player`` had (oldest first, the current one last) and its own actions."""
        # Built from the stored JSON texts (no re-parsing): the same text as dumping the parsed events.
        return f'{{"player":{player},"events":[{self.logs[player]}[{self.observation_json(player)},null]]}}'

    def __str__(self) -> str:
        return _json({
            "squares": [None if s is None else [s // SIZE, s % SIZE] for s in self.squares],
            "moves_made": self.moves,
            "winner": self.winner,
        })

    def resample_from_infostate(self, player_id: int, probability_sampler: Any) -> QuadrantoState:
        """A state with the same information state for ``player_id``: the opponent's path is redrawn.

        The opponent's squares are filtered forward through what the player saw (quadrant after every
        step, never on the player's square unless a catch ended the game), then a path is drawn backwards;
        ``probability_sampler()`` (floats in [0, 1)) supplies the randomness. The draw has the right
        support (every consistent path can come out), not the exact posterior of any opponent policy.
        """
        history = resample_history([int(a) for a in self.history()], player_id, lambda: float(probability_sampler()))
        state = self.get_game().new_initial_state()
        for action in history:
            state.apply_action(action)
        return state


class QuadrantoObserver:
    """Observation (``perfect_recall=False``) or information state (``True``): JSON strings and tensors.

    Tensor per state: own square one-hot (16), opponent quadrant one-hot (4), moves made (1, scaled by
    1/20); the information-state tensor stacks it for every state so far plus own action one-hots (5).
    """

    def __init__(self, iig_obs_type: Any, params: dict | None):
        if params:
            raise ValueError(f"quadranto observer: no parameters are supported, got {params}")
        self.perfect_recall = bool(iig_obs_type.perfect_recall)
        frame = NUM_SQUARES + len(QUADRANTS) + 1
        shape = (_MAX_STATES, frame + len(ACTIONS)) if self.perfect_recall else (frame,)
        self.tensor = np.zeros(int(np.prod(shape)), np.float32)
        self.dict = {"info_state" if self.perfect_recall else "observation": self.tensor.reshape(shape)}

    def set_from(self, state: QuadrantoState, player: int) -> None:
        self.tensor.fill(0)
        if not self.perfect_recall:
            _encode(self.tensor, json.loads(state.observation_json(player)))
            return
        rows = next(iter(self.dict.values()))
        events = json.loads(state.information_state_json(player))["events"]
        for row, (obs, action) in zip(rows, events):
            _encode(row, obs)
            if action is not None:
                row[NUM_SQUARES + len(QUADRANTS) + 1 + ACTIONS.index(action)] = 1

    def string_from(self, state: QuadrantoState, player: int) -> str:
        if self.perfect_recall:
            return state.information_state_json(player)
        return state.observation_json(player)


def _replay(actions: list[int]) -> list[tuple[int, int, int | None, int | None, int | None]]:
    """(mover, action, square of player 0, square of player 1, winner) after each step of ``actions``."""
    squares: list[int | None] = [None, None]
    out = []
    for i, action in enumerate(actions):
        if i < 2:
            mover = pyspiel.PlayerId.CHANCE
            squares[i] = action
        else:
            mover = (i - 2) % 2
            squares[mover] = step(squares[mover], action)  # type: ignore[arg-type]
        winner = mover if mover >= 0 and squares[0] == squares[1] else None
        out.append((mover, action, squares[0], squares[1], winner))
    return out


def resample_history(actions: list[int], player: int, uniform: Any) -> list[int]:
    """An action history that gives ``player`` the same observations and own actions as ``actions``.

    Forward: the set of squares the opponent can be on after each step, given the player's view.
    Backward: a path drawn through those sets with ``uniform()`` (floats in [0, 1)).
    """
    opp = 1 - player
    steps = _replay(actions)
    sets: list[list[int]] = []
    for i, (mover, _, *squares, winner) in enumerate(steps):
        mine, theirs = squares[player], squares[opp]
        if theirs is None:
            sets.append([])
            continue
        if i == opp:  # the opponent's placement
            cands = quadrant_squares(START_QUADRANT[opp])
        elif mover == opp:
            cands = sorted({t for s in sets[-1] for a in range(len(ACTIONS)) if (t := step(s, a)) is not None})
        else:
            cands = list(sets[-1])
        caught = winner is not None
        sets.append([s for s in cands if quadrant(s) == quadrant(theirs) and (s == mine) == caught])
    out = list(actions)
    target = _pick(sets[-1], uniform) if sets and sets[-1] else None
    for i in range(len(steps) - 1, opp - 1, -1):  # back to the opponent's placement
        if i == opp:
            out[i] = target  # type: ignore[assignment]
        elif steps[i][0] == opp:
            choices = [(s, a) for s in sets[i - 1] for a in range(len(ACTIONS)) if step(s, a) == target]
            target, out[i] = _pick(choices, uniform)
    return out


def _pick(items: list, uniform: Any) -> Any:
    return items[min(int(uniform() * len(items)), len(items) - 1)]


def _encode(row: np.ndarray, obs: dict[str, Any]) -> None:
    if obs["my_square"] is not None:
        r, c = obs["my_square"]
        row[r * SIZE + c] = 1
    if obs["opponent_quadrant"] is not None:
        row[NUM_SQUARES + QUADRANTS.index(obs["opponent_quadrant"])] = 1
    row[NUM_SQUARES + len(QUADRANTS)] = obs["moves_made"] / MAX_MOVES


pyspiel.register_game(_GAME_TYPE, QuadrantoGame)
