"""`cwm llm ping` and `cwm llm answer-batch` against the fake servers (no network)."""

from __future__ import annotations

import json

import pytest

from cwm.cli import main
from cwm.llm import Request
from cwm.llm.batch import PENDING_FILE, REPLIES_FILE, BatchFileClient, PendingBatch
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


def _pending(directory, model, text="batched question"):
    request = Request.user(text, temperature=0.0)
    with pytest.raises(PendingBatch):
        BatchFileClient(directory, model=model).complete(request)
    return request


def test_answer_batch_of_a_missing_directory_is_an_error(tmp_path, capsys):
    assert main(["llm", "answer-batch", str(tmp_path / "typo")]) == 2
    assert f"{tmp_path / 'typo' / PENDING_FILE} does not exist" in capsys.readouterr().out


def test_answer_batch_with_everything_answered_says_nothing_waits(tmp_path, capsys):
    (tmp_path / PENDING_FILE).write_text("")
    assert main(["llm", "answer-batch", str(tmp_path)]) == 0
    assert "nothing waits" in capsys.readouterr().out


def test_answer_batch_with_a_pending_line_without_key_is_an_error(tmp_path, capsys):
    (tmp_path / PENDING_FILE).write_text(json.dumps({"model": "m", "request": Request.user("q").to_json()}) + "\n")
    assert main(["llm", "answer-batch", str(tmp_path)]) == 2
    assert f"{tmp_path / PENDING_FILE}: entry 1 is not a pending request" in capsys.readouterr().out


def test_answer_batch_uses_the_pending_model_and_full_price(no_keys, monkeypatch, fake_gemini, tmp_path, capsys):
    monkeypatch.setenv("GEMINI_API_KEY", "k")
    request = _pending(tmp_path, "gemini-test")  # not the default model: answer-batch must pick it up
    fake_gemini.script("answer from gemini-test")
    assert main(["llm", "answer-batch", str(tmp_path), "--base-url", fake_gemini.base_url]) == 0
    assert "with gemini-test" in capsys.readouterr().out
    assert fake_gemini.requests[0].path == "/v1/models/gemini-test:generateContent"
    reply = json.loads((tmp_path / REPLIES_FILE).read_text())
    assert (reply["model"], reply["batch"]) == ("gemini-test", False)
    resumed = BatchFileClient(tmp_path, model="gemini-test").complete(request)
    assert resumed.text == "answer from gemini-test" and resumed.batch is False  # priced as the live call it was


def test_answer_batch_refuses_another_model(no_keys, monkeypatch, fake_gemini, tmp_path, capsys):
    monkeypatch.setenv("GEMINI_API_KEY", "k")
    _pending(tmp_path, "gemini-test")
    args = ["llm", "answer-batch", str(tmp_path), "--llm", "gemini:gemini-2.5-pro", "--base-url", fake_gemini.base_url]
    assert main(args) == 2
    out = capsys.readouterr().out
    assert "are for model(s) ['gemini-test']" in out and "answers as 'gemini-2.5-pro'" in out
    assert fake_gemini.request_count == 0 and not (tmp_path / REPLIES_FILE).exists()
