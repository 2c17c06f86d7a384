"""Record every request and reply to a JSONL file; replay such a file offline, never answering wrongly.

One line per call: ``{"schema", "key", "occurrence", "model", "request", "response"}``. ``key`` is
:meth:`Request.key` of the model; ``occurrence`` counts earlier lines with the same key, so a session
that asked the same sampled question twice replays both samples in order. A request the recording does
not hold is an error naming the nearest recorded prompt and what differs.
"""

from __future__ import annotations

import collections
import dataclasses
import json
import os
import threading
from pathlib import Path
from typing import Any

from cwm.files import RECORDS_BYTES, InputLimitError, LineError, not_a_file, parse_jsonl, read_bounded
from cwm.llm.base import Client
from cwm.llm.cache import is_sampled
from cwm.llm.ledger import Ledger
from cwm.llm.types import LLMError, Request, Response

REPLAY_SCHEMA = "cwm.llm.replay/1"


class ReplayMissError(LLMError, LookupError):
    """The replay file holds no reply for a request (the message names the nearest recorded prompt)."""


class ReplayFormatError(LLMError, ValueError):
    """A replay file is missing, empty, or has a malformed line (the message names the line)."""


def read_replay(path: Path | str) -> list[dict[str, Any]]:
    """The entries of a replay file in order. A truncated last line (a crash mid-write) is ignored.

    Raises:
      ReplayFormatError: the file is missing, or a line other than the last is not a valid entry (not UTF-8,
        not JSON, or not shaped as an entry; names the file and line), or the file is over ``RECORDS_BYTES``
        or not a regular file (checked before it is read).
    """
    path = Path(path)
    if why := not_a_file(path, "replay file"):
        raise ReplayFormatError(why)
    try:
        data = read_bounded(path, RECORDS_BYTES, what="replay file")
        entries, _ = parse_jsonl(path, data, _entry, what="a replay entry")
    except (LineError, InputLimitError) as e:
        raise ReplayFormatError(str(e)) from e
    return entries


def _entry(entry: Any) -> dict[str, Any]:
    Request.from_json(entry["request"]), Response.from_json(entry["response"]), entry["key"]
    return dict(entry)


class ReplayClient:
    """Answers from a recorded file; a request it does not hold raises :class:`ReplayMissError`.

    Replies have ``cached=True`` and the recorded usage. A deterministic request asked more often than
    recorded gets its last recorded reply again; a sampled one (temperature > 0 or n > 1) is an error. Its
    ``ledger`` counts the replies (as cached: they cost nothing) and the misses (as errors).

    Args:
      path: the JSONL file a :class:`RecordingClient` wrote.
      model: the model id the keys were made with (default: the file's, which must then be one model).

    Raises:
      ReplayFormatError: the file is missing, malformed, empty, or mixes models and none was given.
    """

    def __init__(self, path: Path | str, *, model: str | None = None) -> None:
        self.path = Path(path)
        entries = read_replay(self.path)
        if not entries:
            raise ReplayFormatError(f"replay file {self.path} holds no entries")
        models = sorted({e["model"] for e in entries})
        if model is None:
            if len(models) != 1:
                raise ReplayFormatError(f"replay file {self.path} holds models {models}: pass model= to pick one")
            model = models[0]
        self.model = model
        self._replies: dict[str, list[Response]] = collections.defaultdict(list)
        self._requests: dict[str, Request] = {}
        for e in sorted((e for e in entries if e["model"] == model), key=lambda e: e.get("occurrence", 0)):
            self._replies[e["key"]].append(Response.from_json(e["response"]))
            self._requests[e["key"]] = Request.from_json(e["request"])
        self._asked: collections.Counter[str] = collections.Counter()
        self._lock = threading.Lock()
        self.ledger = Ledger()

    def complete(self, request: Request) -> Response:
        """The recorded reply to ``request``, counted in ``ledger``.

        Raises:
          ReplayMissError: the file holds no reply for it (or no further sample).
        """
        return self.ledger.count(self.model, request, self._answer)

    def _answer(self, request: Request) -> Response:
        key = request.key(self.model)
        with self._lock:
            replies = self._replies.get(key)
            if not replies:
                raise ReplayMissError(self._miss_message(request))
            occurrence = self._asked[key]
            self._asked[key] += 1
        if occurrence >= len(replies):
            if is_sampled(request):
                raise ReplayMissError(
                    f"replay file {self.path} recorded {len(replies)} samples of this request (tag "
                    f"{request.tag!r}); this is ask number {occurrence + 1}")
            occurrence = len(replies) - 1
        return dataclasses.replace(replies[occurrence], cached=True)

    def _miss_message(self, request: Request) -> str:
        head = (f"replay file {self.path} has no reply for this request (model {self.model!r}, tag "
                f"{request.tag!r}, last user message {_clip(request.last_user_text)!r})")
        nearest = nearest_request(request, list(self._requests.values()))
        if nearest is None:
            return head + f"; the file holds no requests for model {self.model!r}"
        ratio, other = nearest
        return head + f"; nearest recorded prompt (similarity {ratio:.2f}, tag {other.tag!r}): " + describe_difference(
            request, other)


def nearest_request(request: Request, recorded: list[Request]) -> tuple[float, Request] | None:
    """The recorded request whose last user message is most similar, with the similarity: the share of the
    longer message that the two have in common at their start and their end (``common_ends``). Linear in
    the total length of the messages (a prompt differs from its recording in one region: a changed rule, a
    new failing test), so a miss among hundreds of 100 KB prompts is reported at once."""
    target = request.last_user_text
    best: tuple[float, Request] | None = None
    for other in recorded:
        text = other.last_user_text
        ratio = sum(common_ends(target, text)) / max(len(target), len(text), 1)
        if best is None or ratio > best[0]:
            best = (ratio, other)
    return best


def common_ends(a: str, b: str) -> tuple[int, int]:
    """The lengths of the common prefix of ``a`` and ``b`` and of their common suffix after it, in linear time
    (each halving step compares one slice, so the slices compared add up to twice the strings' length)."""
    prefix = _common(a, b, min(len(a), len(b)), lambda s, i, j: s[i:j])
    room = min(len(a), len(b)) - prefix
    return prefix, _common(a, b, room, lambda s, i, j: s[len(s) - j:len(s) - i])


def _common(a: str, b: str, most: int, part: Any) -> int:
    """The largest ``n <= most`` with ``part(a, 0, n) == part(b, 0, n)``, by halving."""
    lo, hi = 0, most  # part(a, 0, lo) == part(b, 0, lo) holds
    while lo < hi:
        mid = (lo + hi + 1) // 2
        if part(a, lo, mid) == part(b, lo, mid):
            lo = mid
        else:
            hi = mid - 1
    return lo


def describe_difference(request: Request, other: Request) -> str:
    """A short account of how ``request`` differs from the recorded ``other``."""
    mine, theirs = request.to_json(), other.to_json()
    settings = [f"{k} {mine[k]!r} (recorded {theirs[k]!r})" for k in mine
                if k not in ("messages", "tag") and mine[k] != theirs[k]]
    a, b = request.last_user_text, other.last_user_text
    if a == b:
        same = "same last user message" if mine["messages"] == theirs["messages"] else "same last user message, earlier turns differ"
        return f"{same}; settings differ: {', '.join(settings) or 'none'}"
    at, tail = common_ends(a, b)
    text = (f"{_clip(b)!r}; first difference at character {at}: asked {_clip(a[at:at + 60])!r}, recorded "
            f"{_clip(b[at:at + 60])!r}; the differing region is {len(a) - at - tail} characters long (recorded "
            f"{len(b) - at - tail})")
    return text + (f"; settings differ: {', '.join(settings)}" if settings else "")


def _clip(text: str, limit: int = 160) -> str:
    return text if len(text) <= limit else text[:limit] + "..."


class RecordingClient:
    """Passes requests to ``inner`` and appends each reply to a replay file (one flushed, fsynced line).

    Its ``ledger`` is the inner client's.

    Args:
      inner: the client to record.
      path: the JSONL file; an existing file is continued (its occurrence counts are read first).
    """

    def __init__(self, inner: Client, path: Path | str) -> None:
        self.inner, self.model = inner, inner.model
        self.path = Path(path)
        self.path.parent.mkdir(parents=True, exist_ok=True)
        self._count: collections.Counter[str] = collections.Counter()
        if self.path.is_file() and self.path.stat().st_size:
            self._count.update(e["key"] for e in read_replay(self.path) if e["model"] == self.model)
        self._lock = threading.Lock()

    @property
    def ledger(self) -> Ledger:
        """The inner client's ledger."""
        return self.inner.ledger

    def complete(self, request: Request) -> Response:
        response = self.inner.complete(request)
        key = request.key(self.model)
        with self._lock:
            entry = {"schema": REPLAY_SCHEMA, "key": key, "occurrence": self._count[key], "model": self.model,
                     "request": request.to_json(), "response": dataclasses.replace(response, cached=False).to_json()}
            self._count[key] += 1
            with open(self.path, "a", encoding="utf-8") as f:
                f.write(json.dumps(entry, ensure_ascii=False) + "\n")
                f.flush()
                os.fsync(f.fileno())
        return response
