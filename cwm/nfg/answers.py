"""Structured answers: what a parsed reply says, what the solver accepts, and how the two are compared.

Four kinds, one per way a task can be answered:
  ``choice``: a set of actions; correct when it is non-empty and every action in it is accepted
    (with tied best responses, naming any of them, or several of them, is right).
  ``distribution``: a probability vector over ``vocabulary``; correct when within ``tolerance`` of an
    accepted vector in every entry, or, for a key with an ``Exploitability`` rule (zero-sum games), when a
    best-responding opponent gains at most the rule's threshold against it.
  ``sequence``: actions in order; correct when equal to the accepted sequence.
  ``label``: a set of labels; correct when it is exactly one label and that label is accepted.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping, Sequence
from fractions import Fraction

from cwm.nfg import zero_sum
from cwm.nfg.game import NfgFormatError, fraction_json, to_fraction
from cwm.types import JSON

KINDS = ("choice", "distribution", "sequence", "label")
DEFAULT_TOLERANCE = 0.02
SUM_TOLERANCE = 0.02  # a strategy scored by exploitability must sum to 1 within this; it is then renormalised


@dataclasses.dataclass(frozen=True)
class Exploitability:
    """Scores a mixed strategy of a zero-sum game by how much a best-responding opponent gains against it.

    Attributes:
      payoffs: the answerer's payoffs, rows its actions (the key's vocabulary), columns the opponent's.
      value: the game's value for the answerer (what an optimal strategy guarantees).
      threshold: a strategy is correct when its exploitability is at most this (payoff units).
    """

    payoffs: tuple[tuple[Fraction, ...], ...]
    value: Fraction
    threshold: float

    def of(self, strategy: Sequence[float]) -> float | None:
        """The exploitability of ``strategy`` (renormalised), or None when it is not a probability vector."""
        total = sum(strategy)
        if len(strategy) != len(self.payoffs) or min(strategy) < 0 or abs(total - 1) > SUM_TOLERANCE:
            return None
        return max(0.0, zero_sum.exploitability(self.payoffs, self.value, [p / total for p in strategy]))

    def to_json(self) -> JSON:
        return {"payoffs": [[fraction_json(p) for p in row] for row in self.payoffs],
                "value": fraction_json(self.value), "threshold": self.threshold}

    @classmethod
    def from_json(cls, data: Mapping[str, JSON]) -> Exploitability:
        """Reads ``to_json``'s output back (``NfgFormatError`` for a missing or malformed field)."""
        try:
            payoffs = tuple(tuple(to_fraction(p, where="exploitability payoff") for p in row) for row in data["payoffs"])
            return cls(payoffs, to_fraction(data["value"], where="exploitability value"), float(data["threshold"]))
        except (KeyError, TypeError, ValueError) as e:
            if isinstance(e, NfgFormatError):
                raise
            raise NfgFormatError(f"exploitability: missing or malformed field {e}") from e


@dataclasses.dataclass(frozen=True)
class Reply:
    """A parsed reply.

    Attributes:
      kind: one of ``KINDS``.
      value: ``frozenset[str]`` (choice, label), ``tuple[float, ...]`` (distribution, in the
        vocabulary's order) or ``tuple[str, ...]`` (sequence); names are the vocabulary's spelling.
    """

    kind: str
    value: frozenset[str] | tuple[float, ...] | tuple[str, ...]

    def to_json(self) -> JSON:
        if isinstance(self.value, frozenset):
            return {"kind": self.kind, "value": sorted(self.value)}
        return {"kind": self.kind, "value": list(self.value)}

    @classmethod
    def from_json(cls, data: Mapping[str, JSON]) -> Reply:
        """Reads ``to_json``'s output back.

        Raises:
          NfgFormatError: an unknown kind or a malformed value.
        """
        try:
            kind, value = str(data["kind"]), list(data["value"])
            if kind in ("choice", "label"):
                return cls(kind, frozenset(str(v) for v in value))
            if kind == "sequence":
                return cls(kind, tuple(str(v) for v in value))
            if kind == "distribution":
                return cls(kind, tuple(float(v) for v in value))
        except (KeyError, TypeError, ValueError) as e:
            raise NfgFormatError(f"reply: missing or malformed field {e}") from e
        raise NfgFormatError(f"reply: kind must be one of {KINDS}, got {kind!r}")


@dataclasses.dataclass(frozen=True)
class AnswerKey:
    """The solver's accepted answers for one task.

    Attributes:
      kind: one of ``KINDS``.
      vocabulary: the names a reply may use: actions (choice, sequence), the actions a distribution
        is over (in order), or the allowed labels.
      accepted: choice/label: the accepted names; distribution: accepted vectors (exact fractions);
        sequence: the accepted sequences.
      tolerance: per-entry absolute tolerance for distributions.
      exploitability: for a distribution over the strategies of a zero-sum game: score by exploitability
        instead of distance (``accepted`` then holds one optimal strategy, for the ideal).
    """

    kind: str
    vocabulary: tuple[str, ...]
    accepted: tuple
    tolerance: float = DEFAULT_TOLERANCE
    exploitability: Exploitability | None = None

    def __post_init__(self) -> None:
        if self.kind not in KINDS:
            raise NfgFormatError(f"answer key: kind must be one of {KINDS}, got {self.kind!r}")
        if not self.accepted:
            raise NfgFormatError(f"answer key ({self.kind}): no accepted answer")
        if self.exploitability is not None and (self.kind != "distribution"
                                                or len(self.exploitability.payoffs) != len(self.vocabulary)):
            raise NfgFormatError(f"answer key ({self.kind}): an exploitability rule needs a distribution over "
                                 f"the rule's {len(self.exploitability.payoffs)} actions")

    def accepts(self, reply: Reply | None) -> bool:
        """Whether a parsed reply is correct (an unparsed reply, None, never is)."""
        if reply is None or reply.kind != self.kind:
            return False
        if self.kind == "choice":
            return bool(reply.value) and set(reply.value) <= set(self.accepted)
        if self.kind == "label":
            return len(reply.value) == 1 and next(iter(reply.value)) in self.accepted
        if self.kind == "sequence":
            return tuple(reply.value) in {tuple(s) for s in self.accepted}
        if self.exploitability is not None:
            measure = self.measure(reply)
            return measure is not None and measure <= self.exploitability.threshold + 1e-12
        return any(_close(reply.value, vector, self.tolerance) for vector in self.accepted)  # type: ignore[arg-type]

    def measure(self, reply: Reply | None) -> float | None:
        """The exploitability of a parsed distribution under this key's rule; None without a rule or a vector."""
        if self.exploitability is None or reply is None or reply.kind != "distribution":
            return None
        return self.exploitability.of([float(p) for p in reply.value])  # type: ignore[union-attr]

    def ideal(self) -> str | list[str]:
        """The evals ``ideal``: the accepted answers written the way a correct reply would write them."""
        if self.kind in ("choice", "label"):
            names = [str(a) for a in self.accepted]
            return names[0] if len(names) == 1 else names
        if self.kind == "sequence":
            texts = [", ".join(s) for s in self.accepted]
        else:
            texts = [format_distribution(self.vocabulary, v) for v in self.accepted]
        return texts[0] if len(texts) == 1 else texts

    def to_json(self) -> JSON:
        if self.kind == "distribution":
            accepted: list = [[fraction_json(p) for p in v] for v in self.accepted]
        elif self.kind == "sequence":
            accepted = [list(s) for s in self.accepted]
        else:
            accepted = list(self.accepted)
        out: dict[str, JSON] = {"kind": self.kind, "vocabulary": list(self.vocabulary), "accepted": accepted,
                                "tolerance": self.tolerance}
        if self.exploitability is not None:
            out["exploitability"] = self.exploitability.to_json()
        return out

    @classmethod
    def from_json(cls, data: Mapping[str, JSON]) -> AnswerKey:
        """Reads ``to_json``'s output back.

        Raises:
          NfgFormatError: a field is missing or malformed.
        """
        try:
            kind, vocabulary, raw = str(data["kind"]), tuple(str(v) for v in data["vocabulary"]), data["accepted"]
        except (KeyError, TypeError) as e:
            raise NfgFormatError(f"answer key: missing or malformed field {e}") from e
        if kind == "distribution":
            accepted: tuple = tuple(tuple(to_fraction(p, where="accepted vector") for p in v) for v in raw)
        elif kind == "sequence":
            accepted = tuple(tuple(str(a) for a in s) for s in raw)
        else:
            accepted = tuple(str(a) for a in raw)
        rule = data.get("exploitability")
        return cls(kind, vocabulary, accepted, tolerance=float(data.get("tolerance", DEFAULT_TOLERANCE)),
                   exploitability=None if rule is None else Exploitability.from_json(rule))


def _close(got: Sequence[float], want: Sequence[Fraction], tolerance: float) -> bool:
    return len(got) == len(want) and all(abs(float(g) - float(w)) <= tolerance + 1e-12 for g, w in zip(got, want))


def format_probability(p: Fraction) -> str:
    """A probability as a short decimal (``0.35``, ``0.333``, ``1``)."""
    text = f"{float(p):.3f}".rstrip("0").rstrip(".")
    return text or "0"


def format_distribution(names: Sequence[str], vector: Sequence[Fraction]) -> str:
    """``"red: 0.35, blue: 0.65"``."""
    return ", ".join(f"{n}: {format_probability(p)}" for n, p in zip(names, vector))


def choice_key(actions: Sequence[str], accepted: Sequence[str]) -> AnswerKey:
    return AnswerKey("choice", tuple(actions), tuple(accepted))


def distribution_key(names: Sequence[str], vectors: Sequence[Mapping[str, Fraction]], *,
                     tolerance: float = DEFAULT_TOLERANCE) -> AnswerKey:
    accepted = tuple(tuple(v[n] for n in names) for v in vectors)
    return AnswerKey("distribution", tuple(names), accepted, tolerance=tolerance)


def sequence_key(actions: Sequence[str], sequence: Sequence[str]) -> AnswerKey:
    return AnswerKey("sequence", tuple(actions), (tuple(sequence),))


def label_key(labels: Sequence[str], accepted: Sequence[str]) -> AnswerKey:
    return AnswerKey("label", tuple(labels), tuple(accepted))
