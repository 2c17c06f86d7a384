"""The batch/file client: requests go to ``pending.jsonl``; replies come back through ``replies.jsonl``.

This serves providers' batch APIs (half price, answers within hours) and answering prompts by any
other means (another tool, a person). A request without a reply is written to ``pending.jsonl`` and
raises :class:`PendingBatch` (or, with ``wait_s``, waits for the reply). Run the same program again
once ``replies.jsonl`` holds the answers: every request already answered returns at once.

Files (JSON Lines, in the batch directory):
  pending.jsonl: ``{"key", "model", "request"}`` per request waiting (duplicates are ignored).
  replies.jsonl: ``{"key", "texts": [...]}`` (or ``"text"``), optionally ``"finish_reasons"``,
    ``"usage": {"input_tokens", "output_tokens", "thinking_tokens"}`` and ``"model"``.
"""

from __future__ import annotations

import json
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from cwm.llm.base import Client, LLMError, Request, Response, Usage
from cwm.llm.cache import AskCounter

PENDING_FILE = "pending.jsonl"
REPLIES_FILE = "replies.jsonl"


class PendingBatch(LLMError):
    """Requests wait for replies in a batch directory; answer them and run again.

    Attributes:
      directory: the batch directory.
      pending: how many distinct requests wait there.
    """

    def __init__(self, message: str, *, directory: Path, pending: int) -> None:
        super().__init__(message)
        self.directory = directory
        self.pending = pending


def _read_jsonl(path: Path) -> list[dict[str, Any]]:
    if not path.is_file():
        return []
    out = []
    for line in path.read_text(encoding="utf-8").splitlines():
        try:
            out.append(json.loads(line))
        except json.JSONDecodeError:
            continue  # a line still being written by another process
    return out


def pending_requests(directory: Path | str) -> dict[str, Request]:
    """The requests waiting in ``directory`` without a reply, by key."""
    directory = Path(directory)
    answered = {r.get("key") for r in _read_jsonl(directory / REPLIES_FILE)}
    return {e["key"]: Request.from_json(e["request"]) for e in _read_jsonl(directory / PENDING_FILE)
            if e["key"] not in answered}


def _reply(entry: dict[str, Any], model: str) -> Response:
    texts = tuple(entry["texts"]) if "texts" in entry else (entry["text"],)
    reasons = tuple(entry.get("finish_reasons") or ("STOP",) * len(texts))
    return Response(texts, reasons, Usage(**entry.get("usage", {})), 0.0, entry.get("model", model))


class BatchFileClient:
    """A :class:`cwm.llm.Client` whose replies come from files (see the module docstring).

    Keys are those of the cache: the request hash, plus ``#k`` for the k-th ask of a sampled request.

    Args:
      directory: the batch directory (created).
      model: the model id the requests are meant for (part of the key; default "batch").
      wait_s: how long ``complete`` waits for a missing reply before raising (default 0: at once).
      poll_s: how often it looks while waiting (default 5 s).
      sleep: the sleeping function (tests inject one).
    """

    def __init__(self, directory: Path | str, *, model: str = "batch", wait_s: float = 0.0, poll_s: float = 5.0,
                 sleep: Callable[[float], None] = time.sleep) -> None:
        self.directory = Path(directory)
        self.directory.mkdir(parents=True, exist_ok=True)
        self.model, self.wait_s, self.poll_s, self._sleep = model, wait_s, poll_s, sleep
        self._asks = AskCounter()
        self._lock = threading.Lock()

    def complete(self, request: Request) -> Response:
        """The reply from ``replies.jsonl``.

        Raises:
          PendingBatch: no reply yet (after ``wait_s``); the request is now in ``pending.jsonl``.
          LLMError: the reply entry is malformed (names the key).
        """
        key = self._asks.key(request, self.model)
        deadline = time.monotonic() + self.wait_s
        self._add_pending(key, request)
        while True:
            entry = self._find_reply(key)
            if entry is not None:
                try:
                    return _reply(entry, self.model)
                except (KeyError, TypeError) as e:
                    raise LLMError(f"{self.directory / REPLIES_FILE}: reply for key {key} is malformed: {e!r}") from e
            if time.monotonic() >= deadline:
                count = len(pending_requests(self.directory))
                raise PendingBatch(
                    f"{count} request(s) wait for replies in {self.directory / PENDING_FILE}; write their answers "
                    f"to {self.directory / REPLIES_FILE} (one {{\"key\", \"texts\"}} object a line, e.g. with "
                    f"`cwm llm answer-batch {self.directory}`) and run again", directory=self.directory, pending=count)
            self._sleep(self.poll_s)

    def _find_reply(self, key: str) -> dict[str, Any] | None:
        return next((r for r in _read_jsonl(self.directory / REPLIES_FILE) if r.get("key") == key), None)

    def _add_pending(self, key: str, request: Request) -> None:
        with self._lock:
            if self._find_reply(key) is not None or key in {e.get("key") for e in
                                                            _read_jsonl(self.directory / PENDING_FILE)}:
                return
            line = json.dumps({"key": key, "model": self.model, "request": request.to_json()}, ensure_ascii=False)
            with open(self.directory / PENDING_FILE, "a", encoding="utf-8") as f:
                f.write(line + "\n")


def answer_pending(directory: Path | str, client: Client, *, limit: int | None = None) -> int:
    """Answers the requests waiting in ``directory`` with ``client``; appends each to ``replies.jsonl``.

    Args:
      directory: the batch directory.
      client: any client (a real provider, a replay file, a scripted one).
      limit: answer at most this many (default all).

    Returns:
      How many requests were answered.
    """
    directory = Path(directory)
    waiting = list(pending_requests(directory).items())[:limit]
    for key, request in waiting:
        response = client.complete(request)
        entry = {"key": key, "texts": list(response.texts), "finish_reasons": list(response.finish_reasons),
                 "usage": response.to_json()["usage"], "model": response.model}
        with open(directory / REPLIES_FILE, "a", encoding="utf-8") as f:
            f.write(json.dumps(entry, ensure_ascii=False) + "\n")
    return len(waiting)
