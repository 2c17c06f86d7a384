"""Auditing an evals file: recompute every item's answer from its formal game and list the ideals that disagree."""

from __future__ import annotations

import dataclasses
import json
from collections.abc import Mapping, Sequence
from pathlib import Path

from cwm.files import RECORDS_BYTES, read_text
from cwm.nfg.answers import AnswerKey
from cwm.nfg.game import MatrixGame, NfgFormatError, fraction_json
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
        (the formal game or question cannot be read or solved), ``skipped`` (no formal game), and, when
        records are checked against their text (``cwm.nfg.transcribe``), ``untranscribed`` (the text could
        not be written as a game), ``ambiguous`` (the transcription says the text can be read more than one
        way) or ``mismatch`` (the stored formal game differs from the game the text states).
      reasons: what disagrees, one sentence each.
      ideal: the record's ideal as written.
      solver: the ideal the solver computes (None unless the record could be solved).
      transcription: for a transcribed record: the LLM's code and the formal record it gave
        (``{"code", "family", "game", "me", "question"}``), so the user can check it; for a ``mismatch`` read
        without the LLM, the game the text states (``{"game", "me"}``, ``me`` None when the text does not say).
    """

    line: int
    id: str
    family: str
    status: str
    reasons: tuple[str, ...] = ()
    ideal: JSON = None
    solver: JSON = None
    transcription: JSON = None

    def to_json(self) -> JSON:
        return {**dataclasses.asdict(self), "reasons": list(self.reasons)}


STATUSES = ("ok", "disagree", "invalid", "skipped")
TRANSCRIPTION_STATUSES = ("untranscribed", "ambiguous", "mismatch")
FAILING = ("disagree", "invalid", *TRANSCRIPTION_STATUSES)  # statuses that make `cwm nfg audit` exit 1


def audit_record(record: JSON, *, line: int = 0) -> AuditFinding:
    """Recomputes one record's answer from its ``nfg`` formal game and compares the ideal and stored answers.

    A record that is not a JSON object, or whose formal game or question is malformed, is ``invalid``
    with the reason; it never stops the audit of the other records.
    """
    if not isinstance(record, Mapping):
        return AuditFinding(line, "", "", "invalid", (f"record is not a JSON object: {short(record)}",))
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
    reasons = [*_stored_reasons(nfg.get("answer"), key), *ideal_reasons(ideal, key)]
    return AuditFinding(line, item_id, family, "disagree" if reasons else "ok", tuple(reasons), ideal, key.ideal())


def short(value: JSON, limit: int = 60) -> str:
    """``repr(value)``, cut to ``limit`` characters."""
    text = repr(value)
    return text if len(text) <= limit else text[: limit - 3] + "..."


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
        return [f"stored exploitability rule {short(written.exploitability and written.exploitability.to_json())} "
                f"differs from the solver's {short(key.exploitability and key.exploitability.to_json())}"]
    return []


def ideal_reasons(ideal: JSON, key: AnswerKey) -> list[str]:
    """Why an ideal (a string or a list of strings) disagrees with the solver's key; empty when it agrees."""
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
    return [r if isinstance(r, AuditFinding) else audit_record(r, line=n) for n, r in numbered_records(path)]


def numbered_records(path: str | Path) -> list[tuple[int, JSON | AuditFinding]]:
    """``(line, record)`` for each non-blank line; a line that is not JSON comes as an ``invalid`` finding.

    Raises:
      FileNotFoundError: no such file.
      TextFileError: the file is not UTF-8 (one line naming it, the line and the column).
      InputLimitError: the file is over ``RECORDS_BYTES``, or not a regular file.
    """
    out: list[tuple[int, JSON | AuditFinding]] = []
    for n, line in enumerate(read_text(Path(path), what="evals file", limit=RECORDS_BYTES).splitlines(), 1):
        if not line.strip():
            continue
        try:
            out.append((n, json.loads(line)))
        except json.JSONDecodeError as e:
            out.append((n, AuditFinding(n, "", "", "invalid", (f"line is not JSON ({e.msg})",))))
    return out


def report(findings: Sequence[AuditFinding], *, transcribed: bool = False) -> str:
    """A plain-text report: counts, then one block per record that did not pass (with its transcription, if any);
    a ``mismatch`` is one line naming the record and what differs.

    Args:
      findings: the audit's findings.
      transcribed: plain records were transcribed (the counts then include the transcription statuses).
    """
    statuses = (*STATUSES, *TRANSCRIPTION_STATUSES) if transcribed else STATUSES
    counts = {s: sum(f.status == s for f in findings) for s in statuses}
    lines = [f"{len(findings)} records: " + ", ".join(f"{n} {s}" for s, n in counts.items())]
    if counts["skipped"] and not transcribed:  # plain evals items: their text can be transcribed into a game
        lines.append(f"{counts['skipped']} skipped: no formal game to recompute; --transcribe turns each "
                     f"question's text into one (read from cwm's task format, or written by --llm) and audits that")
    for f in findings:
        if f.status == "mismatch":
            lines.append(f"line {f.line} {f.id or '(no id)'} [{f.family or '?'}] mismatch: {'; '.join(f.reasons)}")
        elif f.status in FAILING:
            lines.append(f"line {f.line} {f.id or '(no id)'} [{f.family or '?'}] {f.status}:")
            lines.extend(f"  - {r}" for r in f.reasons)
            if isinstance(f.transcription, Mapping):
                lines.extend("    " + t for t in describe_transcription(f.transcription))
    return "\n".join(lines)


def describe_transcription(transcription: Mapping[str, JSON]) -> list[str]:
    """The transcribed formal record as short text lines: the question, the viewpoint and the payoff table."""
    game = MatrixGame.from_json(transcription["game"])
    me = int(transcription["me"])
    head = [f"transcribed as {transcription['family']} for {game.players[me]} (player {me}); "
            f"question {json.dumps(transcription['question'])}",
            f"payoffs ({game.players[0]}, {game.players[1]}):"]
    rows = [[f"{game.players[0]} \\ {game.players[1]}", *game.actions[1]]]
    rows += [[a, *(f"{fraction_json(u0)}, {fraction_json(u1)}" for u0, u1 in game.payoffs[i])]
             for i, a in enumerate(game.actions[0])]
    widths = [max(len(str(r[k])) for r in rows) for k in range(len(rows[0]))]
    return head + ["  " + " | ".join(str(c).ljust(w) for c, w in zip(r, widths)).rstrip() for r in rows]
