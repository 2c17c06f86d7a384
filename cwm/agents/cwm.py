"""The CWM agent: plans on its own world model, acts in the real game by action string.

Perfect information: the real game's action strings are replayed into the model, so the model state
follows the real history, and MCTS searches from it. Imperfect information: the agent knows only its
own observations and actions (``HistoryTracker``); ISMCTS searches over model states drawn by an
inference sampler, e.g. ``inference_sampler(model, resample_history)`` from a synthesized bundle.
"""

from __future__ import annotations

import dataclasses
import marshal
from collections.abc import Callable
from typing import Any

import numpy as np
import pyspiel

from cwm import events as player_events
from cwm import games, values
from cwm.agents.base import AgentError, IllegalMoveError, search_stats
from cwm.model import ModelState, WorldModel
from cwm.types import CHANCE, JSON, ModelContractError
from planners.config import DEFAULT_SEARCH, SearchConfig
from planners.ismcts import ISMCTS, Sampler
from planners.mcts import MCTS, ValueFn


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


class PlayerView:
    """One player's information state in model terms: what ISMCTS and the sampler see at the root."""

    def __init__(self, model: WorldModel, events: list[dict[str, JSON]], player: int, legal: list[str]):
        self.model = model
        self.events = events
        self.player = player
        self.legal_strings = legal
        self._events_bytes: bytes | None = None

    def events_copy(self) -> list[dict[str, JSON]]:
        """A fresh, writable deep copy of the events: what an inference function is given, so that nothing it
        does reaches the agent's own record. Copied from their ``marshal`` bytes, written once per view (a
        C round trip of plain builtins, several times faster than a copy walked in Python)."""
        if self._events_bytes is None:
            self._events_bytes = marshal.dumps(values.thaw(self.events))  # thawed: plain builtins only
        copy: list[dict[str, JSON]] = marshal.loads(self._events_bytes)
        return copy

    def current_player(self) -> int:
        return self.player

    def num_players(self) -> int:
        return self.model.num_players

    def legal_actions(self) -> list[int]:
        return [self.model.codec.to_id(self.player, a) for a in self.legal_strings]

    def information_state_string(self, player: int) -> str:
        """The one encoding ``ModelState.information_state_string`` uses (``cwm.values.InfoKey``), over the
        real game's events: a model state drawn for this view matches it byte for byte."""
        if player != self.player:
            raise ValueError(f"this view holds player {self.player}'s information, not player {player}'s")
        events = ((values.canonical(e["observation"]), e["action"]) for e in self.events)
        return values.InfoKey.of_events(events).hex()


# Model states an inference sampler keeps by the history that reached them, counted with the states each one's
# history holds (a kept state keeps its parents): a gin rummy world of 100 moves is 100 states of a few KB.
WORLD_CACHE_STATES = 20_000


def inference_sampler(model: WorldModel, resample: Callable[..., Any], kind: str = "history") -> Sampler:
    """A sampler from a synthesized inference function: ``resample_history`` (``kind="history"``), whose
    history is replayed in the model, or the hidden-state variant ``resample_state`` (``kind="state"``),
    whose state stands for the player's information set as it is (``ModelState.drawn``).

    Each draw passes one integer seed from the search's generator to the function, with a fresh copy of the
    view's events (the function may write on it). The model state a history reaches is kept while the player
    is at the same point of the game (its histories have one length) and the kept states, their parents
    counted, number at most ``WORLD_CACHE_STATES``: a history drawn again is the same state, not replayed
    again (states are read-only and deterministic given their history, so sharing one changes no result).
    """
    answer = values.history if kind == "history" else values.state
    worlds: dict[tuple[str, ...], ModelState] = {}  # histories of one length: each world holds that many + 1

    def draw(events: list[JSON], player: int, seed: int) -> Any:
        # the answer is checked here, under the model's guard (a generator is refused unrun: nothing of it
        # can run later, outside the time budget)
        return answer(resample(events, player, seed))

    def sample(view: PlayerView, player: int, rng: np.random.Generator) -> ModelState:
        try:
            drawn = model.guard(draw, view.events_copy(), player, int(rng.integers(2**31)))
        except values.ValueBreach as e:
            raise ModelContractError(f"{model.name}: {_NAMES[kind]}: {e}") from None
        if kind == "state":
            state = ModelState.drawn(model, drawn, player, bytes.fromhex(view.information_state_string(player)))
            if not values.same(state.observation(player), values.canonical(view.events[-1]["observation"])):
                raise ModelContractError(f"{model.name}: resample_state drew a state where player {player} does "
                                         f"not see its latest observation")
            return state
        key = tuple(drawn)
        known = worlds.get(key)
        if known is not None:
            return known
        state = model.new_initial_state()
        for action in drawn:
            state = state.child_from_string(action)
        if worlds and (len(next(iter(worlds))) != len(key) or (len(worlds) + 1) * (len(key) + 1) > WORLD_CACHE_STATES):
            worlds.clear()  # a later move (it can never draw the earlier histories again), or the cache is full
        worlds[key] = state
        return state

    return sample


_NAMES = {"history": "resample_history", "state": "resample_state"}


@dataclasses.dataclass(frozen=True)
class GameFacts:
    """What a CWM planner needs to know of the real game that its model's states cannot say: facts of the
    rules, taken from the ground truth on the trusted side (a planning worker has no ground truth)."""

    perfect_information: bool
    max_utility: float
    max_game_length: int

    @classmethod
    def of(cls, game: str | games.GameSpec) -> GameFacts:
        spec = games.resolve(game)
        gt = games.load_game(spec)
        return cls(spec.perfect_information, float(gt.max_utility()), int(gt.max_game_length()))

    def to_json(self) -> dict[str, JSON]:
        return dataclasses.asdict(self)

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> GameFacts:
        return cls(bool(data["perfect_information"]), float(data["max_utility"]), int(data["max_game_length"]))


class CWMPlanner:
    """Plans on a world model from one seat's view of the real game: JSON in, an action string out.

    This is the part of the CWM agent that runs the model (in a hardened planning worker, or in-process
    for a trusted model); it never sees the ground truth. Perfect information: the real moves are
    replayed into the model and MCTS searches from the state reached. Imperfect information: ISMCTS
    searches over model states the sampler draws for the seat's own observations and actions.

    Args:
      model: the world model (its codec maps strings to the real game's ids).
      facts: the real game's facts (``GameFacts``).
      config: the search settings.
      sampler: the inference sampler (imperfect information; without one ``plan`` refuses).
      value_fn: optional leaf evaluator on model states.
      seed: the search's seed (default ``config.seed``).
    """

    def __init__(self, model: WorldModel, facts: GameFacts, config: SearchConfig = DEFAULT_SEARCH, *,
                 sampler: Sampler | None = None, value_fn: ValueFn | None = None,
                 seed: int | np.random.Generator | None = None):
        self.model = model
        self.facts = facts
        self.sampler = sampler
        common: dict[str, Any] = dict(value_fn=value_fn, max_game_length=facts.max_game_length, seed=seed)
        self.mcts: MCTS | None = None
        self.ismcts: ISMCTS | None = None
        if facts.perfect_information:
            # The solver may prove a node from one winning child when it knows the best possible return.
            self.mcts = MCTS(config, max_utility=facts.max_utility, **common)
        elif sampler is not None:
            self.ismcts = ISMCTS(config, sampler=sampler, **common)
        self.reset()

    def reset(self) -> None:
        self._state: ModelState | None = None
        self._replayed = 0

    def plan(self, player: int, legal: list[str], *, moves: list[str], events: list[dict[str, JSON]]) -> str:
        """The action string to play: ``moves`` are all real moves so far (perfect information; they must
        extend the ones given before, or ``reset`` first), ``events`` the seat's own observations and
        actions, ``legal`` the real game's legal strings now.

        Raises:
          AgentError: the model cannot follow the real game, or there is no sampler for hidden information.
          ModelContractError: the model broke the contract while planning.
        """
        if self.mcts is not None:
            return self._plan_perfect(player, moves)
        if self.ismcts is None:
            raise AgentError("the game has imperfect information: the CWM agent needs an inference sampler "
                             "(a bundle with inference.py, or planners.inference_sampler(model, resample_history))")
        view = PlayerView(self.model, events, player, legal)
        action = self.ismcts.search(view).action
        # decode by this decision's own legal strings (strings may depend on the state, as in backgammon)
        by_id = {self.model.codec.to_id(player, s): s for s in legal}
        return by_id[action] if action in by_id else self.model.codec.to_string(player, action)

    def _plan_perfect(self, player: int, moves: list[str]) -> str:
        assert self.mcts is not None
        if self._state is None or self._replayed > len(moves):
            self._state, self._replayed = self.model.new_initial_state(), 0
        for i in range(self._replayed, len(moves)):
            try:
                self._state = self._state.child_from_string(moves[i])
            except ModelContractError as e:
                raise AgentError(f"world model {self.model.name} rejects real move {i} {moves[i]!r}: {e}") from e
        self._replayed = len(moves)
        if self._state.current_player() != player:
            raise AgentError(f"world model {self.model.name} says player {self._state.current_player()} acts "
                             f"after {moves[-5:]}; the real game says player {player}")
        action = self.mcts.search(self._state).action
        return self._state.action_to_string(player, action)

    def stats(self) -> dict[str, int]:
        """The search record of the match: the simulations actually run (fewer than asked where the solver
        proved a root or the sampler gave up); with imperfect information also the sampling record (draws
        accepted and rejected, moves that fell back)."""
        if self.ismcts is not None:
            return search_stats(self.ismcts)
        return {"searches": self.mcts.searches, "simulations": self.mcts.simulations} if self.mcts is not None else {}


class CWMAgent:
    """Plans on a world model in this process; plays the real game (for models you trust: LLM-written code
    is normally planned on in a hardened worker, ``cwm.agents.worker``).

    Args:
      model: the agent's world model (its codec maps strings to the real game's ids).
      game: the real game (registry name, game string or spec): used for observations and action strings.
      config: the search settings.
      sampler: the inference sampler for imperfect-information games (required there).
      value_fn: optional leaf evaluator ``(state, player) -> float`` on model states.
      seed: the search's seed (default ``config.seed``).

    Raises (from ``step``):
      AgentError: the model cannot follow the real game (it rejects a real move or disagrees on whose turn
        it is), or no sampler was given for an imperfect-information game.
      IllegalMoveError: the model's chosen move is not legal in the real game.
    """

    def __init__(self, model: WorldModel, game: str | games.GameSpec, config: SearchConfig = DEFAULT_SEARCH, *,
                 sampler: Sampler | None = None, value_fn: ValueFn | None = None,
                 seed: int | np.random.Generator | None = None):
        self.model = model
        self.spec = games.resolve(game)
        self.planner = CWMPlanner(model, GameFacts.of(self.spec), config, sampler=sampler, value_fn=value_fn,
                                  seed=seed)
        self.reset()

    @property
    def mcts(self) -> MCTS | None:
        return self.planner.mcts

    @property
    def ismcts(self) -> ISMCTS | None:
        return self.planner.ismcts

    def reset(self) -> None:
        self._tracker: HistoryTracker | None = None
        self.planner.reset()

    def step(self, state: pyspiel.State) -> int:
        player = state.current_player()
        if self._tracker is None or not self._tracker.follows(state, player):
            self._tracker = HistoryTracker(self.spec, player)  # a new game (or seat): start over
            self.planner.reset()
        self._tracker.sync(state)
        legal = [state.action_to_string(player, a) for a in state.legal_actions()]
        try:
            chosen = self.planner.plan(player, legal, moves=self._tracker.moves, events=self._tracker.events)
        except ModelContractError as e:
            raise AgentError(f"world model {self.model.name} failed: {e}") from e
        return real_action(state, player, chosen, self.model.name)

    def stats(self) -> dict[str, int]:
        return self.planner.stats()


def real_action(state: pyspiel.State, player: int, chosen: str, name: str) -> int:
    """The real game's id of the action string an agent chose, or ``IllegalMoveError`` when it is not legal."""
    if player == CHANCE:
        raise AgentError("an agent was asked to move at a chance node")
    legal = {state.action_to_string(player, a): int(a) for a in state.legal_actions()}
    if chosen not in legal:
        raise IllegalMoveError(f"world model {name} chose {chosen!r}, which is not legal in the real game; "
                               f"legal: {sorted(legal)[:20]}")
    return legal[chosen]
