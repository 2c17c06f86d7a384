"""Fake Gemini and OpenAI-compatible HTTP servers on 127.0.0.1, scriptable, for tests and offline demos.

The real SDKs talk to these servers unchanged (point them at ``server.base_url``), so tests exercise
the same code path as production: request building, HTTP errors, JSON parsing, timeouts.

A server answers each request with the next scripted action: a reply text (``str``), a list of
candidate texts, or one of :class:`Reply`, :class:`Fail`, :class:`Hang`, :class:`Raw`,
:class:`Blocked`. When the script is empty it answers ``default`` (a text) if set, else a 400 saying
the script is exhausted. A function given to ``script_by`` picks the action from the request body
instead (for requests sent concurrently, whose order of arrival is not fixed). Every request is kept in ``requests`` and every reported token in ``usage``.
Only 127.0.0.1 is ever bound.
"""

from __future__ import annotations

import collections
import dataclasses
import json
import re
import threading
from collections.abc import Callable
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any, TypeVar

from cwm.llm.factory import make_client
from cwm.llm.shared import ManagedClient

Action = Any  # str | list[str] | Reply | Fail | Hang | Raw | Blocked
_S = TypeVar("_S", bound="FakeServer")


@dataclasses.dataclass(frozen=True)
class Reply:
    """A successful reply; ``texts`` has one entry per candidate (a lone text fills every candidate)."""

    texts: tuple[str, ...]
    finish_reason: str = "STOP"
    thoughts_tokens: int = 0


@dataclasses.dataclass(frozen=True)
class Fail:
    """An HTTP error status with a JSON error body (and a ``Retry-After`` header if given)."""

    status: int
    message: str = "fake failure"
    retry_after: float | None = None


@dataclasses.dataclass(frozen=True)
class Hang:
    """Wait ``seconds`` (or until the server stops) before answering with ``then``."""

    seconds: float
    then: Action = "late reply"


@dataclasses.dataclass(frozen=True)
class Raw:
    """A raw body, e.g. malformed JSON."""

    body: bytes
    status: int = 200


@dataclasses.dataclass(frozen=True)
class Blocked:
    """A reply with no usable candidate: the prompt was blocked for ``reason``."""

    reason: str = "SAFETY"


@dataclasses.dataclass(frozen=True)
class Seen:
    """One request the server received."""

    path: str
    headers: dict[str, str]
    body: Any


def count_tokens(text: str) -> int:
    """The fake's token count: one per started group of 4 characters."""
    return (len(text) + 3) // 4


class FakeServer:
    """Base of the fakes: a threaded HTTP server on 127.0.0.1 with a script and a request log.

    Args:
      models: model ids the server knows; others get a 404 naming the model.
      default: the reply text once the script is empty (``None``: a 400 saying it is exhausted).
    """

    provider = ""  # the make_client spec prefix of the fake's wire format

    def __init__(self, *, models: tuple[str, ...], default: str | None = None) -> None:
        self.models = set(models)
        self.default = default
        self.requests: list[Seen] = []
        self.usage: collections.Counter[str] = collections.Counter()
        self._script: collections.deque[Action] = collections.deque()
        self._by: Callable[[Any], Action | None] | None = None
        self._lock = threading.Lock()
        self._stop = threading.Event()
        self._httpd: ThreadingHTTPServer | None = None

    # -- lifecycle
    def start(self: _S) -> _S:
        """Binds a free port on 127.0.0.1 and serves in a daemon thread."""
        server = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self) -> None:  # noqa: N802 (http.server's naming)
                server._handle(self)

            def log_message(self, *args: Any) -> None:
                pass

        self._httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self._httpd.daemon_threads = True
        self._httpd.block_on_close = False  # type: ignore[attr-defined]
        threading.Thread(target=self._httpd.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True).start()
        return self

    def stop(self) -> None:
        """Stops serving; hanging handlers are released."""
        self._stop.set()
        if self._httpd is not None:
            self._httpd.shutdown()
            self._httpd.server_close()

    def __enter__(self: _S) -> _S:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()

    @property
    def port(self) -> int:
        assert self._httpd is not None, "server not started"
        return int(self._httpd.server_address[1])

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    @property
    def request_count(self) -> int:
        with self._lock:
            return len(self.requests)

    def client(self, **options: Any) -> ManagedClient:
        """A :func:`cwm.llm.make_client` client pointed at this server (fake key, no real sleeping).

        ``options`` go to ``make_client``; ``model`` picks the model (default: the first known one).
        """
        model = options.pop("model", sorted(self.models)[0])
        settings: dict[str, Any] = {"api_key": "fake-key", "base_url": self.base_url, "sleep": lambda s: None}
        return make_client(f"{self.provider}:{model}", **{**settings, **options})

    # -- scripting
    def script(self, *actions: Action) -> FakeServer:
        """Appends actions; each answers one request, in order."""
        with self._lock:
            self._script.extend(actions)
        return self

    def script_by(self, pick: Callable[[Any], Action | None] | None) -> FakeServer:
        """Answers each request with ``pick(body)`` (the request's JSON body), or with the script when it
        returns ``None``; ``None`` instead of a function goes back to the script alone."""
        self._by = pick
        return self

    def _next(self, body: Any = None) -> Action:
        picked = self._by(body) if self._by is not None else None
        if picked is not None:
            return picked
        with self._lock:
            if self._script:
                return self._script.popleft()
        if self.default is not None:
            return self.default
        return Fail(400, f"fake server script exhausted after {len(self.requests)} requests")

    # -- serving
    def _handle(self, h: BaseHTTPRequestHandler) -> None:
        raw = h.rfile.read(int(h.headers.get("Content-Length") or 0))
        try:
            body = json.loads(raw or b"{}")
        except json.JSONDecodeError:
            body = None
        with self._lock:
            self.requests.append(Seen(h.path, {k.lower(): v for k, v in h.headers.items()}, body))
        model, problem = self._route(h.path, body or {})
        if problem:  # unknown model or path: answered without using up a scripted action
            self._send(h, 404, {}, json.dumps(self._error_body(404, problem)).encode())
            return
        action = self._next(body or {})
        if isinstance(action, Hang):
            if self._stop.wait(action.seconds):
                return
            action = action.then
        self._send(h, *self._answer(model, body, action))

    def _send(self, h: BaseHTTPRequestHandler, status: int, headers: dict[str, str], payload: bytes) -> None:
        try:
            h.send_response(status)
            for k, v in {"Content-Type": "application/json", **headers}.items():
                h.send_header(k, v)
            h.send_header("Content-Length", str(len(payload)))
            h.end_headers()
            h.wfile.write(payload)
        except (BrokenPipeError, ConnectionResetError):
            pass  # the client gave up (timeout); nothing to answer

    def _answer(self, model: str, body: Any, action: Action) -> tuple[int, dict[str, str], bytes]:
        if isinstance(action, Raw):
            return action.status, {}, action.body
        if isinstance(action, Fail):
            headers = {} if action.retry_after is None else {"Retry-After": f"{action.retry_after:g}"}
            return action.status, headers, json.dumps(self._error_body(action.status, action.message)).encode()
        if isinstance(action, str):
            action = Reply((action,))
        elif isinstance(action, (list, tuple)):
            action = Reply(tuple(action))
        return 200, {}, json.dumps(self._success(model, body, action)).encode()

    def _route(self, path: str, body: Any) -> tuple[str, str]:
        """The model asked for, and a problem text if it is unknown or the path is wrong."""
        raise NotImplementedError

    def _error_body(self, status: int, message: str) -> dict[str, Any]:
        raise NotImplementedError

    def _success(self, model: str, body: Any, action: Reply | Blocked) -> dict[str, Any]:
        raise NotImplementedError

    def _count(self, prompt: int, output: int, thoughts: int) -> dict[str, int]:
        with self._lock:
            self.usage.update(input_tokens=prompt, output_tokens=output, thinking_tokens=thoughts)
        return {"prompt": prompt, "output": output, "thoughts": thoughts}


_GEMINI_PATH = re.compile(r"^/[\w.]+/models/([^/:]+):generateContent$")
_STATUS_NAMES = {400: "INVALID_ARGUMENT", 403: "PERMISSION_DENIED", 404: "NOT_FOUND",
                 429: "RESOURCE_EXHAUSTED", 500: "INTERNAL", 503: "UNAVAILABLE"}


class FakeGemini(FakeServer):
    """A fake of the Gemini API's ``models/<model>:generateContent`` (the google-genai SDK's wire format).

    Usage it reports: prompt tokens from the system and message texts, candidate tokens from the reply
    texts, thought tokens as scripted (:func:`count_tokens` counts).
    """

    provider = "gemini"

    def __init__(self, *, models: tuple[str, ...] = ("gemini-2.5-pro", "gemini-test"), default: str | None = None):
        super().__init__(models=models, default=default)

    def _route(self, path: str, body: Any) -> tuple[str, str]:
        match = _GEMINI_PATH.match(path.split("?")[0])
        if not match:
            return "", f"fake gemini: no route for {path}"
        if match.group(1) not in self.models:
            return match.group(1), f"models/{match.group(1)} is not found for API version fake"
        return match.group(1), ""

    def _error_body(self, status: int, message: str) -> dict[str, Any]:
        return {"error": {"code": status, "message": message, "status": _STATUS_NAMES.get(status, "UNKNOWN")}}

    def _success(self, model: str, body: Any, action: Reply | Blocked) -> dict[str, Any]:
        texts = [p.get("text", "") for c in body.get("contents", []) for p in c.get("parts", [])]
        texts += [p.get("text", "") for p in (body.get("systemInstruction") or {}).get("parts", [])]
        prompt = count_tokens("".join(texts))
        if isinstance(action, Blocked):
            self._count(prompt, 0, 0)
            return {"promptFeedback": {"blockReason": action.reason},
                    "usageMetadata": {"promptTokenCount": prompt, "totalTokenCount": prompt}}
        n = int((body.get("generationConfig") or {}).get("candidateCount") or 1)
        replies = action.texts * n if len(action.texts) == 1 else action.texts
        output = sum(count_tokens(t) for t in replies)
        self._count(prompt, output, action.thoughts_tokens)
        candidates = [{"content": {"role": "model", "parts": [{"text": t}]}, "finishReason": action.finish_reason,
                       "index": i} for i, t in enumerate(replies)]
        usage = {"promptTokenCount": prompt, "candidatesTokenCount": output,
                 "totalTokenCount": prompt + output + action.thoughts_tokens}
        if action.thoughts_tokens:
            usage["thoughtsTokenCount"] = action.thoughts_tokens
        return {"candidates": candidates, "usageMetadata": usage, "modelVersion": model}


class FakeOpenAI(FakeServer):
    """A fake of an OpenAI-compatible ``/v1/chat/completions`` endpoint (vLLM, llama.cpp, Ollama)."""

    provider = "openai"

    def __init__(self, *, models: tuple[str, ...] = ("local-model",), default: str | None = None):
        super().__init__(models=models, default=default)

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self.port}/v1"

    def _route(self, path: str, body: Any) -> tuple[str, str]:
        if path.split("?")[0] != "/v1/chat/completions":
            return "", f"fake openai: no route for {path}"
        model = str(body.get("model", ""))
        if model not in self.models:
            return model, f"The model `{model}` does not exist"
        return model, ""

    def _error_body(self, status: int, message: str) -> dict[str, Any]:
        return {"error": {"message": message, "type": "fake_error", "code": status}}

    def _success(self, model: str, body: Any, action: Reply | Blocked) -> dict[str, Any]:
        prompt = count_tokens("".join(str(m.get("content", "")) for m in body.get("messages", [])))
        replies: tuple[str, ...]
        if isinstance(action, Blocked):
            replies, reason = ("",), "content_filter"
        else:
            replies, reason = action.texts, action.finish_reason.lower()
        n = int(body.get("n") or 1)
        replies = replies * n if len(replies) == 1 else replies
        output = sum(count_tokens(t) for t in replies)
        thoughts = 0 if isinstance(action, Blocked) else action.thoughts_tokens
        self._count(prompt, output, thoughts)
        choices = [{"index": i, "message": {"role": "assistant", "content": t}, "finish_reason": reason}
                   for i, t in enumerate(replies)]
        usage = {"prompt_tokens": prompt, "completion_tokens": output + thoughts,
                 "total_tokens": prompt + output + thoughts,
                 "completion_tokens_details": {"reasoning_tokens": thoughts}}
        return {"id": f"fake-{len(self.requests)}", "object": "chat.completion", "created": 0, "model": model,
                "choices": choices, "usage": usage}
