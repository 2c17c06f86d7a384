"""`cwm llm ping` and `cwm llm answer-batch` against the fake servers (no network)."""

from __future__ import annotations

import pytest

from cwm.cli import main
from cwm.llm import Request
from cwm.llm.batch import BatchFileClient, PendingBatch
from cwm.llm.fakes import Fail


@pytest.fixture
def no_keys(monkeypatch):
    for name in ("GEMINI_API_KEY", "GOOGLE_API_KEY", "OPENAI_API_KEY", "OPENAI_BASE_URL"):
        monkeypatch.delenv(name, raising=False)


def test_ping_says_the_key_is_missing(no_keys, capsys):
    assert main(["llm", "ping", "--provider", "gemini"]) == 1
    out = capsys.readouterr().out
    assert "key: not set (set GEMINI_API_KEY or GOOGLE_API_KEY)" in out and "not tried" in out


def test_ping_reports_an_answering_endpoint(no_keys, monkeypatch, fake_gemini, capsys):
    monkeypatch.setenv("GOOGLE_API_KEY", "k")
    fake_gemini.script("pong")
    assert main(["llm", "ping", "--base-url", fake_gemini.base_url]) == 0
    out = capsys.readouterr().out
    assert "key: GOOGLE_API_KEY is set" in out
    assert f"endpoint: {fake_gemini.base_url} answered" in out and "'pong'" in out
    assert fake_gemini.request_count == 1


def test_ping_reports_a_failing_endpoint_without_retrying(no_keys, monkeypatch, fake_gemini, capsys):
    monkeypatch.setenv("GEMINI_API_KEY", "k")
    fake_gemini.script(Fail(503, "overloaded"))
    assert main(["llm", "ping", "--base-url", fake_gemini.base_url]) == 1
    assert "did not answer properly: ServerError" in capsys.readouterr().out
    assert fake_gemini.request_count == 1


def test_ping_openai_compatible_local_server_needs_no_key(no_keys, fake_openai, capsys):
    fake_openai.script("pong")
    args = ["llm", "ping", "--provider", "openai", "--model", "local-model", "--base-url", fake_openai.base_url]
    assert main(args) == 0
    assert "a local server usually needs none" in capsys.readouterr().out


def test_answer_batch_fills_the_replies(no_keys, monkeypatch, fake_gemini, tmp_path, capsys):
    monkeypatch.setenv("GEMINI_API_KEY", "k")
    request = Request.user("batched question", temperature=0.0)
    with pytest.raises(PendingBatch):
        BatchFileClient(tmp_path, model="gemini-2.5-pro").complete(request)
    fake_gemini.script("batched answer")
    assert main(["llm", "answer-batch", str(tmp_path), "--base-url", fake_gemini.base_url]) == 0
    assert "answered 1 of 1" in capsys.readouterr().out
    assert BatchFileClient(tmp_path, model="gemini-2.5-pro").complete(request).text == "batched answer"
