"""The batch/file client: pending requests, answers from a replies file, pause and resume."""

from __future__ import annotations

import json

import pytest

from cwm.llm import (
    BatchFileClient,
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
    assert answer_pending(tmp_path, ScriptedClient(["a1", "a2"], model="gemini-2.5-pro")) == 2
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
