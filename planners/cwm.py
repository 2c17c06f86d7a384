"""Planning on a code world model from one seat's view of the real game: the part of the CWM agent that runs
the model (``CWMPlanner``), in a hardened planning worker or, for a trusted model, in process. It never
sees the ground truth: the real game's facts it needs come as data (``GameFacts``).

Perfect information: the real moves are replayed into the model and MCTS searches from the state reached.
Imperfect information: ISMCTS searches over model states drawn by an inference sampler
(``inference_sampler(model, resample_history)`` from a synthesized inference function), at the root view
of one player's own observations and actions (``PlayerView``).
"""

from __future__ import annotations

import dataclasses
import marshal
from collections.abc import Callable
from typing import Any

import numpy as np

from cwm import value_rules
from cwm.model import ModelState, WorldModel
from cwm.types import JSON, AgentError, ModelContractError
from planners.config import DEFAULT_SEARCH, SearchConfig
from planners.ismcts import ISMCTS, Sampler
from planners.mcts import MCTS, ValueFn


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
            self._events_bytes = marshal.dumps(value_rules.thaw(self.events))  # thawed: plain builtins only
        copy: list[dict[str, JSON]] = marshal.loads(self._events_bytes)
        return copy

    def current_player(self) -> int:
        return self.player

    def num_players(self) -> int:
        return self.model.num_players

    def legal_actions(self) -> list[int]:
        return [self.model.codec.to_id(self.player, a) for a in self.legal_strings]

    def information_state_string(self, player: int) -> str:
        """The one encoding ``ModelState.information_state_string`` uses (``cwm.value_rules.InfoKey``), over the
        real game's events: a model state drawn for this view matches it byte for byte."""
        if player != self.player:
            raise ValueError(f"this view holds player {self.player}'s information, not player {player}'s")
        events = ((value_rules.canonical(e["observation"]), e["action"]) for e in self.events)
        return value_rules.InfoKey.of_events(events).hex()


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
    answer = value_rules.history if kind == "history" else value_rules.state
    worlds: dict[tuple[str, ...], ModelState] = {}  # histories of one length: each world holds that many + 1

    def draw(events: list[JSON], player: int, seed: int) -> Any:
        # the answer is checked here, under the model's guard (a generator is refused unrun: nothing of it
        # can run later, outside the time budget)
        return answer(resample(events, player, seed))

    def sample(view: PlayerView, player: int, rng: np.random.Generator) -> ModelState:
        try:
            drawn = model.guard(draw, view.events_copy(), player, int(rng.integers(2**31)))
        except value_rules.ValueBreach as e:
            raise ModelContractError(f"{model.name}: {_NAMES[kind]}: {e}") from None
        if kind == "state":
            state = ModelState.drawn(model, drawn, player, bytes.fromhex(view.information_state_string(player)))
            if not value_rules.same(state.observation(player), value_rules.canonical(view.events[-1]["observation"])):
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
            return self.ismcts.stats()
        return {"searches": self.mcts.searches, "simulations": self.mcts.simulations} if self.mcts is not None else {}
