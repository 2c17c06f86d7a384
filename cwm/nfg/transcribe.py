"""Auditing plain evals records (``input`` and ``ideal`` only): the LLM transcribes each item into the formal
record, the sandbox tabulates its code, the solver answers, and the ideal is checked against that answer.

The LLM writes a module (``prompts/nfg/cwm/transcribe.md``): the game (``PLAYERS``, ``ME``, ``ACTIONS``,
``payoff``), ``QUESTION`` (which family the item asks), that family's data names, and ``UNCLEAR`` (a sentence
when the text can be read more than one way). The code is untrusted: it runs in a ``cwm.sandbox.Sandbox``
unless the caller asks for in-process execution. A transcription that fails, names players or actions the
item never mentions, asks no known question, or does not solve is ``untranscribed``; one the LLM marks as
unclear is ``ambiguous``; neither is ever counted as agreeing.

A record that carries a formal game is re-solved (``cwm.nfg.audit``) and its stored game is checked against
the game its own text states (``cross_check``): read without the LLM when the text is in cwm's task format
(``cwm.nfg.crosscheck``), else transcribed as above. A stored game and ideal changed together, text untouched,
is a ``mismatch``.
"""

from __future__ import annotations

import dataclasses
import re
from collections.abc import Callable, Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor
from fractions import Fraction
from pathlib import Path
from typing import Any

import prompts
from cwm.llm import Client, LLMError, Message, Request
from cwm.nfg import audit, crosscheck, families, route
from cwm.nfg.answers import AnswerKey
from cwm.nfg.game import MatrixGame, NfgFormatError, fraction_json
from cwm.nfg.solver import STRATEGIES
from cwm.nfg.tasks import FAMILIES, solve
from cwm.synthesis.extract import CodeExtractionError, extract_code
from cwm.types import JSON

PROMPTS = ("nfg/cwm/system.md", "nfg/cwm/transcribe.md")
OPTIONAL_NAMES = ("UNCLEAR", *sorted({n for family in families.REGISTRY.values() for n in family.data_names}))


class TranscriptionError(ValueError):
    """The item could not be transcribed into a solvable formal record; the message says why."""


class Ambiguous(TranscriptionError):
    """The transcription says the item's text can be read in more than one way."""


def item_text(record: Mapping[str, JSON]) -> str:
    """The item as the LLM sees it: a string ``input`` as is, else each message's content (non-user roles named).

    Raises:
      TranscriptionError: ``input`` is neither a string nor a list of ``{"role", "content"}`` messages.
    """
    messages = record.get("input")
    if isinstance(messages, str):
        return messages
    if not isinstance(messages, list) or not messages or not all(
            isinstance(m, Mapping) and isinstance(m.get("content"), str) for m in messages):
        raise TranscriptionError(f"input must be a string or a list of {{'role', 'content'}} messages, "
                                 f"got {audit.short(messages)}")
    return "\n\n".join(m["content"] if m.get("role") == "user" else f"[{m.get('role')}] {m['content']}"
                       for m in messages)


def request(record: Mapping[str, JSON], *, temperature: float = 0.0, max_output_tokens: int = 8192) -> Request:
    """The request asking the LLM to transcribe one plain record."""
    user = prompts.render("nfg/cwm/transcribe.md", item_text=item_text(record),
                          strategies=", ".join(STRATEGIES))
    return Request(messages=(Message("user", user.strip()),), system=prompts.render("nfg/cwm/system.md").strip(),
                   temperature=temperature, max_output_tokens=max_output_tokens, tag="nfg/transcribe")


def transcribe(record: Mapping[str, JSON], client: Client, *, sandbox: Any = None,
               budget_s: float = route.IN_PROCESS_BUDGET_S) -> tuple[JSON, AnswerKey]:
    """Transcribes one plain record and solves it.

    Args:
      record: the evals record.
      client: the LLM.
      sandbox: a ``cwm.sandbox.Sandbox`` for the code; None runs it in-process behind the static gate
        (``route.run_job``: trusted setups only).
      budget_s: in-process only: the wall-clock budget for loading, and for tabulating, the code.

    Returns:
      The transcription (``{"code", "family", "game", "me", "question"}``) and the solver's answer key.

    Raises:
      Ambiguous: the module's ``UNCLEAR`` says what is unclear.
      TranscriptionError: the LLM call, the code or the formal record failed (the message says which).
    """
    text = item_text(record)
    try:
        reply = client.complete(request(record)).text
        source = extract_code(reply, ["payoff"]).candidates[-1]
        value = route.run_job(source, {"data": ["QUESTION"], "optional": list(OPTIONAL_NAMES)}, sandbox=sandbox,
                              budget_s=budget_s)
    except (LLMError, CodeExtractionError, route.RouteError) as e:
        raise TranscriptionError(f"{type(e).__name__}: {e}") from e
    data = value["data"]
    if data.get("UNCLEAR") not in (None, "", False):
        raise Ambiguous(f"the transcription says: {audit.short(data['UNCLEAR'], 300)}")
    family = _family(data["QUESTION"])
    missing = [n for n in families.get(family).data_names if n not in data]
    if missing:
        raise TranscriptionError(f"QUESTION is {family!r} but the module does not define {', '.join(missing)}")
    game, me, question = route.formal_record(value, family)
    absent = [n for n in (*game.players, *game.actions[0], *game.actions[1]) if not _mentioned(n, text)]
    if absent:
        raise TranscriptionError(f"the transcription names {sorted(set(absent))}, which the item text never mentions")
    try:
        key = solve(family, game, me, question)
    except (NfgFormatError, KeyError, TypeError, ValueError, AttributeError) as e:
        raise TranscriptionError(f"the transcribed game does not solve: {e}") from e
    record = {"code": source, "family": family, "game": game.to_json(), "me": me, "question": _plain_json(question)}
    return record, key


def _plain_json(value: Any) -> JSON:
    """The question with its exact fractions written as JSON (``"1/5"``)."""
    if isinstance(value, Fraction):
        return fraction_json(value)
    if isinstance(value, Mapping):
        return {str(k): _plain_json(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_plain_json(v) for v in value]
    return value


def _family(value: JSON) -> str:
    if value is None:
        raise TranscriptionError("the transcription says the item asks none of the questions the solver answers")
    name = re.sub(r"[\s-]+", "_", str(value).strip().lower())
    if name not in FAMILIES:
        raise TranscriptionError(f"QUESTION = {audit.short(value)} is not one of {list(FAMILIES)}")
    return name


def _mentioned(name: str, text: str) -> bool:
    words = r"[\s_-]+".join(re.escape(w) for w in name.split())
    return re.search(rf"(?<![\w]){words}(?![\w])", text, re.I) is not None


def audit_plain(record: JSON, client: Client | None, *, line: int = 0, sandbox: Any = None,
                budget_s: float = route.IN_PROCESS_BUDGET_S) -> audit.AuditFinding:
    """Audits one record: a record with a formal game as ``audit.audit_record`` does and then against its own
    text (``cross_check``), a plain one by transcription.

    Args:
      record: the evals record.
      client: the LLM that transcribes plain records (and texts not in cwm's task format); None: no LLM, so
        such records are ``untranscribed``.
      line: the record's line in its file.
      sandbox: where the LLM's code runs (see ``transcribe``).
      budget_s: in-process only: the code's wall-clock budget.
    """
    if not isinstance(record, Mapping):
        return audit.audit_record(record, line=line)
    if isinstance(record.get("nfg"), Mapping):
        return cross_check(audit.audit_record(record, line=line), record, client, sandbox=sandbox, budget_s=budget_s)
    ideal = record.get("ideal")
    try:
        item_text(record)
    except TranscriptionError as e:
        return audit.AuditFinding(line, "", "", "invalid", (str(e),), ideal)
    if client is None:
        return audit.AuditFinding(line, "", "", "untranscribed", ("no formal game, and no LLM to transcribe the text",),
                                  ideal)
    try:
        transcription, key = transcribe(record, client, sandbox=sandbox, budget_s=budget_s)
    except Ambiguous as e:
        return audit.AuditFinding(line, "", "", "ambiguous", (str(e),), ideal)
    except TranscriptionError as e:
        return audit.AuditFinding(line, "", "", "untranscribed", (str(e),), ideal)
    reasons = audit.ideal_reasons(ideal, key)
    return audit.AuditFinding(line, "", str(transcription["family"]), "disagree" if reasons else "ok",
                              tuple(reasons), ideal, key.ideal(), transcription)


def cross_check(finding: audit.AuditFinding, record: Mapping[str, JSON], client: Client | None, *,
                sandbox: Any = None, budget_s: float = route.IN_PROCESS_BUDGET_S) -> audit.AuditFinding:
    """Checks a record's stored formal game against the game written from its text alone.

    The text is read by ``crosscheck.read_text`` (cwm's task format, no LLM); a text in another form is
    transcribed by ``client`` when there is one. The finding becomes ``mismatch`` (the first reason names what
    differs), ``untranscribed`` or ``ambiguous`` (the text could not be written as one game), or ``invalid``
    (its ``input`` is malformed); its earlier reasons follow. A record whose stored game cannot be solved stays
    ``invalid`` as it was.
    """
    if finding.status not in ("ok", "disagree"):
        return finding
    nfg = record["nfg"]
    assert isinstance(nfg, Mapping)  # audit_record solved it
    try:
        text = item_text(record)
    except TranscriptionError as e:
        return dataclasses.replace(finding, status="invalid", reasons=(str(e), *finding.reasons))
    try:
        written, transcription = _written(text, record, client, sandbox=sandbox, budget_s=budget_s)
    except Ambiguous as e:
        return dataclasses.replace(finding, status="ambiguous", reasons=(f"the text: {e}", *finding.reasons))
    except TranscriptionError as e:
        return dataclasses.replace(finding, status="untranscribed",
                                   reasons=(f"the text cannot be written as a game: {e}", *finding.reasons))
    found = crosscheck.differences(MatrixGame.from_json(nfg["game"]), int(nfg["me"]), written)  # type: ignore[arg-type]
    if transcription is not None and transcription["family"] != nfg.get("family"):
        found.append(f"question: stored {nfg.get('family')}, text {transcription['family']}")
    if not found:
        return finding
    return dataclasses.replace(finding, status="mismatch", reasons=(crosscheck.summary(found), *finding.reasons),
                               transcription=transcription or {"game": written.game.to_json(), "me": written.me})


def _written(text: str, record: Mapping[str, JSON], client: Client | None, *, sandbox: Any,
             budget_s: float) -> tuple[crosscheck.Written, JSON]:
    """The game the text states and, when the LLM wrote it, its transcription; read without the LLM when
    the text is in cwm's task format.

    Raises:
      TranscriptionError: neither reading worked (``Ambiguous`` when the LLM says the text is unclear).
    """
    try:
        return crosscheck.read_text(text), None
    except crosscheck.Unreadable as e:
        if client is None:
            raise TranscriptionError(f"{e} (and no LLM to transcribe it)") from e
    transcription, _ = transcribe(record, client, sandbox=sandbox, budget_s=budget_s)
    assert isinstance(transcription, Mapping)
    game = MatrixGame.from_json(transcription["game"])
    return crosscheck.Written(game, int(transcription["me"])), transcription  # type: ignore[arg-type]


def audit_file(path: str | Path, client: Client | None, *, sandbox: Any = None, workers: int = 1,
               budget_s: float = route.IN_PROCESS_BUDGET_S) -> list[audit.AuditFinding]:
    """``audit.audit_file`` with every record checked against its text: a record with a formal game is also
    cross-checked (``cross_check``), one without is transcribed (one LLM call each).

    Args:
      path: the evals JSONL file.
      client: the LLM; None audits without one (plain records, and texts not in cwm's task format, are then
        ``untranscribed``).
      sandbox: where the code runs (see ``transcribe``); jobs in one sandbox run one at a time.
      workers: concurrent LLM calls (default 1).
      budget_s: in-process only: the code's wall-clock budget.

    Raises:
      FileNotFoundError: no such file.
    """
    lines = audit.numbered_records(path)

    def one(item: tuple[int, JSON | audit.AuditFinding]) -> audit.AuditFinding:
        n, record = item
        if isinstance(record, audit.AuditFinding):
            return record
        return audit_plain(record, client, line=n, sandbox=sandbox, budget_s=budget_s)

    return _map(one, lines, workers)


def _map(fn: Callable[[Any], audit.AuditFinding], items: Sequence[Any], workers: int) -> list[audit.AuditFinding]:
    if workers <= 1:
        return [fn(i) for i in items]
    with ThreadPoolExecutor(max_workers=workers) as pool:
        return list(pool.map(fn, items))
