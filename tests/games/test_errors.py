"""Bad input gets one clear error naming what was wrong and where, never a traceback from deep inside."""

from __future__ import annotations

from pathlib import Path

import pytest

from cwm.games import trajectories
from cwm.sandbox import load_source
from cwm.types import ModelLoadError, TrajectoryFormatError

REFERENCE = Path(__file__).resolve().parent.parent / "data" / "reference"
GOOD_MODEL = (REFERENCE / "tic_tac_toe_model.py").read_text(encoding="utf-8")


@pytest.fixture
def good_file(tmp_path: Path) -> Path:
    return trajectories.save(tmp_path / "ttt.jsonl", trajectories.collect("tic_tac_toe", 2, seed=0))


def test_malformed_json_line_is_named(good_file: Path) -> None:
    lines = good_file.read_text(encoding="utf-8").splitlines()
    good_file.write_text(lines[0] + "\n" + '{"schema": "cwm.trajectory/1", "kind": \n', encoding="utf-8")
    with pytest.raises(TrajectoryFormatError, match=r"ttt\.jsonl:2: not valid JSON \(Expecting value at column"):
        trajectories.load(good_file)


def test_truncated_file_is_detected(good_file: Path) -> None:
    text = good_file.read_text(encoding="utf-8")
    good_file.write_text(text[: len(text) - 200], encoding="utf-8")
    with pytest.raises(TrajectoryFormatError, match="the last line has no newline; the file looks truncated"):
        trajectories.load(good_file)


def test_trajectories_of_another_game_are_rejected(good_file: Path) -> None:
    with pytest.raises(TrajectoryFormatError, match=r"trajectories of \['tic_tac_toe'\] where 'connect_four' was"):
        trajectories.load(good_file, game="connect_four")


def test_missing_and_empty_files(tmp_path: Path) -> None:
    with pytest.raises(TrajectoryFormatError, match=r"trajectory file '.*nothing\.jsonl' does not exist"):
        trajectories.load(tmp_path / "nothing.jsonl")
    (tmp_path / "empty.jsonl").write_text("", encoding="utf-8")
    with pytest.raises(TrajectoryFormatError, match="no trajectories in the file"):
        trajectories.load(tmp_path / "empty.jsonl")


def test_record_with_missing_field_is_named(good_file: Path) -> None:
    text = good_file.read_text(encoding="utf-8").replace('"steps":', '"stops":', 1)
    good_file.write_text(text, encoding="utf-8")
    with pytest.raises(TrajectoryFormatError, match=r"ttt\.jsonl:1: malformed trajectory"):
        trajectories.load(good_file)


def test_closed_deck_file_where_open_deck_is_needed(tmp_path: Path) -> None:
    closed = trajectories.closed_view(trajectories.record("leduc_poker", seed=0), 0)
    path = trajectories.save(tmp_path / "closed.jsonl", [closed])
    with pytest.raises(TrajectoryFormatError, match=r"records \[0\] are closed-deck"):
        trajectories.load_open(path)


@pytest.mark.parametrize(("source", "message"), [
    (GOOD_MODEL.replace("def get_rewards(", "def get_reward("), r"m: missing contract function\(s\): get_rewards"),
    ("def get_initial_state(:\n    return {}\n", "m: syntax error at line 1"),
    ("import os\n" + GOOD_MODEL, "m: line 1: import of 'os' is not allowed"),
    ("from subprocess import run\n" + GOOD_MODEL, "m: line 1: import of 'subprocess' is not allowed"),
    (GOOD_MODEL + "\nopen('x')\n", "use of 'open' is not allowed"),
    ("BOARD = 1 / 0\n" + GOOD_MODEL, "m: running the module raised ZeroDivisionError: division by zero"),
], ids=["missing-function", "syntax-error", "forbidden-import", "forbidden-from-import", "forbidden-name",
        "import-time-error"])
def test_bad_model_source_gets_a_clear_load_error(source: str, message: str) -> None:
    with pytest.raises(ModelLoadError, match=message):
        load_source(source, name="m")
