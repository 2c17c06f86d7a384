"""The OpenAI-compatible client through the real openai SDK against the fake server on 127.0.0.1."""

from __future__ import annotations

import sys

import pytest

from cwm.llm import (
    BadRequestError,
    BlockedError,
    LLMConfigError,
    LLMTimeoutError,
    Request,
    ServerError,
    Usage,
)
from cwm.llm.fakes import Blocked, Fail, Hang, Raw, Reply
from cwm.llm.openai_compat import OpenAIClient


def test_text_tokens_candidates_and_settings(fake_openai):
    fake_openai.script(Reply(("x = 1", "x = 2"), thoughts_tokens=9))
    client = fake_openai.client()
    response = client.complete(Request.user("code please", system="be brief", n=2, temperature=0.2, seed=5,
                                            max_output_tokens=300))
    assert response.texts == ("x = 1", "x = 2") and response.finish_reasons == ("stop", "stop")
    assert response.usage == Usage(**fake_openai.usage) == Usage(5, 4, 9)
    body = fake_openai.requests[0].body
    assert body["messages"] == [{"role": "system", "content": "be brief"}, {"role": "user", "content": "code please"}]
    assert (body["model"], body["n"], body["temperature"], body["seed"], body["max_tokens"]) == (
        "local-model", 2, 0.2, 5, 300)
    assert fake_openai.requests[0].headers["authorization"] == "Bearer fake-key"
    assert client.ledger.snapshot()["unpriced_calls"] == 1  # a local model has no price


def test_rate_limit_then_success_is_retried(fake_openai):
    fake_openai.script(Fail(429, "slow down", retry_after=3), "ok")
    sleeps: list[float] = []
    client = fake_openai.client(sleep=sleeps.append)
    assert client.complete(Request.user("hi")).text == "ok"
    assert fake_openai.request_count == 2 and sleeps and sleeps[0] >= 3
    assert client.ledger.snapshot()["retries"] == 1


ERRORS = [
    ("content-filter", Blocked(), BlockedError, "content_filter"),
    ("malformed-json", Raw(b"{not json"), ServerError, "malformed reply"),
    ("wrong-shape", Raw(b'{"choices": 5}'), ServerError, "malformed reply"),
    ("server-error", Fail(502, "bad gateway"), ServerError, "502"),
    ("hung", Hang(30), LLMTimeoutError, "timeout"),
]


@pytest.mark.parametrize(("action", "error", "message"), [e[1:] for e in ERRORS], ids=[e[0] for e in ERRORS])
def test_bad_replies_give_typed_errors(fake_openai, action, error, message):
    fake_openai.script(action)
    with pytest.raises(error, match=message):
        fake_openai.client(max_attempts=1, timeout_s=0.5).complete(Request.user("hi"))


def test_wrong_model_is_a_bad_request(fake_openai):
    with pytest.raises(BadRequestError, match="'no-such-model'.*404"):
        fake_openai.client(model="no-such-model").complete(Request.user("hi"))
    assert fake_openai.request_count == 1


def test_base_url_and_key_from_the_environment(fake_openai, monkeypatch):
    monkeypatch.setenv("OPENAI_BASE_URL", fake_openai.base_url)
    monkeypatch.setenv("OPENAI_API_KEY", "env-key")
    fake_openai.script("ok")
    assert OpenAIClient(model="local-model").complete(Request.user("hi")).text == "ok"
    assert fake_openai.requests[0].headers["authorization"] == "Bearer env-key"


def test_hosted_api_without_key_is_a_config_error(monkeypatch):
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    monkeypatch.delenv("OPENAI_BASE_URL", raising=False)
    with pytest.raises(LLMConfigError, match="OPENAI_API_KEY"):
        OpenAIClient(model="gpt-4o")


def test_missing_openai_package_is_a_clear_config_error(monkeypatch):
    monkeypatch.setitem(sys.modules, "openai", None)  # what an absent package looks like to import
    with pytest.raises(LLMConfigError, match=r"pip install '\.\[openai\]'"):
        OpenAIClient(model="m", base_url="http://127.0.0.1:9")
