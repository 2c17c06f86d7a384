"""Auditing an evals file: recompute every item's answer from its formal game and list the ideals that disagree."""

from __future__ import annotations

import dataclasses
import json
from collections.abc import Mapping, Sequence
from pathlib import Path

from cwm.nfg.answers import AnswerKey
from cwm.nfg.game import MatrixGame, NfgFormatError
from cwm.nfg.parse import parse_distribution, parse_reply
from cwm.nfg.tasks import solve
from cwm.types import JSON


@dataclasses.dataclass(frozen=True)
class AuditFinding:
    """The audit of one record.

    Attributes:
      line: the record's line in the file (1-based).
      id: the item id ("" when the record has none).
      family: the task family ("" when unknown).
      status: ``ok``, ``disagree`` (an ideal or the stored answers differ from the solver), ``invalid``
        (the formal game or question cannot be read or solved) or ``skipped`` (no formal game).
      reasons: what disagrees, one sentence each.
      ideal: the record's ideal as written.
      solver: the ideal the solver computes (None unless the record could be solved).
    """

    line: int
    id: str
    family: str
    status: str
    reasons: tuple[str, ...] = ()
    ideal: JSON = None
    solver: JSON = None

    def to_json(self) -> JSON:
        return {**dataclasses.asdict(self), "reasons": list(self.reasons)}


def audit_record(record: JSON, *, line: int = 0) -> AuditFinding:
    """Recomputes one record's answer from its ``nfg`` formal game and compares the ideal and stored answers.

    A record that is not a JSON object, or whose formal game or question is malformed, is ``invalid``
    with the reason; it never stops the audit of the other records.
    """
    if not isinstance(record, Mapping):
        return AuditFinding(line, "", "", "invalid", (f"record is not a JSON object: {_short(record)}",))
    nfg = record.get("nfg")
    ideal = record.get("ideal")
    if not isinstance(nfg, Mapping):
        return AuditFinding(line, "", "", "skipped", ("no formal game ('nfg' object): nothing to recompute",), ideal)
    item_id, family = str(nfg.get("id", "")), str(nfg.get("family", ""))
    try:
        game = MatrixGame.from_json(nfg["game"])
        key = solve(family, game, nfg["me"], nfg["question"])
    except (NfgFormatError, KeyError, TypeError, ValueError, AttributeError, IndexError) as e:
        reason = f"cannot solve the formal game: {type(e).__name__ + ': ' if not isinstance(e, ValueError) else ''}{e}"
        return AuditFinding(line, item_id, family, "invalid", (reason,), ideal)
    reasons = [*_stored_reasons(nfg.get("answer"), key), *_ideal_reasons(ideal, key)]
    return AuditFinding(line, item_id, family, "disagree" if reasons else "ok", tuple(reasons), ideal, key.ideal())


def _short(value: JSON) -> str:
    text = repr(value)
    return text if len(text) <= 60 else text[:57] + "..."


def _stored_reasons(stored: JSON, key: AnswerKey) -> list[str]:
    if stored is None:
        return []
    try:
        written = AnswerKey.from_json(stored)
    except (NfgFormatError, TypeError, ValueError, AttributeError) as e:
        return [f"stored answer key is malformed: {e}"]
    if written.kind != key.kind:
        return [f"stored answer kind {written.kind!r} but the question asks for a {key.kind!r}"]
    if set(written.accepted) != set(key.accepted):
        return [f"stored accepted answers {written.ideal()!r} differ from the solver's {key.ideal()!r}"]
    if written.exploitability != key.exploitability:
        return [f"stored exploitability rule {_short(written.exploitability and written.exploitability.to_json())} "
                f"differs from the solver's {_short(key.exploitability and key.exploitability.to_json())}"]
    return []


def _ideal_reasons(ideal: JSON, key: AnswerKey) -> list[str]:
    texts: Sequence[JSON] = ideal if isinstance(ideal, list) else [ideal]
    if not texts or not all(isinstance(t, str) for t in texts):
        return [f"ideal {ideal!r} is not a string or a list of strings"]
    reasons: list[str] = []
    named: set[str] = set()
    for text in texts:
        if key.kind == "choice":
            vector = parse_distribution(text, key.vocabulary)
            if vector is not None and sum(float(p) > 0 for p in vector.value) > 1:
                reasons.append(f"ideal {text!r} is a mixed strategy, but the question asks for the set of best "
                               f"actions ({key.ideal()!r})")
                continue
        parsed = parse_reply(text, key)
        if parsed is None:
            reasons.append(f"ideal {text!r} cannot be read as a {key.kind} answer")
            continue
        if not key.accepts(parsed):
            reasons.append(f"ideal {text!r} is wrong: the solver accepts {key.ideal()!r}")
        elif isinstance(parsed.value, frozenset):
            named |= parsed.value
    if key.kind == "choice" and not reasons and named != set(key.accepted):
        missing = sorted(set(key.accepted) - named)
        reasons.append(f"ideal {ideal!r} leaves out tied best actions {missing}, so replies naming them fail")
    return reasons


def audit_file(path: str | Path) -> list[AuditFinding]:
    """Audits every record of an evals JSONL file (records without a formal game are ``skipped``; a line
    that is not JSON is ``invalid``). Findings carry the record's line in the file; blank lines are skipped.

    Raises:
      FileNotFoundError: no such file.
    """
    findings = []
    for n, line in enumerate(Path(path).read_text(encoding="utf-8").splitlines(), 1):
        if not line.strip():
            continue
        try:
            record = json.loads(line)
        except json.JSONDecodeError as e:
            findings.append(AuditFinding(n, "", "", "invalid", (f"line is not JSON ({e.msg})",)))
            continue
        findings.append(audit_record(record, line=n))
    return findings


def report(findings: Sequence[AuditFinding]) -> str:
    """A plain-text report: counts, then one block per disagreeing or invalid record."""
    counts = {s: sum(f.status == s for f in findings) for s in ("ok", "disagree", "invalid", "skipped")}
    lines = [f"{len(findings)} records: " + ", ".join(f"{n} {s}" for s, n in counts.items())]
    for f in findings:
        if f.status in ("disagree", "invalid"):
            lines.append(f"line {f.line} {f.id or '(no id)'} [{f.family or '?'}] {f.status}:")
            lines.extend(f"  - {r}" for r in f.reasons)
    return "\n".join(lines)
