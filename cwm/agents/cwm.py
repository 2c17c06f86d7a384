"""The CWM agent: plans on its own world model, acts in the real game by action string.

Perfect information: the real game's action strings are replayed into the model, so the model state
follows the real history, and MCTS searches from it. Imperfect information: the agent knows only its
own observations and actions (``HistoryTracker``); ISMCTS searches over model states drawn by an
inference sampler, e.g. ``inference_sampler(model, resample_history)`` from a synthesized bundle. The
planning itself is ``planners.cwm.CWMPlanner``; this module holds the trusted half that reads the real game.
"""

from __future__ import annotations

import numpy as np
import pyspiel

from cwm import games
from cwm.agents.base import AgentBase
from cwm.games.tracker import HistoryTracker
from cwm.model import WorldModel
from cwm.types import CHANCE, AgentError, IllegalMoveError, ModelContractError
from planners.config import DEFAULT_SEARCH, SearchConfig
from planners.cwm import WORLD_CACHE_STATES, CWMPlanner, GameFacts, PlayerView, inference_sampler
from planners.ismcts import ISMCTS, Sampler
from planners.mcts import MCTS, ValueFn


def game_facts(game: games.GameSpec) -> GameFacts:
    """The facts a CWM planner needs of the real game ``game`` (``GameFacts``), from its ground truth."""
    gt = games.load_game(game)
    return GameFacts(game.perfect_information, float(gt.max_utility()), int(gt.max_game_length()))


class CWMAgent(AgentBase):
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
        self.planner = CWMPlanner(model, game_facts(self.spec), config, sampler=sampler, value_fn=value_fn,
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


__all__ = ["WORLD_CACHE_STATES", "CWMAgent", "CWMPlanner", "GameFacts", "HistoryTracker", "PlayerView",
           "game_facts", "inference_sampler", "real_action"]
