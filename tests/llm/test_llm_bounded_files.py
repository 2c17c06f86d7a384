"""The LLM layer's files in a run or batch directory are size-checked before they are read: a recording, a batch
file, a relay's answer file and an earlier session's ledger over their bounds (sparse files of gigabytes here)
are refused, or noted, in one line naming the file, without being read."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from cwm.cli import main
from cwm.files import RECORDS_BYTES, RUN_FILE_BYTES
from cwm.llm import LLMError, ReplayFormatError, Request, ScriptedClient, wrap_client
from cwm.llm.batch import REPLIES_FILE, BatchFileClient, PendingBatch
from cwm.llm.batch_texts import ANSWER_BYTES, export_pending
from cwm.llm.replay import read_replay


def _sparse(path: Path, size: int) -> Path:
    with open(path, "wb") as f:  # extended without writing: a hole the file system does not store
        f.truncate(size)
    return path


def test_a_recording_over_its_bound_is_refused_in_one_line(tmp_path):
    file = _sparse(tmp_path / "session.jsonl", RECORDS_BYTES + 1)
    with pytest.raises(ReplayFormatError) as caught:
        read_replay(file)
    assert str(caught.value) == f"replay file {file}: {RECORDS_BYTES + 1:,} bytes, over its limit of {RECORDS_BYTES:,} bytes"


def test_a_batch_file_over_its_bound_is_refused_in_one_line(tmp_path):
    file = _sparse(tmp_path / REPLIES_FILE, RECORDS_BYTES + 1)
    with pytest.raises(LLMError) as caught:
        BatchFileClient(tmp_path).complete(Request.user("q", temperature=0.0))
    assert str(caught.value) == f"batch file {file}: {RECORDS_BYTES + 1:,} bytes, over its limit of {RECORDS_BYTES:,} bytes"


def test_an_answer_file_over_its_bound_is_refused_in_one_line_and_nothing_is_imported(tmp_path, capsys):
    with pytest.raises(PendingBatch):
        BatchFileClient(tmp_path / "b").complete(Request.user("q", temperature=0.0))
    export_pending(tmp_path / "b", tmp_path / "p")
    (tmp_path / "a").mkdir()
    answer = _sparse(tmp_path / "a" / next((tmp_path / "p").iterdir()).name, ANSWER_BYTES + 1)
    assert main(["llm", "answer-batch", str(tmp_path / "b"), "--from", str(tmp_path / "a"), "--answered-by", "x"]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "Traceback" not in err, err
    assert f"answer file {answer}: {ANSWER_BYTES + 1:,} bytes, over its limit" in err, err
    assert not (tmp_path / "b" / REPLIES_FILE).exists()


def test_an_answer_file_within_its_bound_keeps_its_text_with_line_ends_made_newlines(tmp_path):
    request = Request.user("q", temperature=0.0)
    with pytest.raises(PendingBatch):
        BatchFileClient(tmp_path / "b").complete(request)
    export_pending(tmp_path / "b", tmp_path / "p")
    (tmp_path / "a").mkdir()
    (tmp_path / "a" / next((tmp_path / "p").iterdir()).name).write_bytes("def f():\r\n    return 'é'\r".encode())
    assert main(["llm", "answer-batch", str(tmp_path / "b"), "--from", str(tmp_path / "a"), "--answered-by", "x"]) == 0
    assert BatchFileClient(tmp_path / "b").complete(request).text == "def f():\n    return 'é'\n"


def test_an_earlier_ledger_over_its_bound_is_noted_in_the_history_unread(tmp_path):
    ledger = _sparse(tmp_path / "llm_ledger.json", RUN_FILE_BYTES + 1)
    client = wrap_client(ScriptedClient(["a"], model="gemini-2.5-pro"), run_dir=tmp_path)
    client.complete(Request.user("q"))  # the call is not failed by a damaged earlier ledger
    history = (tmp_path / "llm_ledger_history.jsonl").read_text().splitlines()
    assert len(history) == 1 and len(history[0]) < 1000, f"{len(history[0]):,} characters: the ledger was copied"
    assert json.loads(history[0]) == {"unreadable": f"LLM ledger {ledger}: {RUN_FILE_BYTES + 1:,} bytes, over its "
                                                    f"limit of {RUN_FILE_BYTES:,} bytes"}
    assert json.loads((tmp_path / "llm_ledger.json").read_text()) == client.ledger.snapshot()
