"""PPO's environments: many games of one world model stepped together, the learner against random opponents.

``VectorEnv`` holds ``num_envs`` games of anything shaped like ``pyspiel.State`` (a ``ModelState`` of a
code world model, or a real OpenSpiel state). In each game the learner holds one seat (seats rotate game
by game over the game's players, so every seat is trained); chance outcomes are drawn by their
probabilities and the opponents play uniformly at random until it is the learner's turn again. What the
learner sees is its own observation through the encoder, and the legal actions as a mask over the game's
action ids (the codec's).

A step is one learner decision in every game; a finished game starts again at once, and the step
reports the learner's return there (the games here pay only at the end). Numpy only: this module runs
inside the sandbox worker that hosts an untrusted model (``cwm.sandbox.jobs.train``).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable
from typing import Any

import numpy as np

Observe = Callable[[Any, int], Any]  # (state, player) -> the player's observation (JSON)
Encode = Callable[[Any, int], Any]  # (observation, player) -> list of floats


@dataclasses.dataclass(frozen=True)
class EnvStep:
    """What the learner sees after a step of every game.

    Attributes:
      obs: ``[num_envs, obs_size]`` encoded observations at the learner's next decision (of a fresh game
        where one ended).
      mask: ``[num_envs, num_actions]`` legal actions there.
      reward: ``[num_envs]`` the learner's return in games that ended on this step, else 0.
      done: ``[num_envs]`` whether the game ended on this step.
      seat: ``[num_envs]`` the learner's seat in the game that ``obs`` belongs to.
    """

    obs: np.ndarray
    mask: np.ndarray
    reward: np.ndarray
    done: np.ndarray
    seat: np.ndarray

    def to_json(self) -> dict[str, Any]:
        return {"obs": self.obs.tolist(), "mask": self.mask.astype(np.int8).tolist(),
                "reward": self.reward.tolist(), "done": self.done.tolist(), "seat": self.seat.tolist()}

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> EnvStep:
        return cls(np.asarray(data["obs"], np.float32), np.asarray(data["mask"], bool),
                   np.asarray(data["reward"], np.float32), np.asarray(data["done"], bool),
                   np.asarray(data["seat"], np.int32))


class EnvError(ValueError):
    """The encoder or the model gave something the learner cannot use (a wrong length, an action id out of range)."""


class VectorEnv:
    """``num_envs`` games against a uniformly random opponent.

    Args:
      new_state: makes a game's initial state (``model.new_initial_state`` or ``game.new_initial_state``).
      observe: a player's observation of a state.
      encode: the observation encoder.
      num_actions: the game's number of distinct action ids (the mask's width).
      num_envs: games stepped together.
      seed: seeds the chance draws and the opponent (one ``np.random.Generator``).
    """

    def __init__(self, new_state: Callable[[], Any], observe: Observe, encode: Encode, *, num_actions: int,
                 num_envs: int, seed: int):
        self.new_state, self.observe, self.encode = new_state, observe, encode
        self.num_actions, self.num_envs = num_actions, num_envs
        self.rng = np.random.default_rng(seed)
        self.states: list[Any] = [None] * num_envs
        self.players = 2  # the game's number of players, read from a new game at ``reset``
        self.seats = np.arange(num_envs, dtype=np.int32) % self.players
        self.obs_size = 0

    def reset(self) -> EnvStep:
        """Starts every game afresh (seats rotate by game index over the game's players)."""
        self.players = int(self.new_state().num_players())
        self.seats = np.arange(self.num_envs, dtype=np.int32) % self.players
        for i in range(self.num_envs):
            self.states[i] = self._fresh(int(self.seats[i]))
        zeros = np.zeros(self.num_envs, np.float32)
        return self._view(zeros, np.zeros(self.num_envs, bool))

    def step(self, actions: np.ndarray | list[int]) -> EnvStep:
        """Plays the learner's ``actions`` (one id per game), then the others' moves up to its next turn.

        Raises:
          EnvError: an action that is not legal in its game (the learner's mask was not applied).
        """
        reward = np.zeros(self.num_envs, np.float32)
        done = np.zeros(self.num_envs, bool)
        for i, action in enumerate(actions):
            state, seat = self.states[i], int(self.seats[i])
            if int(action) not in state.legal_actions():
                raise EnvError(f"game {i}: the learner's action {int(action)} is not legal")
            state = self._to_learner(state.child(int(action)), seat)
            if state.is_terminal():
                reward[i], done[i] = float(state.returns()[seat]), True
                self.seats[i] = seat = (seat + 1) % self.players  # the next game in the next seat
                state = self._fresh(seat)
            self.states[i] = state
        return self._view(reward, done)

    def _to_learner(self, state: Any, seat: int) -> Any:
        """Chance and the random opponent move until the learner's turn or the end."""
        rng = self.rng
        while not state.is_terminal() and state.current_player() != seat:
            if state.is_chance_node():
                outcomes = state.chance_outcomes()
                probs = np.array([p for _, p in outcomes])
                action = outcomes[rng.choice(len(outcomes), p=probs / probs.sum())][0]
            else:
                legal = state.legal_actions()
                action = legal[rng.integers(len(legal))]
            state = state.child(action)
        return state

    def _fresh(self, seat: int) -> Any:
        state = self._to_learner(self.new_state(), seat)
        if state.is_terminal():
            raise EnvError(f"a new game ended before the learner (seat {seat}) had a move")
        return state

    def _view(self, reward: np.ndarray, done: np.ndarray) -> EnvStep:
        rows, masks = [], np.zeros((self.num_envs, self.num_actions), bool)
        for i, state in enumerate(self.states):
            seat = int(self.seats[i])
            rows.append(self._encoded(state, seat, i))
            legal = state.legal_actions()
            if any(not 0 <= a < self.num_actions for a in legal):
                raise EnvError(f"game {i}: an action id of {legal} is outside the game's {self.num_actions} ids")
            masks[i, legal] = True
        return EnvStep(np.asarray(rows, np.float32), masks, reward, done, self.seats.copy())

    def _encoded(self, state: Any, seat: int, i: int) -> list[float]:
        vector = self.encode(self.observe(state, seat), seat)
        if not isinstance(vector, list) or not all(type(x) in (int, float) for x in vector):
            raise EnvError(f"game {i}: the encoder returned {type(vector).__name__}, not a list of floats")
        self.obs_size = self.obs_size or len(vector)
        if len(vector) != self.obs_size:
            raise EnvError(f"game {i}: the encoder returned {len(vector)} numbers, not {self.obs_size}")
        if not np.all(np.isfinite(vector)):
            raise EnvError(f"game {i}: the encoder returned a number that is not finite")
        return vector


class LocalEnvs:
    """Makes ``VectorEnv`` batches in this process (trusted code: the oracle, a ground-truth game, fixtures).

    Args:
      new_state, observe, encode, num_actions: as ``VectorEnv``'s.
    """

    def __init__(self, new_state: Callable[[], Any], observe: Observe, encode: Encode, *, num_actions: int):
        self.new_state, self.observe, self.encode, self.num_actions = new_state, observe, encode, num_actions

    def make(self, num_envs: int, seed: int) -> VectorEnv:
        return VectorEnv(self.new_state, self.observe, self.encode, num_actions=self.num_actions,
                         num_envs=num_envs, seed=seed)

    @classmethod
    def of_model(cls, model: Any, encode: Encode) -> LocalEnvs:
        """Games of a ``cwm.model.WorldModel`` (its codec gives the action ids)."""
        return cls(model.new_initial_state, lambda state, player: state.observation(player), encode,
                   num_actions=model.codec.num_distinct_actions)

    @classmethod
    def of_game(cls, game: Any, encode: Encode) -> LocalEnvs:
        """Deprecated: ``cwm.ppo.ground_truth_envs(game, encode)`` (the ground truth is the games package's, which
        this module does not import)."""
        import importlib
        import warnings

        warnings.warn("LocalEnvs.of_game is deprecated; use cwm.ppo.ground_truth_envs(game, encode)",
                      DeprecationWarning, stacklevel=2)
        envs: LocalEnvs = importlib.import_module("cwm.ppo.train").ground_truth_envs(game, encode)
        return envs
