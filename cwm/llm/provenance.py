"""Who answered a run's LLM requests and how the texts travelled: short, structured fields, checked when read.

A run's provenance is four short fields, never prose repeated into every report line:

- ``answered_by``: the answering model, as precisely as known (e.g. ``gemini-2.5-pro``, or
  ``claude (Anthropic), version not exposed``); at most :data:`MAX_NAME_CHARS` printable characters.
- ``relay``: how requests reached it and replies came back, one of :data:`RELAYS`.
- ``date``: the UTC date the provenance was written, ``YYYY-MM-DD``.
- ``prompt_sha256``: per reply, the SHA-256 of the prompt text the relay attests it gave the answering side
  (written by whoever answered or relayed: a match shows the relay's copy matched, on its word), stored next to
  the reply in the batch directory's ``replies.jsonl`` and checked when the reply is read back
  (``cwm.llm.batch``); a run's provenance counts the replies (``replies``) and how many carried a hash that
  matched their request (``prompts_hashed``).

Every field is untrusted when read back (a recording's ``GAME.provenance.json``, a run's ``provenance.json``,
a bundle's manifest): :func:`checked_fields` takes exact builtin types only, bounds every string and refuses
control characters, with a one-line error naming the file and field.
"""

from __future__ import annotations

import dataclasses
import datetime as _dt
import hashlib
import json
import re
from pathlib import Path
from typing import Any

from cwm.files import RUN_FILE_BYTES, InputLimitError, loads_bounded, read_bounded
from cwm.llm.types import LLMError

PROVENANCE_FILE = "provenance.json"  # a synthesis run's provenance, beside its result.json
MAX_NAME_CHARS = 120
# How the texts travelled; the meaning of each value is written in docs/llm.md.
RELAYS: dict[str, str] = {
    "direct-api": "cwm sent each request to the provider's API and read the reply itself",
    "relay-hashed": "through files (a batch directory), every reply stored with the hash the relay attests of "
                    "the prompt it gave the answering side, each matching its request: the relay's copy "
                    "matched, on the relay's word",
    "relay-unchecked": "through files (a batch directory); not every reply carries a prompt hash, so the copies "
                       "were not machine-checked byte for byte",
    "agent-relay-hashed": "through files, carried by a language-model agent; every reply's prompt hash (the "
                          "agent's own attestation of the text it gave) matched its request",
    "agent-relay-unchecked": "through files, carried by a language-model agent; the copies were not "
                             "machine-checked byte for byte",
    "scripted": "replies written in advance (a test's or a demo's), not a live model",
    "unknown": "a client or a recording that does not say",
}
RELAY_BY = ("agent", "person")  # who carried the texts of a batch directory between its files and the model


def relay_by(carrier: str, checked: str) -> str:
    """The relay of a batch directory's replies as :data:`RELAYS` names it: who carried the texts
    (``carrier``, one of :data:`RELAY_BY`) and whether every reply's prompt hash matched its request
    (``checked``: the batch client's ``relay-hashed`` or ``relay-unchecked``)."""
    if carrier not in RELAY_BY:
        raise ValueError(f"relay carrier {carrier!r:.40} is not one of {', '.join(RELAY_BY)}")
    hashed = "hashed" if checked == "relay-hashed" else "unchecked"
    return f"agent-relay-{hashed}" if carrier == "agent" else f"relay-{hashed}"


_DATE = re.compile(r"\d{4}-\d{2}-\d{2}")
_SHA256 = re.compile(r"[0-9a-f]{64}")
_CONTROL = re.compile(r"[\x00-\x1f\x7f-\x9f\u2028\u2029]")


class ProvenanceError(LLMError):
    """A provenance field that is missing, of the wrong type, too long, or not one of its allowed values."""


def prompt_sha256(text: str) -> str:
    """The SHA-256 (hex) of a prompt's exact text, encoded as UTF-8."""
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def short_name(text: str) -> str:
    """``text`` as an ``answered_by`` value: control characters and runs of white space made one space, cut
    to ``MAX_NAME_CHARS`` (``"unknown"`` if nothing is left)."""
    cleaned = " ".join(_CONTROL.sub(" ", str(text)).split())[:MAX_NAME_CHARS].strip()
    return cleaned or "unknown"


def checked_name(value: Any, *, where: str, field: str, limit: int = MAX_NAME_CHARS) -> str:
    """``value`` if it is an exact ``str`` of 1 to ``limit`` characters without control characters.

    Raises:
      ProvenanceError: anything else (names ``where`` and ``field``; the value itself is not echoed).
    """
    if type(value) is not str:
        raise ProvenanceError(f"{where}: field {field!r} must be a string, not a {type(value).__name__}")
    if not value.strip() or len(value) > limit:
        raise ProvenanceError(f"{where}: field {field!r} must hold 1 to {limit} characters (it holds {len(value)})")
    if _CONTROL.search(value):
        raise ProvenanceError(f"{where}: field {field!r} holds a control character")
    return value


def checked_sha256(value: Any, *, where: str, field: str = "prompt_sha256") -> str:
    """``value`` if it is an exact ``str`` of 64 lowercase hex digits.

    Raises:
      ProvenanceError: anything else (names ``where`` and ``field``).
    """
    if type(value) is not str or not _SHA256.fullmatch(value):
        raise ProvenanceError(f"{where}: field {field!r} must be a SHA-256 hex digest (64 lowercase hex digits)")
    return value


@dataclasses.dataclass(frozen=True)
class Provenance:
    """Who answered a run's requests and how (see the module docstring).

    Attributes:
      answered_by: the answering model (at most ``MAX_NAME_CHARS`` characters).
      relay: one of :data:`RELAYS`.
      date: the UTC date, ``YYYY-MM-DD`` (``None``: not known).
      replies: the replies the run read (0 where the client does not count them).
      prompts_hashed: how many of them carried a prompt hash that matched their request.
    """

    answered_by: str
    relay: str
    date: str | None = None
    replies: int = 0
    prompts_hashed: int = 0

    def __post_init__(self) -> None:
        checked_fields(dataclasses.asdict(self), where="provenance")

    def to_json(self) -> dict[str, Any]:
        return dataclasses.asdict(self)

    @classmethod
    def from_json(cls, data: Any, *, where: str) -> Provenance:
        """The provenance in ``data`` (an object with at least ``answered_by`` and ``relay``; other keys are
        ignored), every field checked.

        Raises:
          ProvenanceError: not an object, or a field missing or malformed (names ``where`` and the field).
        """
        if type(data) is not dict:  # a subclass could answer lookups with anything
            raise ProvenanceError(f"{where}: the provenance must be an object, not a {type(data).__name__}")
        for key in ("answered_by", "relay"):
            if key not in data:
                raise ProvenanceError(f"{where}: field {key!r} is missing")
        fields = {f.name: data[f.name] for f in dataclasses.fields(cls) if f.name in data}
        return cls(**checked_fields(fields, where=where))


def checked_fields(data: dict[str, Any], *, where: str) -> dict[str, Any]:
    """``data`` with each provenance field it holds checked: ``answered_by`` a short name, ``relay`` one of
    :data:`RELAYS`, ``date`` ``YYYY-MM-DD`` or ``None``, ``replies`` and ``prompts_hashed`` counts (the
    second at most the first). Other keys pass unchecked.

    Raises:
      ProvenanceError: a field malformed (one line naming ``where`` and the field).
    """
    if "answered_by" in data:
        checked_name(data["answered_by"], where=where, field="answered_by")
    if "relay" in data:
        relay = checked_name(data["relay"], where=where, field="relay", limit=40)
        if relay not in RELAYS:
            raise ProvenanceError(f"{where}: field 'relay' must be one of {', '.join(RELAYS)}")
    date = data.get("date")
    if date is not None and (type(date) is not str or not _DATE.fullmatch(date) or not _valid_date(date)):
        raise ProvenanceError(f"{where}: field 'date' must be a date YYYY-MM-DD or null")
    for key in ("replies", "prompts_hashed"):
        if key in data and (type(data[key]) is not int or not 0 <= data[key] < 1 << 40):
            raise ProvenanceError(f"{where}: field {key!r} must be a count (an int >= 0)")
    if data.get("prompts_hashed", 0) > data.get("replies", 0):
        raise ProvenanceError(f"{where}: field 'prompts_hashed' counts more replies than 'replies'")
    return data


def _valid_date(text: str) -> bool:
    try:
        _dt.date.fromisoformat(text)
    except ValueError:
        return False
    return True


def today() -> str:
    """Today's UTC date, ``YYYY-MM-DD``."""
    return _dt.datetime.now(_dt.timezone.utc).date().isoformat()


def read_provenance(path: Path | str) -> Provenance:
    """The provenance in the JSON file ``path`` (a run's ``provenance.json`` or a recording's
    ``GAME.provenance.json``), read within bounds and checked.

    Raises:
      ProvenanceError: the file cannot be read, is too large, is not JSON, or a field is malformed (one line
        naming the file).
    """
    path = Path(path)
    try:
        data = loads_bounded(read_bounded(path, RUN_FILE_BYTES, what="provenance file"), where=str(path))
    except InputLimitError as e:
        raise ProvenanceError(str(e)) from None
    except (OSError, ValueError, RecursionError) as e:  # JSONDecodeError and UnicodeDecodeError are ValueErrors
        raise ProvenanceError(f"{path}: not a readable JSON provenance file ({type(e).__name__})") from None
    return Provenance.from_json(data, where=str(path))


def write_provenance(path: Path | str, provenance: Provenance) -> Path:
    """Writes ``provenance`` as JSON to ``path``; returns it."""
    path = Path(path)
    path.write_text(json.dumps(provenance.to_json(), indent=2) + "\n", encoding="utf-8")
    return path


__all__ = ["MAX_NAME_CHARS", "PROVENANCE_FILE", "RELAYS", "RELAY_BY", "Provenance", "ProvenanceError", "checked_fields",
           "checked_name", "checked_sha256", "prompt_sha256", "read_provenance", "relay_by", "short_name", "today", "write_provenance"]
