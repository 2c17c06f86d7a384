"""The Gemini client through the real google-genai SDK against the fake Gemini server on 127.0.0.1."""

from __future__ import annotations

import json
import sys
import types

import pytest

from cwm.llm import (
    BadRequestError,
    BlockedError,
    LLMConfigError,
    LLMTimeoutError,
    Message,
    RateLimitedError,
    Request,
    ServerError,
    Usage,
    gemini,
)
from cwm.llm.fakes import Blocked, Fail, Hang, Raw, Reply
from cwm.llm.gemini import GeminiClient

_THOUGHT_ONLY = json.dumps({"candidates": [{"finishReason": "MAX_TOKENS", "content": {"role": "model", "parts": [
    {"text": "thinking...", "thought": True}]}}], "usageMetadata": {"promptTokenCount": 3, "thoughtsTokenCount": 99}}).encode()
_EMPTY_CANDIDATE = json.dumps({"candidates": [{"finishReason": "SAFETY", "index": 0}],
                               "usageMetadata": {"promptTokenCount": 3}}).encode()


def test_text_tokens_and_settings_travel_both_ways(fake_gemini):
    fake_gemini.script(Reply(("the rules as code",), thoughts_tokens=40))
    client = fake_gemini.client(model="gemini-test")
    request = Request((Message("user", "rules?"), Message("assistant", "which game?"), Message("user", "chess")),
                      system="You write Python.", temperature=0.3, max_output_tokens=999, seed=7,
                      thinking_budget=512)
    response = client.complete(request)
    assert response.texts == ("the rules as code",) and response.finish_reasons == ("STOP",)
    assert response.model == "gemini-test" and response.latency_s > 0
    assert response.usage == Usage(**fake_gemini.usage) == Usage(10, 5, 40)
    seen = fake_gemini.requests[0]
    assert seen.path == "/v1/models/gemini-test:generateContent"
    assert seen.headers["x-goog-api-key"] == "fake-key"
    assert [c["role"] for c in seen.body["contents"]] == ["user", "model", "user"]
    assert seen.body["systemInstruction"]["parts"][0]["text"] == "You write Python."
    config = seen.body["generationConfig"]
    assert (config["temperature"], config["maxOutputTokens"], config["seed"], config["candidateCount"]) == (
        0.3, 999, 7, 1)
    assert json.dumps(config["thinkingConfig"]).count("512") == 1


def test_n_candidates_come_back_in_order(fake_gemini):
    fake_gemini.script(["first", "second", "third"])
    response = fake_gemini.client().complete(Request.user("three please", n=3))
    assert response.texts == ("first", "second", "third")
    assert fake_gemini.requests[0].body["generationConfig"]["candidateCount"] == 3


def test_rate_limit_then_success_is_retried_after_retry_after_and_counted(fake_gemini):
    fake_gemini.script(Fail(429, "quota", retry_after=7), "ok")
    sleeps: list[float] = []
    client = fake_gemini.client(sleep=sleeps.append, base_delay_s=0.1)
    assert client.complete(Request.user("hi")).text == "ok"
    assert fake_gemini.request_count == 2
    assert len(sleeps) == 1 and sleeps[0] >= 7.0  # Retry-After beats the shorter backoff
    snapshot = client.ledger.snapshot()
    assert (snapshot["calls"], snapshot["retries"], snapshot["errors"]) == (1, 1, 0)


def test_server_errors_past_the_retry_budget_give_a_clear_error(fake_gemini):
    fake_gemini.script(*[Fail(500, "backend exploded")] * 3)
    sleeps: list[float] = []
    client = fake_gemini.client(max_attempts=3, base_delay_s=1.0, sleep=sleeps.append, retry_seed=0)
    with pytest.raises(ServerError, match="500 INTERNAL: backend exploded.*gave up after 3 attempts"):
        client.complete(Request.user("hi"))
    assert fake_gemini.request_count == 3
    assert 0.5 <= sleeps[0] <= 1.0 and 1.0 <= sleeps[1] <= 2.0  # exponential backoff with jitter
    assert client.ledger.snapshot()["errors"] == 1


def test_a_hung_server_hits_the_timeout(fake_gemini):
    # The server answers only after 300 s, 600 timeouts: an error instead of its late reply means the client's
    # 0.5 s timeout ended the call, however busy the machine (no wall-clock bound is asserted).
    fake_gemini.script(Hang(300, then="late reply"))
    client = fake_gemini.client(timeout_s=0.5, max_attempts=1)
    with pytest.raises(LLMTimeoutError, match="no answer within the timeout"):
        client.complete(Request.user("hi"))
    assert fake_gemini.request_count == 1  # one attempt, ended by its timeout
    assert client.ledger.snapshot()["retries"] == 0


def test_timeouts_are_retried(fake_gemini):
    fake_gemini.script(Hang(30), "late but fine")
    client = fake_gemini.client(timeout_s=0.5, max_attempts=2)
    assert client.complete(Request.user("hi")).text == "late but fine"
    assert client.ledger.snapshot()["retries"] == 1


ERRORS = [
    ("blocked-prompt", Blocked("SAFETY"), BlockedError, "prompt blocked: SAFETY"),
    ("empty-candidate", Raw(_EMPTY_CANDIDATE), BlockedError, r"none with text \(finish reasons \['SAFETY'\]\)"),
    ("thoughts-only", Raw(_THOUGHT_ONLY), BlockedError, "MAX_TOKENS.*raise it or lower thinking_budget"),
    ("malformed-json", Raw(b'{"candidates": [oops'), ServerError, "malformed reply"),
    ("wrong-shape", Raw(b'{"candidates": 5}'), ServerError, "malformed reply"),
    ("invalid-argument", Fail(400, "temperature must be in [0, 2]"), BadRequestError, r"temperature must be"),
    ("bad-key", Fail(403, "API key not valid"), BadRequestError, "403 PERMISSION_DENIED: API key not valid"),
    ("rate-limited", Fail(429, "quota"), RateLimitedError, "429 RESOURCE_EXHAUSTED"),
    ("unavailable", Fail(503, "overloaded"), ServerError, "503 UNAVAILABLE: overloaded"),
    ("request-timeout-408", Fail(408, "took too long"), LLMTimeoutError, "408 .*took too long"),
    ("empty-body", Raw(b""), ServerError, "malformed reply: empty body"),
    ("empty-list-body", Raw(b"[]"), ServerError, "malformed reply: empty body"),
    ("null-body", Raw(b"null"), ServerError, "malformed reply: empty body"),
    ("empty-object-body", Raw(b"{}"), ServerError, "malformed reply: empty body"),
]


@pytest.mark.parametrize(("action", "error", "message"), [e[1:] for e in ERRORS], ids=[e[0] for e in ERRORS])
def test_bad_replies_give_typed_errors(fake_gemini, action, error, message):
    fake_gemini.script(action)
    with pytest.raises(error, match=message):
        fake_gemini.client(max_attempts=1).complete(Request.user("hi"))
    assert fake_gemini.request_count == 1


@pytest.mark.parametrize("action", [Raw(b""), Raw(b"null"), Fail(408, "slow")], ids=["empty-body", "null-body", "408"])
def test_empty_bodies_and_408_are_retried(fake_gemini, action):
    fake_gemini.script(action, "second time lucky")
    client = fake_gemini.client(max_attempts=2)
    assert client.complete(Request.user("hi")).text == "second time lucky"
    assert fake_gemini.request_count == 2 and client.ledger.snapshot()["retries"] == 1


def test_timeouts_of_either_http_library_are_typed(monkeypatch):
    # google-genai sends through httpx2 by default and through httpx with GOOGLE_GENAI_HTTP_CLIENT=httpx;
    # a stand-in "httpx" module (the real one need not be installed) checks that both families are caught.
    fake = types.ModuleType("httpx")
    fake.TransportError = type("TransportError", (Exception,), {})  # type: ignore[attr-defined]
    fake.TimeoutException = type("TimeoutException", (fake.TransportError,), {})  # type: ignore[attr-defined]
    fake.ReadTimeout = type("ReadTimeout", (fake.TimeoutException,), {})  # type: ignore[attr-defined]
    monkeypatch.setitem(sys.modules, "httpx", fake)
    timeouts, transports = gemini.http_error_classes(("httpx2", "httpx", "no_such_http_library"))
    assert fake.TimeoutException in timeouts and fake.TransportError in transports
    monkeypatch.setattr(gemini, "_TIMEOUT_ERRORS", timeouts)
    monkeypatch.setattr(gemini, "_TRANSPORT_ERRORS", transports)
    client = GeminiClient(api_key="k", base_url="http://127.0.0.1:9")
    assert isinstance(client._typed(fake.ReadTimeout("read timed out")), LLMTimeoutError)
    assert isinstance(client._typed(fake.TransportError("refused")), ServerError)


def test_non_retryable_errors_are_not_retried(fake_gemini):
    fake_gemini.script(Blocked(), "never reached")
    with pytest.raises(BlockedError):
        fake_gemini.client(max_attempts=5).complete(Request.user("hi"))
    assert fake_gemini.request_count == 1


def test_wrong_model_id_is_a_bad_request_naming_the_model(fake_gemini):
    client = fake_gemini.client(model="gemini-9-ultra")
    with pytest.raises(BadRequestError, match="'gemini-9-ultra'.*404 NOT_FOUND") as info:
        client.complete(Request.user("hi"))
    assert info.value.status == 404 and fake_gemini.request_count == 1


@pytest.mark.parametrize("variable", ["GEMINI_API_KEY", "GOOGLE_API_KEY"])
def test_key_comes_from_the_environment(fake_gemini, monkeypatch, variable):
    monkeypatch.delenv("GEMINI_API_KEY", raising=False)
    monkeypatch.delenv("GOOGLE_API_KEY", raising=False)
    monkeypatch.setenv(variable, f"key-from-{variable}")
    fake_gemini.script("ok")
    GeminiClient(base_url=fake_gemini.base_url).complete(Request.user("hi"))
    assert fake_gemini.requests[0].headers["x-goog-api-key"] == f"key-from-{variable}"


def test_missing_key_is_a_config_error_naming_the_variables(monkeypatch):
    monkeypatch.delenv("GEMINI_API_KEY", raising=False)
    monkeypatch.delenv("GOOGLE_API_KEY", raising=False)
    with pytest.raises(LLMConfigError, match="GEMINI_API_KEY or GOOGLE_API_KEY"):
        GeminiClient()


def test_default_model_is_a_gemini_pro_model():
    assert GeminiClient(api_key="k").model == "gemini-2.5-pro"
