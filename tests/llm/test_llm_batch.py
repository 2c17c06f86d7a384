"""The batch/file client: pending requests, answers from a replies file, pause and resume."""

from __future__ import annotations

import json

import pytest

from cwm.llm import (
    BatchFileClient,
    LLMConfigError,
    LLMError,
    PendingBatch,
    Request,
    ScriptedClient,
    answer_pending,
    make_client,
)
from cwm.llm.batch import PENDING_FILE, REPLIES_FILE, pending_requests


def test_pause_answer_resume(tmp_path):
    questions = [Request.user("q1", temperature=0.0), Request.user("q2", temperature=0.0)]
    client = make_client(f"batch:{tmp_path}", model="gemini-2.5-pro")
    for q in questions:  # the first run: both requests go to pending.jsonl
        with pytest.raises(PendingBatch, match=r"wait for replies in .*pending.jsonl") as info:
            client.complete(q)
    assert info.value.pending == 2 and len(pending_requests(tmp_path)) == 2
    assert (client.ledger.snapshot()["pending"], client.ledger.snapshot()["errors"]) == (2, 0)
    # answered as by a provider's batch API: the replies say so and are priced at batch rates
    assert answer_pending(tmp_path, ScriptedClient(["a1", "a2"], model="gemini-2.5-pro"), batch=True) == 2
    assert pending_requests(tmp_path) == {}
    resumed = make_client(f"batch:{tmp_path}", model="gemini-2.5-pro")  # the next run
    assert [resumed.complete(q).text for q in questions] == ["a1", "a2"]
    snapshot = resumed.ledger.snapshot()
    assert snapshot["calls"] == 2 and snapshot["errors"] == 0
    # batch replies are priced at half the standard rate (1.25 and 10 USD per million for 2.5 Pro)
    assert snapshot["cost_usd"] == pytest.approx(0.5 * (2 * 1 * 1.25 + 2 * 1 * 10) / 1e6)


def test_asking_twice_before_an_answer_writes_one_pending_line(tmp_path):
    client = BatchFileClient(tmp_path)
    for _ in range(2):
        with pytest.raises(PendingBatch):
            client.complete(Request.user("same", temperature=0.0))
    assert len((tmp_path / PENDING_FILE).read_text().splitlines()) == 1


def test_sampled_requests_get_one_pending_entry_per_ask(tmp_path):
    client = BatchFileClient(tmp_path)
    for _ in range(3):
        with pytest.raises(PendingBatch):
            client.complete(Request.user("sample me", temperature=1.0))
    assert len(pending_requests(tmp_path)) == 3


def test_waiting_client_returns_once_the_reply_appears(tmp_path):
    request = Request.user("slow answer", temperature=0.0)
    key = request.key("batch")

    def reply_later(seconds: float) -> None:  # stands in for whoever answers the batch meanwhile
        (tmp_path / REPLIES_FILE).write_text(json.dumps({"key": key, "text": "here it is"}) + "\n")

    client = BatchFileClient(tmp_path, wait_s=60, poll_s=1, sleep=reply_later)
    assert client.complete(request).texts == ("here it is",)


def test_malformed_reply_names_the_key(tmp_path):
    request = Request.user("q", temperature=0.0)
    (tmp_path / REPLIES_FILE).write_text(json.dumps({"key": request.key("batch"), "textz": "?"}) + "\n")
    with pytest.raises(LLMError, match=f"reply for key {request.key('batch')} is malformed"):
        BatchFileClient(tmp_path).complete(request)


@pytest.mark.parametrize(("batch", "rate"), [(False, 1.0), (True, 0.5), (None, 0.5)],
                         ids=["answered-live", "answered-by-batch-api", "line-without-batch-field"])
def test_replies_are_priced_by_their_batch_field(tmp_path, batch, rate):
    request = Request.user("q1", temperature=0.0)
    client = make_client(f"batch:{tmp_path}", model="gemini-2.5-pro")
    with pytest.raises(PendingBatch):
        client.complete(request)
    answerer = ScriptedClient(["a1"], model="gemini-2.5-pro")
    answer_pending(tmp_path, answerer, **({} if batch is None else {"batch": batch}))
    if batch is None:  # a reply written by other means, without the field
        lines = [json.loads(line) for line in (tmp_path / REPLIES_FILE).read_text().splitlines()]
        (tmp_path / REPLIES_FILE).write_text("".join(
            json.dumps({k: v for k, v in e.items() if k != "batch"}) + "\n" for e in lines))
    assert make_client(f"batch:{tmp_path}", model="gemini-2.5-pro").complete(request).text == "a1"
    resumed = make_client(f"batch:{tmp_path}", model="gemini-2.5-pro")
    resumed.complete(request)
    assert resumed.ledger.snapshot()["cost_usd"] == pytest.approx(rate * (1 * 1.25 + 1 * 10) / 1e6)


@pytest.mark.parametrize("texts", ["a string", [], [1, 2], None, ["ok", None]],
                         ids=["string", "empty-list", "ints", "null", "a-null-among-texts"])
def test_reply_texts_must_be_a_non_empty_list_of_strings(tmp_path, texts):
    request = Request.user("q", temperature=0.0)
    key = request.key("batch")
    (tmp_path / REPLIES_FILE).write_text(json.dumps({"key": key, "texts": texts}) + "\n")
    with pytest.raises(LLMError, match=f"reply for key {key} is malformed"):
        BatchFileClient(tmp_path).complete(request)


def test_pending_line_without_a_key_names_file_and_line(tmp_path):
    good = {"key": "k1", "model": "batch", "request": Request.user("q").to_json()}
    (tmp_path / PENDING_FILE).write_text(json.dumps(good) + "\n" + json.dumps({"request": good["request"]}) + "\n")
    with pytest.raises(LLMError, match=r"pending.jsonl: entry 2 is not a pending request.*KeyError"):
        pending_requests(tmp_path)


def test_a_batch_path_that_is_a_file_is_a_config_error(tmp_path):
    path = tmp_path / "not-a-dir"
    path.write_text("x")
    with pytest.raises(LLMConfigError, match=f"batch directory {path} cannot be used"):
        make_client(f"batch:{path}")


def test_answer_pending_can_keep_to_one_model(tmp_path):
    for model in ("gemini-2.5-pro", "gemini-2.5-flash", "batch"):
        with pytest.raises(PendingBatch):
            BatchFileClient(tmp_path, model=model).complete(Request.user(f"for {model}", temperature=0.0))
    answerer = ScriptedClient(["one", "two"], model="gemini-2.5-flash")
    assert answer_pending(tmp_path, answerer, model="gemini-2.5-flash") == 2  # its own and the model-less one
    assert [r.last_user_text for r in pending_requests(tmp_path).values()] == ["for gemini-2.5-pro"]
