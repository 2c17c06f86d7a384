"""The agent protocol, its typed errors, and the ground-truth agents: random, GT-MCTS and GT-ISMCTS.

An agent chooses an OpenSpiel action id for the current player of a real (ground-truth) state. The arena
calls ``reset()`` before each match, ``step(state)`` at each of the agent's turns (with a copy of the real
state, which it may keep), ``inform(action)`` after every move of every player and chance, and at the end
``stats()`` and ``log`` (the agent's record of the match) and ``close()``. ``AgentBase`` gives every method
but ``step`` a default; ``as_agent`` adapts an object that has only ``step`` (a user's own agent).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, Protocol, runtime_checkable

import numpy as np
import pyspiel

from cwm.types import JSON, AgentError, IllegalMoveError  # noqa: F401  (the agents' errors, re-exported)
from planners.config import DEFAULT_SEARCH, SearchConfig
from planners.gt_sampler import GroundTruthSampler
from planners.ismcts import ISMCTS, Sampler
from planners.mcts import MCTS, ValueFn
from planners.settings import ISMCTSSettings, MCTSSettings


@runtime_checkable
class Agent(Protocol):
    """What the arena calls on an agent (``AgentBase`` gives defaults for all but ``step``)."""

    @property
    def log(self) -> Sequence[JSON]:
        """The agent's per-move record of the match (JSON), kept in the match's transcript."""
        ...

    def step(self, state: pyspiel.State) -> int:
        """The action id to play at ``state`` (the current player's)."""
        ...

    def reset(self) -> None:
        """A new match begins."""
        ...

    def inform(self, action: int) -> None:
        """``action`` was played (by any player, or chance)."""
        ...

    def stats(self) -> dict[str, Any]:
        """The agent's own record of the match (draws rejected, simulations, ...), kept in its match record."""
        ...

    def close(self) -> None:
        """The match is over: free what the agent holds (a planning worker)."""
        ...


class AgentBase:
    """The defaults of the ``Agent`` protocol: nothing to reset, inform, report, log or close."""

    log: Sequence[JSON] = ()

    def step(self, state: pyspiel.State) -> int:
        raise NotImplementedError

    def reset(self) -> None:
        pass

    def inform(self, action: int) -> None:
        pass

    def stats(self) -> dict[str, Any]:
        return {}

    def close(self) -> None:
        pass


class _Adapted(AgentBase):
    """An object with only ``step`` (and perhaps some other methods of the protocol), as an ``Agent``."""

    def __init__(self, inner: Any):
        self.inner = inner
        self.log = list(getattr(inner, "log", ()) or ())

    def step(self, state: pyspiel.State) -> int:
        return int(self.inner.step(state))

    def reset(self) -> None:
        self._call("reset")

    def inform(self, action: int) -> None:
        self._call("inform", action)

    def stats(self) -> dict[str, Any]:
        found = self._call("stats")
        return dict(found) if isinstance(found, dict) else {}

    def close(self) -> None:
        self._call("close")

    def _call(self, method: str, *args: Any) -> Any:
        fn = getattr(self.inner, method, None)
        return fn(*args) if callable(fn) else None


def as_agent(obj: Any) -> Agent:
    """``obj`` itself when it implements the whole ``Agent`` protocol, else ``obj`` adapted to it (the methods
    it lacks do nothing). The one place the arena looks for optional methods: an object brought by the user."""
    if isinstance(obj, Agent):
        return obj
    if not callable(getattr(obj, "step", None)):
        raise TypeError(f"an agent needs a step(state) method; {type(obj).__name__} has none")
    return _Adapted(obj)


class RandomAgent(AgentBase):
    """Plays a uniformly random legal action.

    Args:
      seed: an int or ``np.random.Generator``; one draw per move.
    """

    def __init__(self, *, seed: int | np.random.Generator | None = None):
        self.rng = np.random.default_rng(seed)

    def step(self, state: pyspiel.State) -> int:
        legal = state.legal_actions()
        return int(legal[self.rng.integers(len(legal))])


class MCTSAgent(AgentBase):
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


class ISMCTSAgent(AgentBase):
    """GT-ISMCTS: information-set MCTS over worlds resampled from the real game's information state.

    Args:
      config: the search settings (the ``planners.SearchConfig`` record, or ``planners.ISMCTSSettings``).
      sampler: draws a world consistent with the acting player's information (default: a fresh
        ``GroundTruthSampler``: the game's world sampler (``planners.worlds``: Hanabi, crazy eights), else the
        engine's ``resample_from_infostate``, else the generic resampler ``planners.gt_resample.HistoryResampler``).
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
