"""The batch/file client: requests go to ``pending.jsonl``; replies come back through ``replies.jsonl``.

This serves providers' batch APIs (half price, answers within hours) and answering prompts by any
other means (another tool, a person). A request without a reply is written to ``pending.jsonl`` and
raises :class:`PendingBatch` (or, with ``wait_s``, waits for the reply). Run the same program again
once ``replies.jsonl`` holds the answers: every request already answered returns at once.

Files (JSON Lines, in the batch directory):
  pending.jsonl: ``{"key", "model", "request"}`` per request waiting (duplicates are ignored).
  replies.jsonl: ``{"key", "texts": [...]}`` (or ``"text"``), optionally ``"finish_reasons"``,
    ``"usage": {"input_tokens", "output_tokens", "thinking_tokens"}``, ``"model"`` (who answered),
    ``"batch"``: whether the answer was billed at a provider's batch rate (half price; :func:`answer_pending`
    writes ``"batch": false``, as it answers with ordinary calls; a line without the field counts as
    batch-priced), and ``"prompt_sha256"``: the SHA-256 of the prompt text the answering side was given
    (:func:`request_text` of the request, as UTF-8), as the relay attests it. A reply whose ``prompt_sha256``
    differs from its request's is refused when read (one line naming the file and key); a reply without one is
    read, and counted as unchecked in :meth:`BatchFileClient.provenance`.
"""

from __future__ import annotations

import json
import os
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from cwm.files import RECORDS_BYTES, InputLimitError, LineError, parse_jsonl, read_bounded
from cwm.llm.base import Client
from cwm.llm.cache import AskCounter
from cwm.llm.ledger import Ledger
from cwm.llm.provenance import (
    Provenance,
    ProvenanceError,
    checked_name,
    checked_sha256,
    prompt_sha256,
    short_name,
    today,
)
from cwm.llm.types import LLMConfigError, LLMError, PendingBatch, Request, Response, Usage

PENDING_FILE = "pending.jsonl"
REPLIES_FILE = "replies.jsonl"
DEFAULT_MODEL = "batch"  # the model of pending entries written without one: any model may answer them


def _read_jsonl(path: Path) -> list[dict[str, Any]]:
    """The objects of a batch file; its last line may still be being written by another process (then it
    is left out), any other line that is not a JSON object is an ``LLMError`` naming the file and line, and
    so is a file over ``RECORDS_BYTES`` (refused before it is read) and any object, the last included, whose
    ``"key"`` is not a string (keys are looked up and compared, so a list or an object there would break every
    later read of the directory)."""
    if not path.is_file():
        return []
    try:
        data = read_bounded(path, RECORDS_BYTES, what="batch file")
    except InputLimitError as e:
        raise LLMError(str(e)) from None
    try:
        records = parse_jsonl(path, data, _json_object, what="a JSON object")[0]
    except LineError as e:
        raise LLMError(f"{e}; fix or delete that line") from e
    numbers = [n for n, line in enumerate(data.split(b"\n"), 1) if line.strip()]  # parse_jsonl's record lines
    for number, record in zip(numbers, records):
        if "key" in record and type(record["key"]) is not str:
            raise LLMError(f"{path}:{number}: its \"key\" is a {type(record['key']).__name__}, not a string; fix or "
                           f"delete that line")
    return records


def _json_object(value: Any) -> dict[str, Any]:
    if not isinstance(value, dict):
        raise TypeError(f"a {type(value).__name__}, not an object")
    return value


def pending_entries(directory: Path | str) -> dict[str, tuple[str, Request]]:
    """The requests waiting in ``directory`` without a reply: ``{key: (model, request)}``.

    Raises:
      LLMError: a line of ``pending.jsonl`` lacks ``key`` or ``request`` or holds a malformed request, or a
        line of either file other than the last is not a JSON object (names the file and line).
    """
    path = Path(directory) / PENDING_FILE
    answered = {r.get("key") for r in _read_jsonl(Path(directory) / REPLIES_FILE)}
    out: dict[str, tuple[str, Request]] = {}
    for number, entry in enumerate(_read_jsonl(path), 1):
        try:
            key, request = entry["key"], Request.from_json(entry["request"])
        except (KeyError, TypeError, ValueError, AttributeError) as e:
            raise LLMError(f"{path}: entry {number} is not a pending request (needs \"key\" and \"request\"): "
                           f"{type(e).__name__}: {e}") from e
        if key not in answered:
            out[key] = (str(entry.get("model", DEFAULT_MODEL)), request)
    return out


def pending_requests(directory: Path | str) -> dict[str, Request]:
    """The requests waiting in ``directory`` without a reply, by key (see :func:`pending_entries`)."""
    return {key: request for key, (_, request) in pending_entries(directory).items()}


def request_text(request: Request) -> str:
    """The request as one text, the exact text an answering side reads (and whose hash a reply carries): a
    single user message as it is; otherwise each part under a heading naming its role (``## system``,
    ``## user``, ``## assistant``), oldest first."""
    if not request.system and len(request.messages) == 1:
        return request.messages[0].text
    parts = [f"## system\n\n{request.system}"] if request.system else []
    parts += [f"## {m.role}\n\n{m.text}" for m in request.messages]
    return "\n\n".join(parts)


def prompt_matches(entry: dict[str, Any], request: Request, *, where: str) -> bool:
    """Whether a reply line carries a ``prompt_sha256`` (``False``: none, an unchecked reply).

    Raises:
      LLMError: it carries one that is malformed or is not the hash of ``request``'s text (names ``where``).
    """
    if "prompt_sha256" not in entry:
        return False
    recorded = checked_sha256(entry["prompt_sha256"], where=where)
    if recorded != prompt_sha256(request_text(request)):
        raise LLMError(f"{where}: its prompt_sha256 is not the hash of the request's text: the answering side saw "
                       f"another prompt; fix or delete that line")
    return True


def _asked(request: Any, entry: dict[str, Any], where: str) -> bool:
    """Whether a reply's prompt hash was checked against the request it answers (``False``: no hash, or the
    request is no longer in ``pending.jsonl`` or does not parse: nothing to check it against)."""
    try:
        parsed = Request.from_json(request)
    except (KeyError, TypeError, ValueError, AttributeError):
        return False
    return prompt_matches(entry, parsed, where=where)


def _reply(entry: dict[str, Any], model: str) -> Response:
    texts = entry["texts"] if "texts" in entry else [entry["text"]]
    if not isinstance(texts, list) or not texts or not all(isinstance(t, str) for t in texts):
        raise TypeError(f"\"texts\" must be a non-empty list of strings, got {texts!r:.80}")
    reasons = tuple(entry.get("finish_reasons") or ("STOP",) * len(texts))
    return Response(tuple(texts), reasons, Usage(**entry.get("usage", {})), 0.0, entry.get("model", model),
                    batch=bool(entry.get("batch", True)))


class BatchFileClient:
    """A :class:`cwm.llm.Client` whose replies come from files (see the module docstring).

    Keys are those of the cache: the request hash, plus ``#k`` for the k-th ask of a sampled request. Its
    ``ledger`` counts the replies read (at batch rates where a reply says so) and the requests left pending.

    Args:
      directory: the batch directory (created).
      model: the model id the requests are meant for (part of the key; default "batch": any model).
      wait_s: how long ``complete`` waits for a missing reply before raising (default 0: at once).
      poll_s: how often it looks while waiting (default 5 s).
      sleep: the sleeping function (tests inject one).
    """

    def __init__(self, directory: Path | str, *, model: str = DEFAULT_MODEL, wait_s: float = 0.0,
                 poll_s: float = 5.0, sleep: Callable[[float], None] = time.sleep) -> None:
        self.directory = Path(directory)
        try:
            self.directory.mkdir(parents=True, exist_ok=True)
        except OSError as e:  # a file in the way, or no permission
            raise LLMConfigError(f"batch directory {self.directory} cannot be used: {type(e).__name__}: {e}") from e
        self.model, self.wait_s, self.poll_s, self._sleep = model, wait_s, poll_s, sleep
        self._asks = AskCounter()
        self._lock = threading.Lock()
        self.ledger = Ledger()

    def complete(self, request: Request) -> Response:
        """The reply from ``replies.jsonl``, counted in ``ledger``.

        Raises:
          PendingBatch: no reply yet (after ``wait_s``); the request is now in ``pending.jsonl``.
          LLMError: the reply entry is malformed (names the key): ``texts`` must be a non-empty list of
            strings (or ``text`` one string).
        """
        return self.ledger.count(self.model, request, self._answer)

    def _answer(self, request: Request) -> Response:
        key = self._asks.key(request, self.model)
        deadline = time.monotonic() + self.wait_s
        self._add_pending(key, request)
        while True:
            entry = self._find_reply(key)
            if entry is not None:
                prompt_matches(entry, request, where=f"{self.directory / REPLIES_FILE}: reply for key {key}")
                try:
                    return _reply(entry, self.model)
                except (KeyError, TypeError) as e:
                    raise LLMError(f"{self.directory / REPLIES_FILE}: reply for key {key} is malformed: {e!r}") from e
            if time.monotonic() >= deadline:
                count = len(pending_requests(self.directory))
                raise PendingBatch(
                    f"{count} request(s) wait for replies in {self.directory / PENDING_FILE}; write their answers "
                    f"to {self.directory / REPLIES_FILE} (one {{\"key\", \"texts\"}} object a line, e.g. with "
                    f"`cwm llm answer-batch {self.directory}`, or from text files: `cwm llm pending "
                    f"{self.directory} --export DIR`) and run again", directory=self.directory, pending=count)
            self._sleep(self.poll_s)

    def provenance(self, *, answered_by: str | None = None) -> Provenance:
        """Who answered this directory's replies and whether each was checked: ``answered_by`` the replies'
        ``"model"`` (the one name, or the names joined; ``cwm.llm.provenance.short_name``), else ``answered_by``, else
        ``"unknown"``; relay ``relay-hashed`` when every reply carried a prompt hash matching its request,
        else ``relay-unchecked``. Read from the whole directory, so a resumed run counts the replies of every
        earlier call too.

        Raises:
          LLMError: a batch file that does not read, or a reply whose prompt hash does not match its request.
        """
        replies = _read_jsonl(self.directory / REPLIES_FILE)
        requests = {e.get("key"): e.get("request") for e in _read_jsonl(self.directory / PENDING_FILE)}
        hashed, names = 0, []
        for entry in replies:
            where = f"{self.directory / REPLIES_FILE}: reply for key {entry.get('key')}"
            if _asked(requests.get(entry.get("key")), entry, where):
                hashed += 1
            name = entry.get("model")
            if type(name) is str and name != DEFAULT_MODEL and name not in names:
                names.append(checked_name(name, where=where, field="model", limit=1 << 20))
        who = ", ".join(names) or answered_by or "unknown"
        relay = "relay-hashed" if replies and hashed == len(replies) else "relay-unchecked"
        try:
            return Provenance(short_name(who), relay, today(), len(replies), hashed)
        except ProvenanceError as e:
            raise LLMError(f"{self.directory / REPLIES_FILE}: {e}") from None

    def _find_reply(self, key: str) -> dict[str, Any] | None:
        return next((r for r in _read_jsonl(self.directory / REPLIES_FILE) if r.get("key") == key), None)

    def _add_pending(self, key: str, request: Request) -> None:
        with self._lock:
            if self._find_reply(key) is not None or key in {e.get("key") for e in
                                                            _read_jsonl(self.directory / PENDING_FILE)}:
                return
            line = json.dumps({"key": key, "model": self.model, "request": request.to_json()}, ensure_ascii=False)
            _append_line(self.directory / PENDING_FILE, line)


def _append_line(path: Path, line: str) -> None:
    """Appends ``line`` and a newline in one ``write`` on a file opened for appending, so that lines written
    by several processes at once (the arena's workers, each with an LLM agent on one batch directory) never
    interleave, however long a line is (a buffered write splits a long line into several)."""
    data = (line + "\n").encode("utf-8")
    fd = os.open(path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o644)
    try:
        written = os.write(fd, data)
        while written < len(data):  # a short write (a signal, a full disk): the rest follows at once
            written += os.write(fd, data[written:])
    finally:
        os.close(fd)


def answer_pending(directory: Path | str, client: Client, *, limit: int | None = None, batch: bool = False,
                   model: str | None = None) -> int:
    """Answers the requests waiting in ``directory`` with ``client``; appends each to ``replies.jsonl``.

    Args:
      directory: the batch directory.
      client: any client (a real provider, a replay file, a scripted one).
      limit: answer at most this many (default all).
      batch: whether ``client`` bills at a provider's batch rate; written to each reply as ``"batch"`` so
        the batch client prices it right (default False: ordinary calls at full price).
      model: answer only the requests meant for this model (and those written without one); default all.

    Returns:
      How many requests were answered.
    """
    directory = Path(directory)
    waiting = [(key, request) for key, (meant, request) in pending_entries(directory).items()
               if model is None or meant in (model, DEFAULT_MODEL)][:limit]
    for key, request in waiting:
        response = client.complete(request)
        entry = {"key": key, "texts": list(response.texts), "finish_reasons": list(response.finish_reasons),
                 "usage": response.to_json()["usage"], "model": response.model, "batch": batch,
                 "prompt_sha256": prompt_sha256(request_text(request))}  # the client was given the request itself
        with open(directory / REPLIES_FILE, "a", encoding="utf-8") as f:
            f.write(json.dumps(entry, ensure_ascii=False) + "\n")
    return len(waiting)
