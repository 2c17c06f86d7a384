"""A run directory whose journal or cached reports were damaged (edited by hand, a disk that lost data) is a
one-line ResumeError naming the file and where in it, not a raw JSONDecodeError or KeyError."""

from __future__ import annotations

from pathlib import Path

import pytest
from synth_helpers import BUGGY_THEN_FIXED, reply, synthesize

from cwm.llm import ScriptedClient
from cwm.synthesis import ResumeError


@pytest.fixture
def finished(tmp_path: Path) -> Path:
    synthesize(tmp_path / "run", ScriptedClient([reply(n) for n in BUGGY_THEN_FIXED]), seed=0)
    return tmp_path / "run"


def _resume(run: Path) -> None:
    synthesize(run, ScriptedClient([reply(n) for n in BUGGY_THEN_FIXED]), seed=0)


def test_a_journal_entry_cut_short(finished):
    path = finished / "calls" / "000001.json"
    path.write_text(path.read_text(encoding="utf-8")[:200], encoding="utf-8")
    with pytest.raises(ResumeError, match=rf"{path}: not JSON \(.* at line \d+, column \d+\); delete the file"):
        _resume(finished)


def test_a_journal_entry_that_is_not_utf8(finished):
    path = finished / "calls" / "000000.json"
    path.write_bytes(b'{\n "index": 0,\n "tag": "caf\xe9"\n}\n')
    with pytest.raises(ResumeError, match=rf"{path}: not UTF-8 text at line 3, column 13 \(byte 0xe9\)"):
        _resume(finished)


def test_a_journal_entry_of_the_wrong_shape(finished):
    path = finished / "calls" / "000000.json"
    path.write_text('{"index": 0, "response": "not an object"}\n', encoding="utf-8")
    with pytest.raises(ResumeError, match=rf"{path}: not a journal entry"):
        _resume(finished)


def test_a_damaged_cached_check_report(finished):
    path = sorted((finished / "checks").glob("*.json"))[0]
    path.write_text('{"by_type": {}}\n', encoding="utf-8")
    with pytest.raises(ResumeError, match=rf"{path}: not a check report \(KeyError: 'transitions_passed'\)"):
        _resume(finished)
