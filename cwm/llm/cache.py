"""A disk cache of LLM replies in SQLite: the same request asked again is answered at zero cost.

The key is the hash of the normalised request (model id, system text, messages, every sampling
setting and ``sample_index``; not the tag) plus an occurrence number. Deterministic requests
(``temperature == 0`` and ``n == 1``) always use occurrence 0. Sampled requests count how often this
cache object has seen the identical request: the k-th ask gets occurrence k. So a re-run that asks the
same sequence of questions gets the same replies, while asking the same sampled question twice in one
run still gets two distinct samples, as a provider would give.

Concurrent writers (threads or processes) are safe: WAL journal, a busy timeout, and INSERT OR IGNORE
so the first stored reply for a key wins.
"""

from __future__ import annotations

import collections
import json
import sqlite3
import threading
import time
from pathlib import Path

from cwm.llm.base import Client
from cwm.llm.ledger import Ledger
from cwm.llm.types import LLMConfigError, Request, Response

_SCHEMA = """
CREATE TABLE IF NOT EXISTS replies (
    key TEXT PRIMARY KEY,
    model TEXT NOT NULL,
    tag TEXT NOT NULL,
    request TEXT NOT NULL,
    response TEXT NOT NULL,
    created REAL NOT NULL
)
"""


def is_sampled(request: Request) -> bool:
    """Whether repeated asks of ``request`` are meant to give different replies."""
    return request.temperature > 0 or request.n > 1


def _write_ahead_log(db: sqlite3.Connection, busy_timeout_s: float) -> None:
    """Switches ``db`` to write-ahead logging. While another process is opening the same new file, SQLite
    answers the switch with "database is locked" at once, without waiting out the busy timeout: the switch is
    tried again until it takes or the timeout (a backstop: the other process holds the lock for microseconds)
    has passed."""
    deadline = time.monotonic() + busy_timeout_s
    while True:
        try:
            db.execute("PRAGMA journal_mode = WAL")
            return
        except sqlite3.OperationalError as e:
            if "locked" not in str(e) or time.monotonic() > deadline:
                raise
            time.sleep(0.005)


class ReplyStore:
    """The SQLite file: ``get`` and ``put`` of replies by key. One connection per store, behind a lock.

    Args:
      path: the database file (created with its parent folders).
      busy_timeout_s: how long a writer waits for another process's lock (default 60 s).

    Raises:
      LLMConfigError: the file cannot be opened as a cache (a directory, no permission, not SQLite).
    """

    def __init__(self, path: Path | str, *, busy_timeout_s: float = 60.0) -> None:
        self.path = Path(path)
        self._lock = threading.Lock()
        try:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            self._db = sqlite3.connect(self.path, timeout=busy_timeout_s, check_same_thread=False,
                                       isolation_level=None)
            self._db.execute(f"PRAGMA busy_timeout = {int(busy_timeout_s * 1000)}")
            _write_ahead_log(self._db, busy_timeout_s)
            self._db.execute("PRAGMA synchronous = NORMAL")
            self._db.execute(_SCHEMA)
        except (OSError, sqlite3.Error) as e:
            raise LLMConfigError(f"LLM cache {self.path} cannot be opened: {type(e).__name__}: {e}") from e

    def get(self, key: str) -> Response | None:
        """The stored reply for ``key``, or ``None``.

        Raises:
          LLMConfigError: the stored reply is not a reply (a damaged row; names the file and the key).
        """
        with self._lock:
            row = self._db.execute("SELECT response FROM replies WHERE key = ?", (key,)).fetchone()
        if row is None:
            return None
        try:
            return Response.from_json(json.loads(row[0]))
        except (ValueError, KeyError, TypeError, AttributeError) as e:
            raise LLMConfigError(f"LLM cache {self.path}: the reply stored for key {key} is damaged "
                                 f"({type(e).__name__}: {e}); delete that row, or the file") from e

    def put(self, key: str, model: str, request: Request, response: Response) -> None:
        """Stores a reply unless ``key`` already has one (the first writer wins)."""
        row = (key, model, request.tag, json.dumps(request.to_json()), json.dumps(response.to_json()), time.time())
        with self._lock:
            self._db.execute("INSERT OR IGNORE INTO replies VALUES (?, ?, ?, ?, ?, ?)", row)

    def __len__(self) -> int:
        with self._lock:
            return int(self._db.execute("SELECT COUNT(*) FROM replies").fetchone()[0])

    def close(self) -> None:
        with self._lock:
            self._db.close()


class AskCounter:
    """Keys for successive asks: the request hash, plus ``#k`` on the k-th ask of a sampled request."""

    def __init__(self) -> None:
        self._seen: collections.Counter[str] = collections.Counter()
        self._lock = threading.Lock()

    def key(self, request: Request, model: str) -> str:
        """The key of this ask of ``request`` (counts the ask for sampled requests)."""
        base = request.key(model)
        if not is_sampled(request):
            return base
        with self._lock:
            occurrence = self._seen[base]
            self._seen[base] += 1
        return f"{base}#{occurrence}"


class CachedClient:
    """Answers from the :class:`ReplyStore` when it can, else asks ``inner`` and stores the reply.

    Replies served from the store have ``cached=True``; their ``usage`` is what the original call used. Its
    ``ledger`` is the inner client's: the calls a miss sent on.

    Args:
      inner: the client to ask on a miss.
      path: the SQLite file.
    """

    def __init__(self, inner: Client, path: Path | str) -> None:
        self.inner, self.model = inner, inner.model
        self.store = ReplyStore(path)
        self._asks = AskCounter()
        self._lock = threading.Lock()
        self.hits = 0
        self.misses = 0

    @property
    def ledger(self) -> Ledger:
        """The inner client's ledger."""
        return self.inner.ledger

    def complete(self, request: Request) -> Response:
        key = self._asks.key(request, self.model)
        stored = self.store.get(key)
        if stored is not None:
            with self._lock:
                self.hits += 1
            return Response(stored.texts, stored.finish_reasons, stored.usage, 0.0, stored.model, cached=True)
        response = self.inner.complete(request)
        with self._lock:
            self.misses += 1
        self.store.put(key, self.model, request, response)
        return response
