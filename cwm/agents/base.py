"""The agent protocol, its typed errors, and the ground-truth agents: random, GT-MCTS and GT-ISMCTS.

An agent chooses an OpenSpiel action id for the current player of a real (ground-truth) state. The arena
calls ``reset()`` before each match (when defined) and ``inform(action)`` after every move of every
player and chance (when defined); ``step`` receives a copy of the real state, which it may keep.
"""

from __future__ import annotations

from typing import Any, Protocol, runtime_checkable

import numpy as np
import pyspiel

from cwm.types import AgentError, IllegalMoveError  # noqa: F401  (the agents' errors, re-exported)
from planners.config import DEFAULT_SEARCH, SearchConfig
from planners.gt_sampler import GroundTruthSampler
from planners.ismcts import ISMCTS, Sampler
from planners.mcts import MCTS, ValueFn
from planners.settings import ISMCTSSettings, MCTSSettings


@runtime_checkable
class Agent(Protocol):
    """Anything that picks an action id at a real game state (``reset`` and ``inform`` are optional)."""

    def step(self, state: pyspiel.State) -> int: ...


class RandomAgent:
    """Plays a uniformly random legal action.

    Args:
      seed: an int or ``np.random.Generator``; one draw per move.
    """

    def __init__(self, *, seed: int | np.random.Generator | None = None):
        self.rng = np.random.default_rng(seed)

    def step(self, state: pyspiel.State) -> int:
        legal = state.legal_actions()
        return int(legal[self.rng.integers(len(legal))])


class MCTSAgent:
    """GT-MCTS: UCT search on the real game's own states (perfect-information games).

    Args:
      config: the search settings (the ``planners.SearchConfig`` record, or ``planners.MCTSSettings``).
      value_fn, seed: as in ``planners.MCTS``.
    """

    def __init__(self, config: SearchConfig | MCTSSettings = DEFAULT_SEARCH, *, value_fn: ValueFn | None = None,
                 seed: int | np.random.Generator | None = None):
        self.search = MCTS(config, value_fn=value_fn, seed=seed)

    def step(self, state: Any) -> int:
        return self.search.step(state)


class ISMCTSAgent:
    """GT-ISMCTS: information-set MCTS over worlds resampled from the real game's information state.

    Args:
      config: the search settings (the ``planners.SearchConfig`` record, or ``planners.ISMCTSSettings``).
      sampler: draws a world consistent with the acting player's information (default: a fresh
        ``GroundTruthSampler``: the engine's ``resample_from_infostate``, or, in a game whose engine has none,
        the generic resampler ``planners.gt_resample.HistoryResampler``).
      value_fn, seed: as in ``planners.ISMCTS``.
    """

    def __init__(self, config: SearchConfig | ISMCTSSettings = DEFAULT_SEARCH, *, sampler: Sampler | None = None,
                 value_fn: ValueFn | None = None, seed: int | np.random.Generator | None = None):
        self.sampler = GroundTruthSampler() if sampler is None else sampler
        self.search = ISMCTS(config, value_fn=value_fn, sampler=self.sampler, seed=seed)

    @property
    def fallbacks(self) -> int:
        """Moves chosen by the random fallback (no consistent world drawn)."""
        return self.search.fallbacks

    def step(self, state: Any) -> int:
        return self.search.search(state).action

    def stats(self) -> dict[str, Any]:
        """This agent's sampling record over its life: draws accepted and rejected, moves that fell back, and
        (with a ``GroundTruthSampler``) how the draws were made."""
        own = getattr(self.sampler, "stats", None)
        return {**self.search.stats(), **(own() if callable(own) else {})}
