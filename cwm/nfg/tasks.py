"""Task records: the formal game and question of each item, its solver answer key, and the JSONL formats.

Two formats are written. The OpenAI evals format holds ``{"input": [messages], "ideal": ...}`` only.
Ours is the same record plus an ``"nfg"`` object with the formal game, the viewpoint, the question's
parameters, the family, the parse kind and the accepted answers, so every ideal can be recomputed
(``cwm nfg audit``).
"""

from __future__ import annotations

import dataclasses
import json
from collections.abc import Iterable, Mapping
from fractions import Fraction
from pathlib import Path

from cwm.nfg import solver, zero_sum
from cwm.nfg.answers import AnswerKey, Exploitability, choice_key, distribution_key, label_key, sequence_key
from cwm.nfg.game import MatrixGame, NfgFormatError, to_fraction
from cwm.types import JSON

SCHEMA = "cwm.nfg/1"
FAMILIES = ("best_response_pure", "dominant_strategy", "estimate_mixed", "best_response_mixed",
            "classify_partner", "play_strategy", "nash", "nash_3x3", "zero_sum_maximin")
PARSE_KIND = {
    "best_response_pure": "choice", "dominant_strategy": "choice", "estimate_mixed": "distribution",
    "best_response_mixed": "choice", "classify_partner": "label", "play_strategy": "sequence", "nash": "distribution",
    "nash_3x3": "distribution", "zero_sum_maximin": "distribution",
}
# A zero-sum strategy is correct when a best-responding opponent gains at most this share of the answerer's
# payoff range (max - min) against it; a strategy written to 3 decimals stays well inside it.
EXPLOITABILITY_TOLERANCE = Fraction(1, 50)
LABELS = (*solver.PARTNER_TYPES, solver.AMBIGUOUS)


@dataclasses.dataclass(frozen=True)
class Task:
    """One eval item.

    Attributes:
      id: ``<family>-<seed>-<index>``.
      family: one of ``FAMILIES``.
      game: the formal game.
      me: which player the question's "you" is (0 or 1).
      question: the family's parameters (action names as the text spells them), JSON.
      key: the solver's accepted answers.
      messages: the chat input, ``[{"role": ..., "content": ...}]``.
      disguise: how the text was dressed (setting style, unit), for slicing results.
    """

    id: str
    family: str
    game: MatrixGame
    me: int
    question: JSON
    key: AnswerKey
    messages: tuple[dict[str, str], ...]
    disguise: JSON = dataclasses.field(default_factory=dict)

    @property
    def parse_kind(self) -> str:
        return self.key.kind

    @property
    def user_text(self) -> str:
        """The task text the contestants read (the last user message)."""
        return next(m["content"] for m in reversed(self.messages) if m["role"] == "user")

    def evals_record(self) -> JSON:
        """The OpenAI evals record: input messages and the ideal answer(s)."""
        return {"input": [dict(m) for m in self.messages], "ideal": self.key.ideal()}

    def to_json(self) -> JSON:
        """Our richer record: the evals record plus the formal game, question and answer key."""
        record = self.evals_record()
        record["nfg"] = {
            "schema": SCHEMA, "id": self.id, "family": self.family, "parse_kind": self.parse_kind,
            "game": self.game.to_json(), "me": self.me, "question": self.question,
            "answer": self.key.to_json(), "disguise": self.disguise,
        }
        return record

    @classmethod
    def from_json(cls, record: Mapping[str, JSON], *, where: str = "record") -> Task:
        """Reads our format back (the stored answer key is kept as written; ``audit`` re-solves it).

        Raises:
          NfgFormatError: not our format, or a malformed field (``where`` names the record).
        """
        nfg = record.get("nfg")
        if not isinstance(nfg, Mapping):
            raise NfgFormatError(f"{where}: no 'nfg' object (an evals record without a formal game)")
        try:
            return cls(
                id=str(nfg["id"]), family=_family(nfg["family"], where), game=MatrixGame.from_json(nfg["game"]),
                me=_player(nfg["me"], where), question=nfg["question"], key=AnswerKey.from_json(nfg["answer"]),
                messages=tuple({"role": str(m["role"]), "content": str(m["content"])} for m in record["input"]),
                disguise=nfg.get("disguise", {}),
            )
        except (KeyError, TypeError, ValueError) as e:
            if isinstance(e, NfgFormatError):
                raise NfgFormatError(f"{where}: {e}") from e
            raise NfgFormatError(f"{where}: missing or malformed field {e}") from e


def _player(value: JSON, where: str) -> int:
    if isinstance(value, bool) or value not in (0, 1):
        raise NfgFormatError(f"{where}: me must be player 0 or 1, got {value!r}")
    return int(value)


def _family(value: JSON, where: str) -> str:
    if value not in FAMILIES:
        raise NfgFormatError(f"{where}: unknown family {value!r}; expected one of {list(FAMILIES)}")
    return str(value)


def solve(family: str, game: MatrixGame, me: int, question: Mapping[str, JSON]) -> AnswerKey:
    """The accepted answers of a task, computed from its formal game and question.

    Raises:
      NfgFormatError: unknown family, ``me`` not 0 or 1, a question missing a parameter, or
        (dominant_strategy) a game in which ``me`` has no strictly dominant action.
    """
    if isinstance(me, bool) or me not in (0, 1):
        raise NfgFormatError(f"{family}: me must be player 0 or 1, got {me!r}")
    other = game.other(me)
    try:
        if family == "best_response_pure":
            mix = {question["opponent_action"]: to_fraction(1)}
            return choice_key(game.actions[me], solver.best_responses(game, me, mix))
        if family == "best_response_mixed":
            mix = {a: to_fraction(p, where=f"opponent_mix[{a!r}]") for a, p in question["opponent_mix"].items()}
            return choice_key(game.actions[me], solver.best_responses(game, me, mix))
        if family == "dominant_strategy":
            action = solver.dominant_action(game, me)
            if action is None:
                raise NfgFormatError(f"player {me} has no strictly dominant action in this game")
            return choice_key(game.actions[me], [action])
        if family == "estimate_mixed":
            estimate = solver.frequency_estimate(game.actions[other], question["opponent_history"])
            return distribution_key(game.actions[other], [estimate])
        if family == "classify_partner":
            history = [(str(a), str(b)) for a, b in question["history"]]
            tremble = to_fraction(question.get("tremble", solver.DEFAULT_TREMBLE), where="tremble")
            return label_key(LABELS, [solver.classify_partner(history, question["roles"], tremble=tremble)])
        if family == "play_strategy":
            moves = solver.play_out(question["strategy"], question["partner_history"], question["roles"])
            return sequence_key(game.actions[me], moves)
        if family in ("nash", "nash_3x3"):
            return _nash_key(game, me)
        if family == "zero_sum_maximin":
            return zero_sum_key(game, me)
    except KeyError as e:
        raise NfgFormatError(f"{family} question is missing parameter {e}") from e
    raise NfgFormatError(f"unknown family {family!r}; expected one of {list(FAMILIES)}")


def _nash_key(game: MatrixGame, me: int) -> AnswerKey:
    equilibria = solver.nash_equilibria(game)
    if not equilibria:
        raise NfgFormatError("support enumeration found no equilibrium (a degenerate game)")
    mine: list = []
    for profile in equilibria:
        if profile[me] not in mine:
            mine.append(profile[me])
    return distribution_key(game.actions[me], mine)


def zero_sum_key(game: MatrixGame, me: int, *, tolerance: Fraction = EXPLOITABILITY_TOLERANCE) -> AnswerKey:
    """The key of a maximin question: one optimal strategy (for the ideal) and the exploitability rule.

    Raises:
      NfgFormatError: the game is not zero-sum.
    """
    if not game.is_zero_sum():
        raise NfgFormatError("zero_sum_maximin: the game is not zero-sum (some outcome's payoffs do not sum to 0)")
    mine = game.matrix(me)
    solution = zero_sum.solve_zero_sum(mine)
    spread = max(max(r) for r in mine) - min(min(r) for r in mine)
    rule = Exploitability(tuple(tuple(r) for r in mine), solution.value, float(tolerance * spread))
    return AnswerKey("distribution", tuple(game.actions[me]), (solution.row,), exploitability=rule)


def save(path: str | Path, tasks: Iterable[Task], *, evals_only: bool = False) -> Path:
    """Writes tasks as JSONL, in our format or (``evals_only``) the plain evals format."""
    out = Path(path)
    out.parent.mkdir(parents=True, exist_ok=True)
    with out.open("w", encoding="utf-8") as f:
        for task in tasks:
            f.write(json.dumps(task.evals_record() if evals_only else task.to_json()) + "\n")
    return out


def read_records(path: str | Path) -> list[JSON]:
    """The JSON records of a JSONL file.

    Raises:
      FileNotFoundError: no such file.
      NfgFormatError: a line that is not JSON (names the line).
    """
    records = []
    for n, line in enumerate(Path(path).read_text(encoding="utf-8").splitlines(), 1):
        if not line.strip():
            continue
        try:
            records.append(json.loads(line))
        except json.JSONDecodeError as e:
            raise NfgFormatError(f"{path}:{n}: not JSON ({e.msg})") from e
    return records


def load(path: str | Path) -> list[Task]:
    """Reads tasks in our format (each record must carry its ``nfg`` object)."""
    return [Task.from_json(r, where=f"{path}:{n}") for n, r in enumerate(read_records(path), 1)]
