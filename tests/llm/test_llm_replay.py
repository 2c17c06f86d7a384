"""Recording and replay: a recorded session replays byte-identically; anything else fails loudly."""

from __future__ import annotations

import dataclasses
import json
from pathlib import Path

import pytest

from cwm.llm import (
    Message,
    RecordingClient,
    ReplayClient,
    ReplayFormatError,
    ReplayMissError,
    Request,
    ScriptedClient,
    make_client,
)
from cwm.llm.replay import read_replay

SESSION_FILE = Path(__file__).parents[1] / "data" / "llm" / "session_replay.jsonl"
ENTRIES = read_replay(SESSION_FILE)


def test_stored_session_replays_every_entry_in_order():
    client = ReplayClient(SESSION_FILE)
    assert client.model == "gemini-2.5-pro" and len(ENTRIES) == 5
    for entry in ENTRIES:
        response = client.complete(Request.from_json(entry["request"]))
        assert response.cached and list(response.texts) == entry["response"]["texts"]


def test_live_recording_replays_byte_identically(fake_gemini, tmp_path):
    fake_gemini.script("exact\r\n text \u00e9\t", ["s1", "s2"], "again 1", "again 2")
    session = [Request.user("a", temperature=0.0), Request.user("b", n=2), Request.user("c"), Request.user("c")]
    live = fake_gemini.client(record=tmp_path / "rec.jsonl")
    recorded = [live.complete(r) for r in session]
    replay = make_client(f"replay:{tmp_path / 'rec.jsonl'}")
    replayed = [replay.complete(r) for r in session]
    assert [r.texts for r in replayed] == [r.texts for r in recorded]
    assert [r.finish_reasons for r in replayed] == [r.finish_reasons for r in recorded]
    assert [r.usage for r in replayed] == [r.usage for r in recorded]
    assert replayed[0].text.encode() == "exact\r\n text \u00e9\t".encode()
    assert fake_gemini.request_count == 4
    assert replay.ledger.snapshot()["cached"] == 4 and replay.ledger.snapshot()["calls"] == 0


CHANGES = [
    ("changed-prompt", Request.user("Write initial_state for tic-tac-tow.", system="You write Python.",
                                    temperature=0.0), r"first difference at character 34: asked 'w\.'"),
    ("changed-setting", Request.user("Write initial_state for tic-tac-toe.", system="You write Python.",
                                     temperature=0.5), r"same last user message; settings differ: temperature 0.5"),
    ("changed-system", Request.user("Write initial_state for tic-tac-toe.", system="You write Rust.",
                                    temperature=0.0), "system 'You write Rust.' \\(recorded 'You write Python.'\\)"),
    ("changed-history", Request((Message("user", "Write initial_state."), Message("assistant", "?"),
                                 Message("user", "Test failed: diagonal win not detected.")),
                                system="You write Python.", temperature=0.0, thinking_budget=1024),
     "earlier turns differ"),
]


@pytest.mark.parametrize(("request_", "message"), [c[1:] for c in CHANGES], ids=[c[0] for c in CHANGES])
def test_a_changed_request_fails_loudly_naming_the_nearest_prompt(request_, message):
    with pytest.raises(ReplayMissError, match="has no reply for this request.*nearest recorded prompt") as info:
        ReplayClient(SESSION_FILE).complete(request_)
    assert info.match(message)


def test_sampled_request_asked_more_often_than_recorded_is_an_error():
    client = ReplayClient(SESSION_FILE)
    sample = Request.user("One sample.", temperature=1.0, tag="policy/step")
    assert [client.complete(sample).text for _ in range(2)] == ["sample one", "sample two"]
    with pytest.raises(ReplayMissError, match="recorded 2 samples.*this is ask number 3"):
        client.complete(sample)


def test_deterministic_request_asked_again_gets_the_recorded_reply():
    client = ReplayClient(SESSION_FILE)
    request = Request.from_json(ENTRIES[0]["request"])
    assert client.complete(request) == client.complete(request)


def test_a_truncated_last_line_is_ignored_and_a_bad_middle_line_is_an_error(tmp_path):
    lines = SESSION_FILE.read_text().splitlines()
    (tmp_path / "crashed.jsonl").write_text("\n".join(lines[:2]) + "\n" + lines[2][:50])
    assert len(read_replay(tmp_path / "crashed.jsonl")) == 2
    (tmp_path / "bad.jsonl").write_text(lines[0] + "\n{oops\n" + lines[1] + "\n")
    with pytest.raises(ReplayFormatError, match="bad.jsonl:2: not a replay entry"):
        read_replay(tmp_path / "bad.jsonl")
    with pytest.raises(ReplayFormatError, match="does not exist"):
        ReplayClient(tmp_path / "missing.jsonl")


def test_recording_continues_an_existing_file_and_flushes_each_line(tmp_path):
    path = tmp_path / "rec.jsonl"
    first = RecordingClient(ScriptedClient(["r1"]), path)
    first.complete(Request.user("q"))
    assert len(path.read_text().splitlines()) == 1  # on disk before the client is gone
    second = RecordingClient(ScriptedClient(["r2"]), path)
    second.complete(Request.user("q"))
    occurrences = [json.loads(line)["occurrence"] for line in path.read_text().splitlines()]
    assert occurrences == [0, 1]
    replay = ReplayClient(path)
    assert [replay.complete(Request.user("q")).text for _ in range(2)] == ["r1", "r2"]


def test_mixed_models_need_a_model_choice(tmp_path):
    path = tmp_path / "mixed.jsonl"
    RecordingClient(ScriptedClient(["a"], model="m1"), path).complete(Request.user("q"))
    RecordingClient(ScriptedClient(["b"], model="m2"), path).complete(Request.user("q"))
    with pytest.raises(ReplayFormatError, match=r"holds models \['m1', 'm2'\]"):
        ReplayClient(path)
    assert ReplayClient(path, model="m2").complete(Request.user("q")).text == "b"
    assert dataclasses.replace(ReplayClient(path, model="m1").complete(Request.user("q")), cached=False).text == "a"


@pytest.mark.parametrize("content", ["", "\n\n", "{garbage\n"], ids=["empty", "blank-lines", "one-garbage-line"])
def test_a_replay_file_without_entries_says_so(tmp_path, content):
    path = tmp_path / "empty.jsonl"
    path.write_text(content)
    with pytest.raises(ReplayFormatError, match=f"replay file {path} holds no entries"):
        ReplayClient(path)
    with pytest.raises(ReplayFormatError, match="holds no entries"):
        ReplayClient(path, model="m1")


@pytest.mark.parametrize(("a", "b", "ends"), [
    ("abcXdef", "abcYdef", (3, 3)),
    ("abc", "abc", (3, 0)),  # the suffix never overlaps the prefix
    ("abc", "abcdef", (3, 0)),
    ("xbc", "ybc", (0, 2)),
    ("aaaa", "aa", (2, 0)),
    ("", "abc", (0, 0)),
], ids=["middle", "equal", "extended", "first-char", "repeats", "empty"])
def test_common_ends_finds_the_shared_start_and_end(a, b, ends):
    from cwm.llm.replay import common_ends

    assert common_ends(a, b) == ends


def test_a_miss_among_long_prompts_is_reported_in_linear_time(tmp_path):
    import random
    import time

    rng = random.Random(0)
    base = "".join(rng.choice("abcdefgh \n") for _ in range(100_000))  # a 100 KB prompt
    recorded = [Request.user(base[:50_000] + f"rule {i} " + base[50_000:]) for i in range(60)]
    client = RecordingClient(ScriptedClient([f"reply {i}" for i in range(60)]), tmp_path / "long.jsonl")
    for r in recorded:
        client.complete(r)
    asked = Request.user(base[:50_000] + "rule 41!" + base[50_000:])
    start = time.process_time()
    with pytest.raises(ReplayMissError) as info:
        ReplayClient(tmp_path / "long.jsonl").complete(asked)
    # difflib over these prompts takes minutes; the linear comparison a fraction of a second of CPU
    assert time.process_time() - start < 5.0
    assert "first difference at character 50007: asked '!" in str(info.value)
    assert "the differing region is 1 characters long (recorded 1)" in str(info.value)
    assert len(str(info.value)) < 2000
