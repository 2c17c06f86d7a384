"""Decrypto's shared types: the rules' constants, one turn, one logged attempt, one episode, the role views."""

from __future__ import annotations

import dataclasses
from typing import Any, Literal, Protocol, runtime_checkable

from cwm.types import CwmError

DIGITS = (1, 2, 3, 4)  # one digit per keyword, in keyword order
CODE_LENGTH = 3  # digits in a code, all distinct
MAX_TURNS = 8  # Alice and Bob win by surviving this many turns
TOKENS_TO_WIN = 2  # Eve wins at this many interceptions or this many miscommunications
ROLES = ("alice", "bob", "eve")
END_CONDITIONS = ("intercepted", "miscommunicated", "both", "survived")

Code = tuple[int, ...]
Role = Literal["alice", "bob", "eve"]


class DecryptoError(CwmError, ValueError):
    """A Decrypto rule was broken, or an input (agent spec, episode file, answer) is malformed."""


def _is_int(value: object) -> bool:
    return type(value) is int  # a bool or a float is not


def _is_strs(value: object) -> bool:
    return isinstance(value, list) and all(type(v) is str for v in value)


def _need(ok: bool, field: str, what: str) -> None:
    """Raises ``DecryptoError`` naming ``field`` unless ``ok``: it must be ``what``."""
    if not ok:
        raise DecryptoError(f"field {field!r} must be {what}")


@dataclasses.dataclass(frozen=True)
class Turn:
    """One played turn: the code Alice drew, her hints, both guesses; public once the code is revealed."""

    number: int  # 1-based
    code: Code
    hints: tuple[str, ...]
    bob_guess: Code
    eve_guess: Code

    @property
    def intercepted(self) -> bool:
        """Eve's guess equals the code."""
        return self.eve_guess == self.code

    @property
    def miscommunicated(self) -> bool:
        """Bob's guess differs from the code."""
        return self.bob_guess != self.code

    def to_json(self) -> dict[str, Any]:
        return {"number": self.number, "code": list(self.code), "hints": list(self.hints),
                "bob_guess": list(self.bob_guess), "eve_guess": list(self.eve_guess)}

    @classmethod
    def from_json(cls, data: dict[str, Any], *, where: str = "") -> Turn:
        """The inverse of :meth:`to_json`, every field checked by type.

        Raises:
          DecryptoError: a field is missing or of another type (names it, after ``where``).
        """
        _need(isinstance(data, dict), where.rstrip(".") or "turn", "an object")
        _need(_is_int(data.get("number")), f"{where}number", "an integer")
        for name in ("code", "bob_guess", "eve_guess"):
            value = data.get(name)
            _need(isinstance(value, list) and len(value) == CODE_LENGTH and all(_is_int(d) and d in DIGITS
                                                                               for d in value),
                  f"{where}{name}", f"a list of {CODE_LENGTH} digits from {DIGITS[0]} to {DIGITS[-1]}")
        _need(_is_strs(data.get("hints")), f"{where}hints", "a list of strings")
        return cls(data["number"], tuple(data["code"]), tuple(data["hints"]), tuple(data["bob_guess"]),
                   tuple(data["eve_guess"]))


@dataclasses.dataclass(frozen=True)
class Attempt:
    """One answer an agent gave (LLM reply, human entry) and what became of it.

    Attributes:
      role: who answered.
      turn: the turn it belongs to (1-based).
      task: what was asked: ``hints``, ``guess``, or a probe (``predict_eve``, ``keywords_now``, ...).
      attempt: 0 for the first answer, then one more per format retry.
      reply: the raw text.
      outcome: ``ok`` (parsed and valid), ``unreadable`` (no answer after the marker), ``invalid`` (read but
        against the rules), or ``default`` (retries used up; the default move was played instead).
      error: why it was not ok ("" when it was).
      parsed: the value read from it, JSON-able (None when none).
    """

    role: str
    turn: int
    task: str
    attempt: int
    reply: str
    outcome: str
    error: str = ""
    parsed: Any = None

    def to_json(self) -> dict[str, Any]:
        return dataclasses.asdict(self)

    @classmethod
    def from_json(cls, data: dict[str, Any], *, where: str = "") -> Attempt:
        """The inverse of :meth:`to_json`, every field checked by type (``DecryptoError`` naming it)."""
        _need(isinstance(data, dict), where.rstrip(".") or "attempt", "an object")
        fields = {f.name: f for f in dataclasses.fields(cls)}
        unknown = sorted(set(data) - set(fields))
        _need(not unknown, f"{where}{unknown[0] if unknown else ''}", "absent (not a field of an attempt)")
        for name in ("role", "task", "reply", "outcome", "error"):
            _need(isinstance(data.get(name, ""), str), f"{where}{name}", "a string")
        for name in ("turn", "attempt"):
            _need(_is_int(data.get(name)), f"{where}{name}", "an integer")
        return cls(**data)


@dataclasses.dataclass(frozen=True)
class Episode:
    """One finished game, with everything needed to score it and to show it again.

    Attributes:
      episode_id: unique within a run (``<pairing>/s<seed>/e<index>``).
      game_seed: seeds the keyword draw and the codes.
      agent_seed: seeds the agents (hint sampling, LLM request seeds).
      players: the agent spec playing each role.
      keywords: the four secret keywords, digit 1 first.
      turns: the turns played, in order.
      end: one of :data:`END_CONDITIONS`.
      attempts: every logged answer (LLM replies, human entries), in order.
      probes: theory-of-mind probe answers (see :mod:`cwm.decrypto.metrics`).
    """

    episode_id: str
    game_seed: int
    agent_seed: int
    players: dict[str, str]
    keywords: tuple[str, ...]
    turns: tuple[Turn, ...]
    end: str
    attempts: tuple[Attempt, ...] = ()
    probes: tuple[dict[str, Any], ...] = ()

    @property
    def interception_turns(self) -> list[int]:
        return [t.number for t in self.turns if t.intercepted]

    @property
    def miscommunication_turns(self) -> list[int]:
        return [t.number for t in self.turns if t.miscommunicated]

    @property
    def alice_bob_reward(self) -> int:
        """+1 when Alice and Bob survived, -1 when Eve won (Eve's reward is the negation)."""
        return 1 if self.end == "survived" else -1

    def format_failures(self) -> dict[str, int]:
        """Per role: answers that fell back to the default move."""
        counts = dict.fromkeys(ROLES, 0)
        for a in self.attempts:
            if a.outcome == "default" and a.role in counts:
                counts[a.role] += 1
        return counts

    def to_json(self) -> dict[str, Any]:
        return {"episode_id": self.episode_id, "game_seed": self.game_seed, "agent_seed": self.agent_seed,
                "players": dict(self.players), "keywords": list(self.keywords),
                "turns": [t.to_json() for t in self.turns], "end": self.end,
                "interception_turns": self.interception_turns,
                "miscommunication_turns": self.miscommunication_turns,
                "format_failures": self.format_failures(),
                "attempts": [a.to_json() for a in self.attempts], "probes": [dict(p) for p in self.probes]}

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> Episode:
        """The inverse of :meth:`to_json`, every field checked by type: an episode file is data from
        anywhere, and its texts end up in pages and reports.

        Raises:
          DecryptoError: a field is missing or of another type (the message names it: ``turns[2].code``).
        """
        _need(isinstance(data, dict), "episode", "a JSON object")
        _need(isinstance(data.get("episode_id"), str), "episode_id", "a string")
        for name in ("game_seed", "agent_seed"):
            _need(_is_int(data.get(name)), name, "an integer")
        players = data.get("players")
        _need(isinstance(players, dict) and set(players) == set(ROLES) and _is_strs(list(players.values())),
              "players", f"an object mapping {', '.join(ROLES)} to agent specs (strings)")
        _need(_is_strs(data.get("keywords")) and len(data["keywords"]) == len(DIGITS), "keywords",
              f"a list of {len(DIGITS)} strings")
        _need(isinstance(data.get("turns"), list), "turns", "a list")
        _need(data.get("end") in END_CONDITIONS, "end", f"one of {', '.join(END_CONDITIONS)}")
        _need(isinstance(data.get("attempts", []), list), "attempts", "a list")
        probes = data.get("probes", [])
        _need(isinstance(probes, list) and all(isinstance(p, dict) for p in probes), "probes", "a list of objects")
        return cls(data["episode_id"], data["game_seed"], data["agent_seed"], dict(data["players"]),
                   tuple(data["keywords"]), tuple(Turn.from_json(t, where=f"turns[{i}].")
                                                  for i, t in enumerate(data["turns"])), data["end"],
                   tuple(Attempt.from_json(a, where=f"attempts[{i}].") for i, a in enumerate(data.get("attempts", []))),
                   tuple(probes))


@dataclasses.dataclass(frozen=True)
class View:
    """What one role knows when it must act: Alice sees keywords and code, Bob the keywords, Eve neither.

    Attributes:
      role: whose view this is.
      turn: the turn being played (1-based).
      history: the turns already played (public: every code has been revealed).
      keywords: the secret keywords (empty for Eve).
      code: the code to encode (Alice only; empty otherwise).
      hints: this turn's hints (Bob and Eve; empty for Alice).
    """

    role: str
    turn: int
    history: tuple[Turn, ...]
    keywords: tuple[str, ...] = ()
    code: Code = ()
    hints: tuple[str, ...] = ()

    def hints_for(self, digit: int) -> list[str]:
        """Every earlier hint given for ``digit``, oldest first."""
        return [h for t in self.history for d, h in zip(t.code, t.hints) if d == digit]


@runtime_checkable
class Encoder(Protocol):
    """Alice: three hints for the view's code."""

    name: str

    def hints(self, view: View) -> tuple[str, ...]: ...


@runtime_checkable
class Guesser(Protocol):
    """Bob or Eve: a code guess from the view's hints."""

    name: str

    def guess(self, view: View) -> Code: ...
