"""The records of the arena: one match to play (``MatchJob``), how one game ended (``MatchOutcome``) and one
finished match (``MatchResult``).

Both are re-exported from ``cwm.arena``; they live here so that the report and other readers of
``matches.jsonl`` need not import the match machinery.
"""

from __future__ import annotations

import dataclasses
from typing import NamedTuple

from cwm.types import JSON
from planners.specs import Settings


class MatchOutcome(NamedTuple):
    """How one game ended: each seat's return, and who forfeited (``None``), how and why."""

    returns: list[float]
    forfeit_seat: int | None
    forfeit_kind: str
    reason: str
    moves: int


@dataclasses.dataclass(frozen=True)
class MatchResult:
    """One finished match.

    Attributes:
      key: unique id within the tournament, ``"<seat0>|<seat1>#<index>"``.
      seats: the agent label in each seat.
      seed: the match seed (chance and agents' seeds derive from it).
      returns: each seat's score; a forfeiting seat gets the game's minimum utility, the others its maximum.
      forfeit_seat: the seat that forfeited, or ``None``.
      forfeit_kind: ``illegal``, ``exception`` or ``timeout`` (empty when nobody forfeited).
      reason: why the match was forfeited (the agent's error message).
      moves: decisions and chance outcomes applied.
      duration_s: wall time of the match.
      logs: per seat, an agent's attempt log when it keeps one (the LLM policy), else empty.
    """

    key: str
    seats: tuple[str, ...]
    seed: int
    returns: tuple[float, ...]
    forfeit_seat: int | None = None
    forfeit_kind: str = ""
    reason: str = ""
    moves: int = 0
    duration_s: float = 0.0
    logs: tuple[JSON, ...] = ()

    def to_json(self) -> dict[str, JSON]:
        return dataclasses.asdict(self)

    @classmethod
    def from_json(cls, data: dict[str, JSON]) -> MatchResult:
        fields = {f.name for f in dataclasses.fields(cls)}
        values = {k: v for k, v in data.items() if k in fields}
        values["seats"] = tuple(values["seats"])
        values["returns"] = tuple(float(r) for r in values["returns"])
        values["logs"] = tuple(values.get("logs", ()))
        return cls(**values)


@dataclasses.dataclass(frozen=True)
class MatchJob:
    """Everything a worker needs to play one match: picklable specs, no live objects."""

    game: str
    key: str
    seats: tuple[str, ...]  # agent labels (the spec strings as given)
    seed: int
    settings: Settings
    move_time_limit: float | None = None
    log_dir: str | None = None
    builds: tuple[str, ...] = ()  # the specs to build, with paths made absolute (default: the labels)
