"""The agent that plays a selection (``cwm-selected:SELECTION_DIR``): one of the bundles that survived sample
rejection (``cwm.selection``), picked at random per match, seeded by the match's seed.

The pick is made when the agent is built (the arena builds one agent per match from the match seed) and
recorded in its ``stats()`` (``selected_bundle``, copied into the match record). The bundle is verified and
its worker started at the first move, like a ``cwm:`` agent's (a bundle that changed since the selection,
or fails its verification, forfeits the match with the reason).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np

from cwm import games
from cwm.agents.base import Agent, AgentError


class SelectedAgent:
    """A CWM agent on one surviving bundle of a selection, drawn uniformly with ``seed``.

    Args:
      folder: the selection folder (its ``selection.json``).
      game: the real game (it must be the selection's).
      settings: the arena's settings (``cwm.agents.specs.Settings``), passed to the ``cwm:`` agent built.
      seed: an int or generator; one draw picks the bundle, the rest seeds the agent.
      move_time_s: CPU seconds per move of the agent's worker (``None``: the worker's default).

    Raises:
      SelectionError: the folder holds no readable selection of this game with a survivor.
    """

    def __init__(self, folder: str | Path, game: str | games.GameSpec, *, settings: Any,
                 seed: int | np.random.Generator | None = None, move_time_s: float | None = None):
        from cwm.selection.report import read_survivors

        self.spec = games.resolve(game)
        survivors = read_survivors(folder, self.spec.name)
        self.rng = np.random.default_rng(seed)
        self.pick = survivors[int(self.rng.integers(len(survivors)))]
        self.settings, self.move_time_s = settings, move_time_s
        self._agent: Agent | None = None

    def _built(self) -> Agent:
        if self._agent is None:
            from cwm.agents.specs import AgentSpec, make_agent
            from cwm.arena.identity import agent_fingerprint

            spec = AgentSpec("cwm", self.pick.path)
            if agent_fingerprint(spec) != self.pick.fingerprint:
                raise AgentError(f"selected bundle {self.pick.label} ({self.pick.path}) is not the bundle that was "
                                 f"selected: its manifest changed or is gone")
            try:
                self._agent = make_agent(spec, self.spec, settings=self.settings, seed=self.rng,
                                         move_time_s=self.move_time_s)
            except AgentError:
                raise
            except Exception as e:  # a bundle that does not verify loses its match, like a cwm: agent's
                raise AgentError(f"selected bundle {self.pick.label} could not be built: {type(e).__name__}: {e}") from e
        return self._agent

    def reset(self) -> None:
        reset = getattr(self._built(), "reset", None)
        if callable(reset):
            reset()

    def step(self, state: Any) -> int:
        return int(self._built().step(state))

    def stats(self) -> dict[str, Any]:
        """The picked bundle (``selected_bundle``, ``selected_path``) and the built agent's own record."""
        inner = getattr(self._agent, "stats", None)
        own = inner() if callable(inner) else {}
        return {"selected_bundle": self.pick.label, "selected_path": self.pick.path} | dict(own)

    def close(self) -> None:
        close = getattr(self._agent, "close", None)
        if callable(close):
            close()
