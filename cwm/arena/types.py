"""The records of the arena: one match to play (``MatchJob``), how one game ended (``MatchOutcome``) and one
finished match (``MatchResult``).

All are importable from ``cwm.arena``; they live here so that the report and other readers of
``matches.jsonl`` need not import the match machinery.
"""

from __future__ import annotations

import dataclasses
import math
import numbers
from typing import NamedTuple

from cwm.agents.specs import Settings
from cwm.text import clean, clean_json
from cwm.types import JSON

# How a match can be forfeited: an illegal move, an exception (a contract breach, an agent's error), a move
# over its time budget, or a planning worker that died (a signal, the memory limit, a crash at start).
FORFEIT_KINDS = ("illegal", "exception", "timeout", "crash")

REASON_LIMIT = 2000  # characters of a forfeit reason kept (an agent's error message can be any size)
LOG_TEXT_LIMIT = 20_000  # characters of each text in an agent's log (an LLM reply, say)


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
      key: the match's identity by content (``cwm.arena.identity.match_key``: the game, the settings, each
        seat's agent fingerprint and the index), unique within the tournament.
      seats: the agent label in each seat, for display only.
      seed: the match seed (chance and agents' seeds derive from it).
      returns: each seat's score; a forfeiting seat gets the game's minimum utility, the others its maximum.
      forfeit_seat: the seat that forfeited, or ``None``.
      forfeit_kind: one of ``FORFEIT_KINDS`` (empty when nobody forfeited).
      reason: why the match was forfeited (the agent's error message), cleaned to one safe line
        (``cwm.text.clean``).
      moves: decisions and chance outcomes applied.
      duration_s: wall time of the match.
      logs: per seat, an agent's attempt log when it keeps one (the LLM policy), else empty; every text in
        it cleaned (``cwm.text.clean_json``). A tournament's ``matches.jsonl`` rows leave it empty: the
        match's transcript holds it (``cwm.arena.transcript``).
      stats: per seat, an agent's own record of the match when it keeps one (an ISMCTS agent: draws
        accepted and rejected, moves that fell back to a random action), else empty.
      actions: every action applied in the real game, chance outcomes included, in order (the game replays
        from them: on-policy accuracy checks a model on the states its agent reached).
      fingerprints: what the agent in each seat is (``cwm.arena.identity.agent_fingerprint``); empty in rows
        written before matches were keyed by content.
      index: the match's number among those of its seating (0 for the first).
      deal: the chance seed the match was played on, shared by the seat-swapped matches of a pair
        (``cwm.arena.plan.deal_seed``); ``None`` in rows written before deals were shared, whose chance
        seed came from the match's own seed: such rows are never paired (``cwm.arena.compare.edge_pairs``).

    The texts an agent wrote (``reason``, ``forfeit_kind``, ``logs``) are cleaned whenever a result is made,
    built by a match or read back from ``matches.jsonl``, so no surrogate, control character or ANSI escape
    sequence reaches a report, a file or a terminal.
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
    stats: tuple[JSON, ...] = ()
    actions: tuple[int, ...] = ()
    fingerprints: tuple[str, ...] = ()
    index: int = 0
    deal: int | None = None

    def __post_init__(self) -> None:
        object.__setattr__(self, "reason", clean(self.reason, limit=REASON_LIMIT))
        object.__setattr__(self, "forfeit_kind", clean(self.forfeit_kind, limit=100))
        object.__setattr__(self, "logs", tuple(clean_json(log, limit=LOG_TEXT_LIMIT) for log in self.logs))
        object.__setattr__(self, "stats", tuple(clean_json(s, limit=LOG_TEXT_LIMIT) for s in self.stats))

    @property
    def void(self) -> bool:
        """The match's own process died under it (``crash`` with no forfeiting seat): it has no outcome."""
        return self.forfeit_kind == "crash" and self.forfeit_seat is None

    def to_json(self) -> dict[str, JSON]:
        return dataclasses.asdict(self)

    def shown_as(self, seats: tuple[str, ...]) -> MatchResult:
        """This match with its seats under other labels (the match is the same: labels are for display)."""
        return self if seats == self.seats else dataclasses.replace(self, seats=seats)

    @classmethod
    def from_json(cls, data: dict[str, JSON]) -> MatchResult:
        """The inverse of :meth:`to_json`.

        Raises:
          ValueError: ``data`` is not a match result (not an object, a field missing or of the wrong type);
            the message names the field.
        """
        if not isinstance(data, dict):
            raise ValueError(f"a match result is a JSON object, not {type(data).__name__}")
        missing = [k for k in ("key", "seats", "seed", "returns") if k not in data]
        if missing:
            raise ValueError(f"a match result needs the field(s) {', '.join(missing)}")
        fields = {f.name for f in dataclasses.fields(cls)}
        values = {k: v for k, v in data.items() if k in fields}
        for name, kind, what in (("key", str, "string"), ("seats", (list, tuple), "list"),
                                 ("returns", (list, tuple), "list"), ("reason", str, "string"),
                                 ("forfeit_kind", str, "string"), ("logs", (list, tuple), "list")):
            if name in values and not isinstance(values[name], kind):
                raise ValueError(f"field {name!r} of a match result must be a {what}, "
                                 f"not {type(values[name]).__name__}")
        if not all(isinstance(s, str) for s in values["seats"]):
            raise ValueError("field 'seats' of a match result must be a list of strings")
        if not all(_is_number(r) and math.isfinite(r) for r in values["returns"]):
            raise ValueError("field 'returns' of a match result must be a list of finite numbers")
        values["seats"] = tuple(str.__str__(s) for s in values["seats"])
        values["returns"] = tuple(float(r) for r in values["returns"])
        values["logs"] = tuple(values.get("logs", ()))
        values["stats"] = tuple(values.get("stats", ())) if isinstance(values.get("stats", ()), (list, tuple)) else ()
        _check_numbers(values)
        actions = values.get("actions", ())
        if not (isinstance(actions, (list, tuple)) and all(type(a) is int for a in actions)):
            raise ValueError("field 'actions' of a match result must be a list of integers")
        values["actions"] = tuple(actions)
        fingerprints = values.get("fingerprints", ())
        if not (isinstance(fingerprints, (list, tuple)) and all(isinstance(f, str) for f in fingerprints)):
            raise ValueError("field 'fingerprints' of a match result must be a list of strings")
        values["fingerprints"] = tuple(fingerprints)
        return cls(**values)


def _is_number(value: object) -> bool:
    return isinstance(value, numbers.Real) and not isinstance(value, bool)  # numpy's too; a bool or str is not


def _is_integer(value: object) -> bool:
    return isinstance(value, numbers.Integral) and not isinstance(value, bool)


def _check_numbers(values: dict[str, JSON]) -> None:
    """The integer and number fields of a match result have their types (``ValueError`` naming the field)."""
    for name in ("seed", "moves", "index"):
        if not _is_integer(values.get(name, 0)):
            raise ValueError(f"field {name!r} of a match result must be an integer")
        values[name] = int(values.get(name, 0))
    seat = values.get("forfeit_seat")
    if seat is not None and not _is_integer(seat):
        raise ValueError("field 'forfeit_seat' of a match result must be an integer or null")
    values["forfeit_seat"] = None if seat is None else int(seat)
    deal = values.get("deal")
    if deal is not None and not _is_integer(deal):
        raise ValueError("field 'deal' of a match result must be an integer or null")
    values["deal"] = None if deal is None else int(deal)
    if not _is_number(values.get("duration_s", 0.0)):
        raise ValueError("field 'duration_s' of a match result must be a number")
    values["duration_s"] = float(values.get("duration_s", 0.0))


@dataclasses.dataclass(frozen=True)
class MatchJob:
    """Everything a worker needs to play one match: picklable specs, no live objects."""

    game: str
    key: str  # the match's identity by content (cwm.arena.identity.match_key)
    seats: tuple[str, ...]  # agent labels (NAME of NAME=SPEC, else the spec as given), for display
    seed: int
    settings: Settings
    move_time_limit: float | None = None
    log_dir: str | None = None
    builds: tuple[str, ...] = ()  # the specs to build, with paths made absolute (default: the labels)
    fingerprints: tuple[str, ...] = ()  # what each seat's agent is (cwm.arena.identity.agent_fingerprint)
    index: int = 0  # the match's number among those of its seating
    deal: int | None = None  # the chance seed, shared by the seat orders of a pairing (default: from ``seed``)
