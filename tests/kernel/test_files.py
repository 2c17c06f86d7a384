"""cwm.files: crash-safe writes, a resumable run's record file read back after a crash, and the config.json
comparison every resumable run directory makes."""

from __future__ import annotations

import json
import logging

import pytest

from cwm.files import LineError, atomic_write, changed_settings, differing_keys, read_appended

LOG = logging.getLogger("cwm.test_files")


def _numbers(path):
    return read_appended(path, lambda row: int(row["n"]), what="a number row", redo="its number is counted again",
                         log=LOG)


def test_atomic_write_creates_folders_and_leaves_no_temporary_file(tmp_path):
    path = tmp_path / "a" / "b" / "out.txt"
    atomic_write(path, "one")
    atomic_write(path, "two")
    assert path.read_text(encoding="utf-8") == "two"
    assert [p.name for p in path.parent.iterdir()] == ["out.txt"]


def test_no_stored_config_means_nothing_changed(tmp_path):
    assert changed_settings(tmp_path / "config.json", {"seed": 1}) == []


def test_changed_settings_names_every_differing_key_once_sorted(tmp_path):
    path = tmp_path / "config.json"
    path.write_text(json.dumps({"seed": 1, "game": "tic_tac_toe", "gone": 3, "same": [1, 2]}), encoding="utf-8")
    new = {"seed": 2, "game": "tic_tac_toe", "added": True, "same": (1, 2)}  # a tuple equals its stored list
    assert changed_settings(path, new) == ["added", "gone", "seed"]
    assert changed_settings(path, new, ignore={"seed", "gone", "added"}) == []


def test_differing_keys_compares_the_json_form_of_the_new_settings():
    class Where:
        def __str__(self) -> str:
            return "runs/x"

    assert differing_keys({"out": "runs/x", "n": 1.0}, {"out": Where(), "n": 1}) == []
    assert differing_keys({"n": 1}, {"n": 2}, ignore={"m"}) == ["n"]


def test_a_torn_last_line_is_cut_off_the_file_with_a_warning_naming_file_and_line(tmp_path, caplog):
    path = tmp_path / "rows.jsonl"
    path.write_bytes(b'{"n": 1}\n\n{"n": 2}\n{"n": 3')  # a blank line, then a writer killed mid-line
    with caplog.at_level(logging.WARNING):
        assert _numbers(path) == [1, 2]
    assert f"{path}:4: the last line is cut short" in caplog.text and "its number is counted again" in caplog.text
    assert path.read_bytes() == b'{"n": 1}\n\n{"n": 2}\n'  # the next append starts a line of its own
    caplog.clear()
    assert _numbers(path) == [1, 2] and not caplog.text


def test_a_file_holding_only_a_torn_line_is_emptied(tmp_path):
    path = tmp_path / "rows.jsonl"
    path.write_bytes(b'{"n": ')
    assert _numbers(path) == [] and path.read_bytes() == b""


def test_a_whole_last_line_without_its_newline_gets_one(tmp_path):
    path = tmp_path / "rows.jsonl"
    path.write_bytes(b'{"n": 1}\n{"n": 2}')
    assert _numbers(path) == [1, 2] and path.read_bytes() == b'{"n": 1}\n{"n": 2}\n'


def test_a_bad_middle_line_is_a_one_line_error_naming_file_and_line_and_the_file_is_kept(tmp_path):
    path = tmp_path / "rows.jsonl"
    data = b'{"n": 1}\n{"n": \n{"n": 3}\n'
    path.write_bytes(data)
    with pytest.raises(LineError) as info:
        _numbers(path)
    assert str(info.value).startswith(f"{path}:2: not a number row (not JSON") and "\n" not in str(info.value)
    assert path.read_bytes() == data  # nothing cut: the line may be a finished record, fixable by hand


def test_no_file_reads_as_no_records_and_none_is_made(tmp_path):
    assert _numbers(tmp_path / "rows.jsonl") == [] and not (tmp_path / "rows.jsonl").exists()
