"""Provenance: each batch reply carries the hash of the prompt its answering side saw, checked when read;
who answered flows out of the replies; provenance fields are short and refused when hostile."""

from __future__ import annotations

import hashlib
import json

import pytest

from cwm.llm import (
    BatchFileClient,
    LLMError,
    PendingBatch,
    Provenance,
    ProvenanceError,
    Request,
    ScriptedClient,
    answer_pending,
    client_provenance,
    make_client,
    read_provenance,
)
from cwm.llm.batch import PENDING_FILE, REPLIES_FILE
from cwm.llm.batch_texts import export_pending, import_answers

QUESTIONS = [Request.user("first question", temperature=0.0), Request.user("second question", system="be brief",
                                                                       temperature=0.0)]


def _ask_all(directory, model="batch"):
    client = BatchFileClient(directory, model=model)
    for q in QUESTIONS:
        with pytest.raises(PendingBatch):
            client.complete(q)
    return client


def _lines(path):
    return [json.loads(line) for line in path.read_text().splitlines()]


def test_answered_replies_carry_their_prompt_hash_and_read_back_checked(tmp_path):
    _ask_all(tmp_path)
    assert answer_pending(tmp_path, ScriptedClient(["a1", "a2"], model="some-model")) == 2
    assert export_pending(tmp_path, tmp_path / "none") == []  # nothing waits any more
    replies = _lines(tmp_path / REPLIES_FILE)
    texts = ["first question", "## system\n\nbe brief\n\n## user\n\nsecond question"]  # what an answerer reads
    assert [r["prompt_sha256"] for r in replies] == [hashlib.sha256(t.encode()).hexdigest() for t in texts]
    client = BatchFileClient(tmp_path)
    assert [client.complete(q).text for q in QUESTIONS] == ["a1", "a2"]
    assert client.provenance() == Provenance("some-model", "relay-hashed", client.provenance().date, 2, 2)


def test_a_reply_whose_hash_is_not_its_requests_is_refused_in_one_line(tmp_path):
    _ask_all(tmp_path)
    answer_pending(tmp_path, ScriptedClient(["a1", "a2"], model="m"))
    lines = _lines(tmp_path / REPLIES_FILE)
    lines[1]["prompt_sha256"] = hashlib.sha256(b"a prompt the answering side was shown instead").hexdigest()
    (tmp_path / REPLIES_FILE).write_text("".join(json.dumps(line) + "\n" for line in lines))
    client = BatchFileClient(tmp_path)
    assert client.complete(QUESTIONS[0]).text == "a1"  # its own hash still matches
    with pytest.raises(LLMError) as info:
        client.complete(QUESTIONS[1])
    message = str(info.value)
    assert "\n" not in message and REPLIES_FILE in message and "prompt_sha256" in message
    with pytest.raises(LLMError, match="prompt_sha256"):  # and the directory's provenance will not vouch for it
        client.provenance()


def test_a_request_edited_in_the_pending_file_no_longer_matches_its_replys_hash(tmp_path):
    _ask_all(tmp_path)
    answer_pending(tmp_path, ScriptedClient(["a1", "a2"], model="m"))
    pending = _lines(tmp_path / PENDING_FILE)
    pending[0]["request"]["messages"][0]["text"] = "first question, reworded after it was answered"
    (tmp_path / PENDING_FILE).write_text("".join(json.dumps(line) + "\n" for line in pending))
    with pytest.raises(LLMError, match=r"replies\.jsonl: reply for key .* prompt_sha256"):
        BatchFileClient(tmp_path).provenance()


def test_an_old_batch_directory_without_hashes_still_reads_marked_unchecked(tmp_path):
    _ask_all(tmp_path)
    answer_pending(tmp_path, ScriptedClient(["a1", "a2"], model="m"))
    lines = _lines(tmp_path / REPLIES_FILE)
    for line in lines:
        del line["prompt_sha256"], line["model"]  # as an older cwm wrote them, naming no model
    (tmp_path / REPLIES_FILE).write_text("".join(json.dumps(line) + "\n" for line in lines))
    client = make_client(f"batch:{tmp_path}")
    assert [client.complete(q).text for q in QUESTIONS] == ["a1", "a2"]
    found = client_provenance(client, answered_by="a person at a keyboard")  # as cwm synthesize --answered-by
    assert (found.answered_by, found.relay, found.replies, found.prompts_hashed) == \
        ("a person at a keyboard", "relay-unchecked", 2, 0)
    assert client_provenance(client).answered_by == "unknown"


def test_a_relays_hash_file_is_checked_at_import_and_kept_with_the_reply(tmp_path):
    batch, prompts, answers = tmp_path / "b", tmp_path / "p", tmp_path / "a"
    _ask_all(batch)
    files = export_pending(batch, prompts)
    answers.mkdir()
    for i, prompt in enumerate(files):
        (answers / prompt.name).write_text(f"reply {i}")
    first, second = (p.name.removesuffix(".md") for p in files)
    # the second relay changed the prompt on the way (a truncated paste): its hash is of what it sent
    (answers / f"{first}.sha256").write_text(hashlib.sha256(files[0].read_bytes()).hexdigest() + f"  {first}.md\n")
    (answers / f"{second}.sha256").write_text(hashlib.sha256(files[1].read_bytes()[:-5]).hexdigest() + "\n")
    with pytest.raises(LLMError) as info:
        import_answers(batch, answers, model="an answering model")
    assert "\n" not in str(info.value) and f"{second}.sha256" in str(info.value)
    assert [r["key"] for r in _lines(batch / REPLIES_FILE)] == [first]  # the first, checked, is kept
    (answers / f"{second}.sha256").write_text("not a digest\n")
    with pytest.raises(LLMError, match="not a SHA-256 hex digest"):
        import_answers(batch, answers, model="an answering model")
    (answers / f"{second}.sha256").write_text(hashlib.sha256(files[1].read_bytes()).hexdigest())
    assert import_answers(batch, answers, model="an answering model") == (1, 0)
    client = BatchFileClient(batch)
    assert [client.complete(q).text for q in QUESTIONS] == ["reply 0", "reply 1"]
    found = client.provenance()
    assert (found.answered_by, found.relay, found.prompts_hashed) == ("an answering model", "relay-hashed", 2)


class Sneaky(str):
    """A string that claims to equal anything: a field built by hostile code, not parsed from JSON."""

    def __eq__(self, other):
        return True

    __hash__ = str.__hash__


@pytest.mark.parametrize("field, value, why", [
    ("answered_by", Sneaky("gemini-2.5-pro"), "must be a string, not a Sneaky"),
    ("answered_by", "x" * (10 << 20), "1 to 120 characters"),
    ("answered_by", "claude\x1b[2J (Anthropic)", "control character"),
    ("answered_by", "", "1 to 120 characters"),
    ("relay", "pasted by hand, trust me", "must be one of"),
    ("relay", 7, "must be a string, not a int"),
    ("date", "yesterday", "YYYY-MM-DD"),
    ("date", "2026-02-30", "YYYY-MM-DD"),
    ("prompts_hashed", 3, "more replies than 'replies'"),
    ("replies", True, "must be a count"),
], ids=["str-subclass", "10MB-string", "escape-sequence", "empty", "prose-relay", "number-relay", "word-date",
        "impossible-date", "more-hashed-than-replies", "bool-count"])
def test_hostile_provenance_fields_are_refused_in_one_line(tmp_path, field, value, why):
    data = {"answered_by": "claude (Anthropic), version not exposed", "relay": "agent-relay-unchecked",
            "date": "2026-12-02", "replies": 2, "prompts_hashed": 0, field: value}
    with pytest.raises(ProvenanceError) as info:
        Provenance.from_json(data, where="somewhere.json")
    message = str(info.value)
    assert why in message and "somewhere.json" in message and f"'{field}'" in message
    assert "\n" not in message and len(message) < 300  # the value itself is never echoed
    if type(value) in (str, int, bool):  # what a file can hold: read back, it is refused the same way
        path = tmp_path / "provenance.json"
        path.write_text(json.dumps(data))
        bounded = len(str(value)) > 1 << 20  # over the JSON reader's own bound on a string: refused there
        with pytest.raises(ProvenanceError, match="at most 1,048,576" if bounded else why):
            read_provenance(path)


def test_a_provenance_that_is_not_an_object_or_lacks_a_field_is_refused(tmp_path):
    path = tmp_path / "provenance.json"
    for text, why in (("[1, 2]", "must be an object"), ('{"relay": "direct-api"}', "'answered_by' is missing"),
                      ("{not json", "not a readable JSON")):
        path.write_text(text)
        with pytest.raises(ProvenanceError, match=why):
            read_provenance(path)


def test_direct_and_scripted_clients_say_so():
    scripted = client_provenance(ScriptedClient(["x"]))
    assert (scripted.relay, scripted.replies) == ("scripted", 0)
    openai = client_provenance(make_client("openai:gpt-4o", api_key="k", base_url="http://127.0.0.1:9"))
    assert (openai.answered_by, openai.relay) == ("gpt-4o", "direct-api")


def test_a_relay_is_named_by_who_carried_the_texts_and_whether_every_hash_matched():
    from cwm.llm.provenance import RELAY_BY, RELAYS, relay_by

    names = {(carrier, checked): relay_by(carrier, checked)
             for carrier in RELAY_BY for checked in ("relay-hashed", "relay-unchecked")}
    assert names == {("agent", "relay-hashed"): "agent-relay-hashed", ("agent", "relay-unchecked"): "agent-relay-unchecked",
                     ("person", "relay-hashed"): "relay-hashed", ("person", "relay-unchecked"): "relay-unchecked"}
    assert set(names.values()) <= set(RELAYS)
    with pytest.raises(ValueError, match="not one of agent, person"):
        relay_by("pigeon", "relay-hashed")
