"""The agent that plays a selection (``cwm-selected:SELECTION_DIR``): one of the bundles that survived sample
rejection (``cwm.selection``), picked at random per match, seeded by the match's seed.

The pick is made when the agent is built (the arena builds one agent per match from the match seed) and
recorded in its ``stats()`` (``selected_bundle``, copied into the match record). The bundle is verified and
its worker started at the first move, like a ``cwm:`` agent's (a bundle that changed since the selection,
or fails its verification, forfeits the match with the reason).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np

from cwm import games
from cwm.agents.base import Agent, AgentBase, AgentError
from cwm.agents.fingerprint import agent_fingerprint, former_fingerprint
from cwm.agents.grammar import AgentSpec
from cwm.files import RUN_FILE_BYTES, loads_bounded, read_bounded
from cwm.types import CwmError

SELECTION_FILE = "selection.json"  # a selection's result, written by cwm.selection and read here
Build = Callable[[AgentSpec, np.random.Generator], Agent]  # a picked bundle's ``cwm:`` spec -> its agent


class SelectionError(CwmError, ValueError):
    """A selection that cannot run as asked (bad numbers, a bundle that does not fit, an output folder of
    another selection), or a selection file that cannot be read."""


@dataclasses.dataclass(frozen=True)
class Candidate:
    """One synthesized bundle taking part: its label in keys and reports, its folder and its fingerprint
    (``cwm.agents.fingerprint.agent_fingerprint``: the hash of its files' hashes)."""

    label: str
    path: str
    fingerprint: str


def read_survivors(folder: str | Path, game: str | None = None) -> list[Candidate]:
    """The surviving bundles of a selection folder, as its ``selection.json`` lists them.

    Args:
      game: the game the selection must be of (its canonical name), or ``None`` to accept any.

    Raises:
      SelectionError: no readable ``selection.json``, a field missing or of the wrong type, another game, or
        no survivor; the message names the file and the field.
    """
    path = Path(folder) / SELECTION_FILE
    try:
        data = loads_bounded(read_bounded(path, RUN_FILE_BYTES, what="selection file"), where=str(path))
    except (OSError, UnicodeDecodeError, ValueError, RecursionError) as e:
        raise SelectionError(f"{path}: not a readable selection file ({type(e).__name__}: {e})") from None
    agents = data.get("agents") if isinstance(data, dict) else None
    if not isinstance(agents, list) or not all(isinstance(a, dict) for a in agents):
        raise SelectionError(f"{path}: field 'agents' is missing or not a list of objects")
    if game is not None and data.get("game") != game:
        raise SelectionError(f"{path}: a selection of {data.get('game')!r}, not of {game!r}")
    found = [_candidate(path, a) for a in agents if a.get("survived") is True]
    if not found:
        raise SelectionError(f"{path}: no agent survived the selection")
    return found


def _candidate(path: Path, entry: dict[str, Any]) -> Candidate:
    for name in ("label", "path", "fingerprint"):
        if type(entry.get(name)) is not str:
            raise SelectionError(f"{path}: an agent's field {name!r} is missing or not a string")
    return Candidate(entry["label"], entry["path"], entry["fingerprint"])


class SelectedAgent(AgentBase):
    """A CWM agent on one surviving bundle of a selection, drawn uniformly with ``seed``.

    Args:
      folder: the selection folder (its ``selection.json``).
      game: the real game (it must be the selection's).
      build: builds the ``cwm:`` agent of the picked bundle from its spec and a generator (the agent factory,
        ``cwm.agents.make_agent`` with the arena's settings, passes one).
      seed: an int or generator; one draw picks the bundle, the rest seeds the agent.

    Raises:
      SelectionError: the folder holds no readable selection of this game with a survivor.
    """

    def __init__(self, folder: str | Path, game: games.GameSpec, *, build: Build,
                 seed: int | np.random.Generator | None = None):
        self.spec = game
        survivors = read_survivors(folder, self.spec.name)
        self.rng = np.random.default_rng(seed)
        self.pick = survivors[int(self.rng.integers(len(survivors)))]
        self.build = build
        self._agent: Agent | None = None

    def _built(self) -> Agent:
        if self._agent is None:
            spec = AgentSpec("cwm", self.pick.path)
            # a selection written before fingerprints were content only recorded the manifest's hash
            if self.pick.fingerprint not in (agent_fingerprint(spec), former_fingerprint(spec)):
                raise AgentError(f"selected bundle {self.pick.label} ({self.pick.path}) is not the bundle that was "
                                 f"selected: its manifest changed or is gone")
            try:
                self._agent = self.build(spec, self.rng)
            except AgentError:
                raise
            except Exception as e:  # a bundle that does not verify loses its match, like a cwm: agent's
                raise AgentError(f"selected bundle {self.pick.label} could not be built: {type(e).__name__}: {e}") from e
        return self._agent

    def reset(self) -> None:
        self._built().reset()

    def step(self, state: Any) -> int:
        return int(self._built().step(state))

    def stats(self) -> dict[str, Any]:
        """The picked bundle (``selected_bundle``, ``selected_path``) and the built agent's own record."""
        own = self._agent.stats() if self._agent is not None else {}
        return {"selected_bundle": self.pick.label, "selected_path": self.pick.path} | dict(own)

    def close(self) -> None:
        if self._agent is not None:
            self._agent.close()
