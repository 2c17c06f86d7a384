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
from pathlib import Path

from cwm.nfg import families
from cwm.nfg.answers import AnswerKey
from cwm.nfg.families.classify_partner import LABELS
from cwm.nfg.families.zero_sum_maximin import EXPLOITABILITY_TOLERANCE, zero_sum_key
from cwm.nfg.game import MatrixGame, NfgFormatError
from cwm.types import JSON

# LABELS, EXPLOITABILITY_TOLERANCE and zero_sum_key live with their families; they stay importable from here.
__all__ = ["EXPLOITABILITY_TOLERANCE", "FAMILIES", "LABELS", "PARSE_KIND", "SCHEMA", "Task", "load", "read_records",
           "save", "solve", "zero_sum_key"]

SCHEMA = "cwm.nfg/1"
FAMILIES = families.NAMES  # the family names, in the order of their random streams (cwm.nfg.families.REGISTRY)
PARSE_KIND = {name: family.parse_kind for name, family in families.REGISTRY.items()}


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
    """The accepted answers of a task, computed from its formal game and question by its family's ``solve``.

    Raises:
      NfgFormatError: unknown family, ``me`` not 0 or 1, a question missing a parameter, or a question the
        family cannot answer (such as a dominant_strategy game in which ``me`` has no strictly dominant action).
    """
    if isinstance(me, bool) or me not in (0, 1):
        raise NfgFormatError(f"{family}: me must be player 0 or 1, got {me!r}")
    chosen = families.get(family)
    try:
        return chosen.solve(game, me, question)
    except KeyError as e:
        raise NfgFormatError(f"{family} question is missing parameter {e}") from e


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
