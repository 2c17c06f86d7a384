"""Shared types of cwm: constants, trajectories, check reports, and the errors raised at boundaries."""

from __future__ import annotations

import dataclasses
import functools
import marshal
import warnings
from collections.abc import Collection, Mapping
from typing import Any, Literal, TypeVar

from cwm.text import clean, clean_json, html_block, html_heading, html_paragraph, html_table

# OpenSpiel's player-id constants; the CWM contract uses the same numbers.
CHANCE: int = -1
TERMINAL: int = -4

JSON = Any  # a JSON-serialisable value: dict, list, str, int, float, bool or None

Deck = Literal["open", "closed"]
TRAJECTORY_SCHEMA = "cwm.trajectory/1"


VERSION = "0.1.0"  # cwm's version (``cwm.__version__``), written into what it exports


class CwmError(Exception):
    """Base class of every error cwm raises on purpose."""


class UnknownGameError(CwmError, ValueError):
    """A game name that is neither registered nor loadable as an OpenSpiel game or module."""


class TrajectoryFormatError(CwmError, ValueError):
    """A trajectory file or record that is malformed, truncated, or of another game."""


class ModelLoadError(CwmError, ValueError):
    """Model source that cannot be loaded: syntax error, forbidden code, or a missing contract function.

    ``verdict`` words the refusal as a sandbox child's check report does (``static: ...`` where the static gate
    refused the source, ``load: ...`` otherwise), so a check run in process tells the LLM the same.
    """

    def __init__(self, message: str, *, verdict: str | None = None):
        super().__init__(message)
        self.verdict = f"load: {message}" if verdict is None else verdict


class UsageError(CwmError, ValueError):
    """An argument out of its valid range (a count below 1, a player the game does not have, ...)."""


class AgentError(CwmError):
    """An agent could not produce a move; the arena scores it as a forfeit of kind ``kind``."""

    kind = "exception"


class IllegalMoveError(AgentError):
    """The agent's chosen action is not legal in the real game (e.g. a wrong world model, or an LLM
    that never named a legal move)."""

    kind = "illegal"


class ModelContractError(CwmError, RuntimeError):
    """A model broke the CWM contract at run time; the message names the call and what was wrong."""


@dataclasses.dataclass(frozen=True)
class ChanceOutcome:
    """One outcome of a chance node: OpenSpiel id, action string, probability."""

    action: int
    action_string: str
    probability: float


@dataclasses.dataclass(frozen=True)
class Step:
    """One recorded decision point of a ground-truth game and the action taken there.

    Attributes:
      player: the current player (``CHANCE`` at chance nodes).
      legal_actions: OpenSpiel ids of the legal actions (chance outcomes at chance nodes).
      legal_action_strings: the same actions as strings, in the same order.
      chance_outcomes: outcomes with probabilities at chance nodes, else empty.
      observations: each player's observation of the state before the action (JSON-able dicts).
      action: the OpenSpiel id of the action taken.
      action_string: the action taken, as a string.
      rewards: each player's reward on the transition caused by the action.
      state: the full ground-truth state before the action (open deck only; ``None`` otherwise).
    """

    player: int
    legal_actions: tuple[int, ...]
    legal_action_strings: tuple[str, ...]
    chance_outcomes: tuple[ChanceOutcome, ...]
    observations: tuple[JSON, ...]
    action: int
    action_string: str
    rewards: tuple[float, ...]
    state: JSON = None

    # What the checks compare a model's answers with, worked out once per step (synthesis checks every
    # candidate against the same steps). Cached in the instance, outside the dataclass fields.
    @functools.cached_property
    def legal_set(self) -> frozenset[str]:
        return frozenset(self.legal_action_strings)

    @functools.cached_property
    def observations_marshal(self) -> bytes:
        """``marshal.dumps(list(observations), 2)``: only exact builtins marshal to these bytes."""
        return _marshal(self.observations)


def _marshal(observations: tuple[JSON, ...]) -> bytes:
    try:
        return marshal.dumps(list(observations), 2)
    except ValueError:  # not marshal-able: nothing will match it
        return b""


@dataclasses.dataclass(frozen=True)
class Trajectory:
    """A complete recorded game, from the initial state to a terminal state.

    Attributes:
      game: the game's name as given to the registry (or its OpenSpiel string).
      seed: seed of the policy and chance sampling that produced it.
      policy: a short name of the policy that chose the players' actions.
      steps: every decision point in order.
      final_observations: each player's observation of the terminal state.
      returns: each player's total return.
      final_state: the full terminal state (open deck only).
    """

    game: str
    seed: int
    policy: str
    num_players: int
    steps: tuple[Step, ...]
    final_observations: tuple[JSON, ...]
    returns: tuple[float, ...]
    final_state: JSON = None

    @property
    def action_strings(self) -> list[str]:
        return [s.action_string for s in self.steps]

    @functools.cached_property
    def final_observations_marshal(self) -> bytes:
        return _marshal(self.final_observations)


@dataclasses.dataclass(frozen=True)
class ClosedEvent:
    """What one player knew at one state of a closed-deck trajectory: its observation, and its own action."""

    observation: JSON
    action: str | None  # the player's own action at this state, None where someone else (or chance) moved


@dataclasses.dataclass(frozen=True)
class ClosedTrajectory:
    """A closed-deck view of a game: one player's observations and own actions only."""

    game: str
    seed: int
    player: int
    num_players: int
    events: tuple[ClosedEvent, ...]  # one per state, the last is the terminal state
    player_return: float


TestType = Literal[
    "current_player",
    "legal_actions",
    "chance_outcomes",
    "observations",
    "rewards",
    "transition",
    "termination",
    "random_play",
]
TEST_TYPES: tuple[str, ...] = (
    "current_player",
    "legal_actions",
    "chance_outcomes",
    "observations",
    "rewards",
    "transition",
    "termination",
    "random_play",
)


TEXT_LIMIT = 8000  # characters kept of a traceback or a report's error (cwm.text.clean cuts the rest)


@dataclasses.dataclass(frozen=True)
class CheckFailure:
    """One failed check, reported so that an LLM (or a person) can act on it.

    Attributes:
      test_type: which kind of check failed (one of ``TEST_TYPES``).
      trajectory: index of the trajectory in the checked set (reports count games from 1, as prompts do).
      step: index of the step in that trajectory (the terminal state is ``len(steps)``).
      call: the model call that was checked, e.g. ``get_legal_actions(state)``.
      expected: what the ground truth says (JSON-able), or ``None`` for execution errors.
      got: what the model returned (JSON-able repr), or ``None`` when it raised.
      diff: a short readable difference between expected and got.
      traceback: the model's traceback when it raised, else empty.
      history: the action strings that lead from the initial state to the checked state.
      breach: the model broke a value rule of the contract (raised, returned a wrong type or an invalid
        value, modified its input), which play would refuse too, rather than answering validly but wrongly.
      observed: the real game's observations (one per player) at the checked state, for failures other than
        of observations (whose expected value they are); ``None`` when not known.
      state: the model's own state that the failing call read, as compact JSON (cut), or empty.
      not_kept: the values too large to keep (``VALUE_CHARS``), each as (field, the characters of its text,
        its first ``SHORT_CHARS`` characters); the field itself then holds ``None``. Worked out when the
        failure is made; a report shows such a value as it shows one left out of a prompt, by its length.

    Every text field, and every string in ``expected`` and ``got``, is cleaned when a failure is made
    (``cwm.text.clean``: no lone surrogate, control character or ANSI escape sequence; long texts cut), and
    a value whose text is longer than ``VALUE_CHARS`` characters is not kept (``not_kept``), so one
    failure stays small in every report file however large a value the model returned.
    """

    test_type: str
    trajectory: int
    step: int
    call: str
    expected: JSON
    got: JSON
    diff: str
    traceback: str = ""
    history: tuple[str, ...] = ()
    breach: bool = False
    observed: JSON = None
    state: str = ""
    not_kept: tuple[tuple[str, int, str], ...] = ()

    def __post_init__(self) -> None:
        # the model wrote got, the diff and the traceback: cleaned for every file and terminal they reach
        for name, multiline in (("test_type", False), ("call", False), ("diff", True)):
            object.__setattr__(self, name, clean(getattr(self, name), multiline=multiline))
        object.__setattr__(self, "traceback", clean(self.traceback, limit=TEXT_LIMIT, multiline=True))
        # values are kept whole up to VALUE_LIMIT characters a string: a prompt shows them in full or not at all
        object.__setattr__(self, "expected", clean_json(self.expected, limit=VALUE_LIMIT))
        object.__setattr__(self, "got", clean_json(self.got, limit=VALUE_LIMIT))
        object.__setattr__(self, "observed", clean_json(self.observed, limit=VALUE_LIMIT))
        object.__setattr__(self, "state", clean(self.state, limit=TEXT_LIMIT))
        object.__setattr__(self, "history", tuple(clean(h) for h in self.history))
        object.__setattr__(self, "not_kept", _not_kept_entries(self.not_kept))
        dropped = []
        for field in _VALUE_FIELDS:  # each value's text as a report writes it: too long, and it is not kept
            value = getattr(self, field)
            if value is None:
                continue
            shown = value[0] if field == "observed" and _same_for_all(value) else value
            text = _short(shown, None)
            if len(text) > VALUE_CHARS:
                dropped.append((_OBSERVED_SAME if shown is not value else field, len(text), text[:SHORT_CHARS]))
                object.__setattr__(self, field, None)
        if dropped:
            object.__setattr__(self, "not_kept", (*self.not_kept, *dropped))

    def _dropped(self, field: str) -> tuple[str, int, str] | None:
        """The ``not_kept`` entry of ``field`` (``observed``: either form), if it was not kept."""
        return next((e for e in self.not_kept if e[0] == field or (field == "observed" and e[0] == _OBSERVED_SAME)),
                    None)

    def render(self, *, max_history: int = 40, full: bool = False, leave_out: Collection[str] = ()) -> str:
        """A text report: step, call, expected vs got, and the traceback.

        Args:
          max_history: the most actions listed (the latest).
          full: write every value whole (default: a value longer than 600 characters is cut, for a terminal).
          leave_out: fields (``FAILURE_FIELDS``) replaced by a line saying how long they are, so a report kept
            within a budget drops a value whole instead of cutting it.
        """
        hist = list(self.history)
        shown = hist if len(hist) <= max_history else ["..."] + hist[-max_history:]
        lines = [
            f"[{self.test_type}] game {self.trajectory + 1}, step {self.step}: {self.call}"
            + (" (contract breach)" if self.breach else ""),
            f"  actions so far: {shown}",
        ]
        limit = None if full else SHORT_CHARS

        def value(field: str, text: str) -> str:
            return f"left out to keep this prompt short ({len(text)} characters)" if field in leave_out else text

        def stored(field: str, content: JSON) -> str:
            """A value's text (``content`` shown), or for one not kept what its text would have shown: its
            length where a prompt leaves it out (whole, it would never fit one), its start on a terminal."""
            entry = self._dropped(field)
            if entry is None:
                return value(field, _short(content, limit))
            length, head = entry[1], entry[2]
            if limit is None:
                return f"left out to keep this prompt short ({length} characters)"
            return value(field, head + f"... ({length} chars)")

        seen = self.observed
        seen_dropped = self._dropped("observed")
        if (seen_dropped is not None and seen_dropped[0] == _OBSERVED_SAME) or (
                seen_dropped is None and _same_for_all(seen)):
            lines.append("  the real game's observation here (the same for every player): "
                         + stored("observed", None if seen is None else seen[0]))  # type: ignore[index]
        elif seen is not None or seen_dropped is not None:
            lines.append(f"  the real game's observations here (one per player): {stored('observed', seen)}")
        if self.state:
            lines.append(f"  your model's state here: {value('state', self.state)}")
        kept_got = self._dropped("got") is None
        raised = bool(self.traceback) and self.got is None and kept_got  # the call raised: no value to show
        if not (raised and self.expected is None and self._dropped("expected") is None):
            lines.append(f"  expected: {stored('expected', self.expected)}")
        lines.append(f"  got:      {'an exception (below)' if raised else stored('got', self.got)}")
        if self.diff:
            lines.append("  diff: " + value("diff", self.diff).replace("\n", "\n        "))
        if self.traceback:
            lines.append("  traceback:\n    " + value("traceback", self.traceback.strip()).replace("\n", "\n    "))
        return "\n".join(lines)


# The fields of a failure report that ``CheckFailure.render(leave_out=...)`` can leave out.
FAILURE_FIELDS: tuple[str, ...] = ("observed", "state", "expected", "got", "diff", "traceback")
# The most characters of one string kept in a failure's expected, got or observed value (a longer one is cut).
VALUE_LIMIT = 100_000
# The most characters of a failure's expected, got or observed value as a report writes it (its ``repr``), all
# its strings together: a larger value is not kept (``CheckFailure.not_kept``), only its length and start.
# Above the failing-tests budget of a prompt (``cwm.synthesis.render.FAILURE_CHARS``, 40,000), which never
# shows so long a value whole: a prompt reads the same with or without it.
VALUE_CHARS = 50_000
# The characters of a value a terminal report shows (``CheckFailure.render`` without ``full``).
SHORT_CHARS = 600
_VALUE_FIELDS = ("observed", "expected", "got")
_OBSERVED_SAME = "observed, the same for every player"  # not kept: an observation every player shares


def _same_for_all(seen: JSON) -> bool:
    """Whether ``seen`` is a list of more than one observation, all equal (a report writes one)."""
    return isinstance(seen, list) and len(seen) > 1 and all(o == seen[0] for o in seen)


def _not_kept_entries(entries: object) -> tuple[tuple[str, int, str], ...]:
    """``CheckFailure.not_kept`` checked (it is read back from report files): each entry a known field, a
    whole number of characters and the cleaned start of the text.

    Raises:
      ValueError: an entry of another shape (one line naming it).
    """
    if type(entries) not in (list, tuple):
        raise ValueError(f"failure field 'not_kept': {clean(repr(entries), limit=80)} is not a list")
    out = []
    for entry in entries:  # type: ignore[attr-defined]
        ok = type(entry) in (list, tuple) and len(entry) == 3
        field, length, head = entry if ok else (None, None, None)
        if not (ok and field in (*_VALUE_FIELDS, _OBSERVED_SAME) and type(length) is int and length > 0
                and type(head) is str):
            raise ValueError(f"failure field 'not_kept': {clean(repr(entry), limit=80)} is not "
                             "[a value field, its length, its start]")
        out.append((field, length, clean(head, limit=SHORT_CHARS, multiline=True)))
    return tuple(out)


def _short(value: JSON, limit: int | None = 600) -> str:
    try:
        text = repr(value)
    except ValueError:  # an int too long to write in decimal
        text = "<a value holding an int too long to show>"
    return text if limit is None or len(text) <= limit else text[:limit] + f"... ({len(text)} chars)"


@dataclasses.dataclass(frozen=True)
class TypeStats:
    passed: int
    total: int

    @property
    def rate(self) -> float:
        return self.passed / self.total if self.total else 0.0


@dataclasses.dataclass(frozen=True)
class CheckReport:
    """The verdict of running checks on one model.

    Attributes:
      by_type: passed/total per test type (only the types that ran).
      transitions_passed: recorded transitions whose every check passed.
      transitions_total: recorded transitions checked.
      failures: the failed checks kept for display, in order (capped per type; every count and rate comes
        from ``by_type``, never from this list).
      error: a problem that stopped checking altogether (load failure, sandbox limit), else empty; cleaned
        like a failure's texts.
      breaches: failed checks that were contract breaches (``CheckFailure.breach``), counted in full.
    """

    by_type: dict[str, TypeStats]
    transitions_passed: int
    transitions_total: int
    failures: tuple[CheckFailure, ...]
    error: str = ""
    breaches: int = 0

    def __post_init__(self) -> None:
        object.__setattr__(self, "error", clean(self.error, limit=TEXT_LIMIT, multiline=True))

    @property
    def executed(self) -> int:
        return sum(s.total for s in self.by_type.values())

    @property
    def passed(self) -> int:
        return sum(s.passed for s in self.by_type.values())

    @property
    def pass_rate(self) -> float:
        """Fraction of executed checks that passed; 0.0 (never a pass) when nothing ran."""
        return self.passed / self.executed if self.executed else 0.0

    @property
    def transition_accuracy(self) -> float:
        """Fraction of recorded transitions on which every check passed (the paper's metric)."""
        return self.transitions_passed / self.transitions_total if self.transitions_total else 0.0

    @property
    def all_passed(self) -> bool:
        """Every executed check passed (from the counts), at least one ran, and nothing stopped the checks."""
        return self.executed > 0 and self.passed == self.executed and not self.error

    def to_json(self) -> dict[str, JSON]:
        return {
            "by_type": {k: dataclasses.asdict(v) for k, v in self.by_type.items()},
            "transitions_passed": self.transitions_passed,
            "transitions_total": self.transitions_total,
            # a failure that kept every value is written as before ``not_kept`` existed
            "failures": [{k: v for k, v in dataclasses.asdict(f).items() if k != "not_kept" or v}
                         for f in self.failures],
            "error": self.error,
            "breaches": self.breaches,
        }

    @classmethod
    def from_json(cls, data: dict[str, JSON]) -> CheckReport:
        failures = []
        for f in data.get("failures", []):
            f = dict(f)
            f["history"] = tuple(f.get("history", ()))
            failures.append(CheckFailure(**f))
        return cls(
            by_type={k: TypeStats(**v) for k, v in data["by_type"].items()},
            transitions_passed=int(data["transitions_passed"]),
            transitions_total=int(data["transitions_total"]),
            failures=tuple(failures),
            error=str(data.get("error", "")),
            breaches=int(data.get("breaches", 0)),
        )

    def summary(self, *, quantity: str = "transition accuracy") -> str:
        """The score line (checks passed, and ``quantity``: what the report's transition counts measure, e.g.
        ``"inference accuracy (joint)"`` for inference checks), then the counts per test type and any error."""
        parts = [f"{k} {v.passed}/{v.total}" for k, v in self.by_type.items()]
        head = (
            f"{self.passed}/{self.executed} checks passed ({self.pass_rate:.1%}); "
            f"{quantity} {self.transition_accuracy:.3f} "
            f"({self.transitions_passed}/{self.transitions_total})"
        )
        text = head + ("\n  " + ", ".join(parts) if parts else "")
        if self.error:
            text += f"\n  error: {self.error}"
        return text

    def _repr_html_(self) -> str:
        """The report as a notebook shows it: ``summary``'s first line, passed/total per check type, what
        stopped the checks, and each failure kept (its game counted from 1 as prompts do, its step, the call, the
        difference and the exception it raised), every text escaped (``cwm.text.html_text``: a model wrote the failures' texts)."""
        parts = [html_paragraph(self.summary().splitlines()[0])]
        if self.by_type:
            parts.append(html_table(["check type", "passed", "total", "rate"],
                                       [[k, v.passed, v.total, f"{v.rate:.1%}"] for k, v in self.by_type.items()]))
        if self.error:
            parts.append(html_paragraph(f"error: {self.error}"))
        if self.failures:
            kept = "" if len(self.failures) == self.executed - self.passed else " (the first few of each type)"
            parts += [html_heading(f"{len(self.failures)} failure(s) kept{kept}", level=5), html_table(
                ["check type", "game", "step", "call", "difference", "contract breach"],
                [[f.test_type, f.trajectory + 1, f.step, f.call, f.diff + _raised(f.traceback),
                  "yes" if f.breach else ""] for f in self.failures])]
        return html_block(*parts)

    def failed_by_type(self) -> dict[str, list[CheckFailure]]:
        out: dict[str, list[CheckFailure]] = {}
        for f in self.failures:
            out.setdefault(f.test_type, []).append(f)
        return out


def _raised(traceback: str) -> str:
    """A traceback's last line (the exception and its message), for a display; empty without one."""
    lines = traceback.strip().splitlines()
    return f" ({lines[-1]})" if lines else ""


def error_report(message: str) -> CheckReport:
    """A report for a model that could not be checked at all (counts as zero executed, failing)."""
    return CheckReport(by_type={}, transitions_passed=0, transitions_total=0, failures=(), error=message)


S = TypeVar("S")


def from_former_keywords(cls: type[S], given: S | None, former: Mapping[str, Any], *, who: str,
                         error: type[Exception] = UsageError, rename: Mapping[str, str] | None = None) -> S | None:
    """The settings object a function was given, or one of class ``cls`` built from the keyword arguments of the
    function's former signature (each the field of that name, or of the name ``rename`` gives it; ``None``
    values left to the field's default), with a ``DeprecationWarning`` pointing at the caller; ``None`` when
    neither was given.

    Raises:
      ``error``: both a settings object and former keywords, or a keyword that is no field of ``cls``.
    """
    if not former:
        return given
    if given is not None:
        raise error(f"{who}: pass either a {cls.__name__} or {sorted(former)}, not both")
    named = {(rename or {}).get(k, k): v for k, v in former.items() if v is not None}
    unknown = sorted(set(named) - {f.name for f in dataclasses.fields(cls)})  # type: ignore[arg-type]
    if unknown:
        raise error(f"{who}: unknown arguments {unknown}")
    warnings.warn(f"{who}({', '.join(f'{k}=' for k in sorted(former))}...) is deprecated: pass "
                  f"{cls.__name__}(...)", DeprecationWarning, stacklevel=3)
    try:
        return cls(**named)
    except TypeError as e:  # a required field missing
        raise error(f"{who}: {e}") from None
