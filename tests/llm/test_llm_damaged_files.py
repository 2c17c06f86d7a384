"""The LLM layer's own files, damaged: a replay file, batch files and the cache each give a one-line error
naming the file and the line (or key) instead of a raw UnicodeDecodeError or JSONDecodeError."""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path

import pytest

from cwm.llm import (
    BatchFileClient,
    CachedClient,
    LLMConfigError,
    LLMError,
    ReplayFormatError,
    Request,
    ScriptedClient,
)
from cwm.llm.batch import PENDING_FILE, REPLIES_FILE, pending_requests
from cwm.llm.replay import read_replay

SESSION_FILE = Path(__file__).parents[1] / "data" / "llm" / "session_replay.jsonl"


def test_a_replay_line_that_is_not_utf8_names_file_and_line(tmp_path):
    lines = SESSION_FILE.read_bytes().splitlines()
    path = tmp_path / "latin1.jsonl"
    path.write_bytes(lines[0] + b"\n" + b'{"key": "caf\xe9"}\n' + lines[1] + b"\n")
    with pytest.raises(ReplayFormatError, match=r"latin1.jsonl:2: not a replay entry \(not UTF-8 text: byte 0xe9 at column 13\)"):
        read_replay(path)


def test_a_replay_whose_last_line_is_torn_non_utf8_still_replays(tmp_path):
    lines = SESSION_FILE.read_bytes().splitlines()
    path = tmp_path / "torn.jsonl"
    path.write_bytes(b"\n".join(lines[:2]) + b"\n" + lines[2][:40] + b"\xe2\x82")  # cut inside a character
    assert len(read_replay(path)) == 2


@pytest.mark.parametrize("bad, why", [
    (b"{not json", r"not a JSON object \(not JSON: "),
    (b"[1, 2]", r"not a JSON object \(TypeError: a list, not an object\)"),
    (b'{"key": "\xff"}', r"not a JSON object \(not UTF-8 text: byte 0xff"),
])
def test_a_damaged_middle_line_of_replies_names_file_and_line(tmp_path, bad, why):
    request = Request.user("q", temperature=0.0)
    good = json.dumps({"key": request.key("batch"), "text": "fine"}).encode()
    (tmp_path / REPLIES_FILE).write_bytes(b"\n".join([b'{"key": "other", "text": "x"}', bad, good]) + b"\n")
    with pytest.raises(LLMError, match=f"{REPLIES_FILE}:2: {why}") as caught:
        BatchFileClient(tmp_path).complete(request)
    assert "\n" not in str(caught.value)


def test_a_line_still_being_written_last_in_a_batch_file_is_left_out(tmp_path):
    request = Request.user("q", temperature=0.0)
    good = json.dumps({"key": request.key("batch"), "text": "fine"})
    (tmp_path / REPLIES_FILE).write_text(good + "\n" + '{"key": "k2", "te', encoding="utf-8")
    assert BatchFileClient(tmp_path).complete(request).text == "fine"


def test_a_damaged_pending_file_names_file_and_line(tmp_path):
    entry = json.dumps({"key": "k1", "model": "batch", "request": Request.user("q").to_json()})
    (tmp_path / PENDING_FILE).write_text(entry + "\n" + "{oops\n" + entry + "\n", encoding="utf-8")
    with pytest.raises(LLMError, match=f"{PENDING_FILE}:2: not a JSON object \\(not JSON"):
        pending_requests(tmp_path)


def test_a_damaged_cache_row_names_the_file_and_key(tmp_path):
    path = tmp_path / "cache.sqlite"
    request = Request.user("q", temperature=0.0)
    CachedClient(ScriptedClient(["stored"]), path).complete(request)
    db = sqlite3.connect(path)
    db.execute("UPDATE replies SET response = ?", ('{"texts": ["half',))
    db.commit()
    db.close()
    key = request.key("scripted")
    with pytest.raises(LLMConfigError, match=f"LLM cache {path}: the reply stored for key {key} is damaged"):
        CachedClient(ScriptedClient([]), path).complete(request)


@pytest.mark.parametrize("key", [[1, 2], {"k": "v"}, 7, None], ids=["list", "object", "number", "null"])
@pytest.mark.parametrize("name", [REPLIES_FILE, PENDING_FILE])
@pytest.mark.parametrize("last", [False, True], ids=["middle-line", "last-line"])
def test_a_batch_line_whose_key_is_not_a_string_is_named_in_one_line(tmp_path, key, name, last):
    """A key is hashed and compared on every read: a list or an object there is refused naming the line, never
    a TypeError; a whole last line is no torn write, so it is refused too."""
    request = Request.user("q", temperature=0.0)
    good = {"key": request.key("batch"), "model": "batch", "request": request.to_json(), "text": "fine"}
    bad = {**good, "key": key}
    lines = [good, bad] if last else [good, bad, good]
    (tmp_path / name).write_text("".join(json.dumps(line) + "\n" for line in lines), encoding="utf-8")
    client = BatchFileClient(tmp_path)
    for read in (client.provenance, lambda: client.complete(request), lambda: pending_requests(tmp_path)):
        with pytest.raises(LLMError, match=rf"{name}:2: its \"key\" is a {type(key).__name__}, not a string") as caught:
            read()
        assert "\n" not in str(caught.value)


def test_a_resumed_synthesis_over_a_batch_key_that_is_not_a_string_fails_in_one_line(tmp_path, capsys):
    from cwm.cli import main

    batch = tmp_path / "batch"
    batch.mkdir()
    (batch / REPLIES_FILE).write_text(json.dumps({"key": ["a", "list"], "text": "x"}) + "\n", encoding="utf-8")
    code = main(["synthesize", "tic_tac_toe", "--llm", f"batch:{batch}", "--num-test", "0", "--budget", "2",
                 "--out", str(tmp_path / "run"), "--quiet"])
    err = capsys.readouterr().err.strip()
    assert code not in (0, 3) and "Traceback" not in err and len(err.splitlines()) == 1
    assert f"{REPLIES_FILE}:1: its \"key\" is a list" in err
