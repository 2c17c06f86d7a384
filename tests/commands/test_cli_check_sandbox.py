"""`cwm check` runs the model in the sandbox: a model that never returns is stopped and reported, not waited on
forever; `--no-sandbox` runs trusted code in-process; load problems stay one-line errors either way."""

from __future__ import annotations

from pathlib import Path

import pytest

from cwm.cli import main
from cwm.games import trajectories

TTT_MODEL = Path(__file__).resolve().parent.parent / "data" / "reference" / "tic_tac_toe_model.py"


@pytest.fixture
def data(tmp_path: Path) -> Path:
    return trajectories.save(tmp_path / "ttt.jsonl", trajectories.collect("tic_tac_toe", 1, seed=0))


def _variant(tmp_path: Path, name: str, old: str, new: str) -> Path:
    source = TTT_MODEL.read_text(encoding="utf-8")
    assert old in source
    path = tmp_path / name
    path.write_text(source.replace(old, new, 1), encoding="utf-8")
    return path


def test_a_model_that_never_returns_is_stopped_and_reported(tmp_path: Path, data: Path,
                                                           capsys: pytest.CaptureFixture[str]) -> None:
    hang = _variant(tmp_path, "hang.py", "def get_rewards(state", "def get_rewards(state, _=None):\n"
                    "    while True:\n        pass\n\n\ndef _unused(state")
    argv = ["check", str(hang), "--game", "tic_tac_toe", "--trajectories", str(data), "--per-call-s", "0.3"]
    assert main(argv) == 1
    out = capsys.readouterr().out
    assert "error: timeout:" in out and "per-call budget of 0.3 s" in out


@pytest.mark.parametrize("sandbox", [True, False], ids=["sandbox", "no-sandbox"])
def test_reference_model_passes_with_and_without_the_sandbox(sandbox: bool, data: Path,
                                                             capsys: pytest.CaptureFixture[str]) -> None:
    argv = ["check", str(TTT_MODEL), "--game", "tic_tac_toe", "--trajectories", str(data)]
    assert main(argv + ([] if sandbox else ["--no-sandbox"])) == 0
    assert "(100.0%)" in capsys.readouterr().out


@pytest.mark.parametrize("sandbox", [True, False], ids=["sandbox", "no-sandbox"])
def test_module_body_error_is_one_line_exit_2(sandbox: bool, tmp_path: Path, data: Path,
                                              capsys: pytest.CaptureFixture[str]) -> None:
    boom = tmp_path / "boom.py"
    boom.write_text(TTT_MODEL.read_text(encoding="utf-8") + "\nx = 1 // 0\n", encoding="utf-8")
    argv = ["check", str(boom), "--game", "tic_tac_toe", "--trajectories", str(data)]
    assert main(argv + ([] if sandbox else ["--no-sandbox"])) == 2
    err = capsys.readouterr().err
    assert err.startswith("cwm check: error: boom: running the module raised ZeroDivisionError") and \
        len(err.strip().splitlines()) == 1, err


def test_a_model_file_that_is_not_utf8_is_named(tmp_path: Path, data: Path, capsys: pytest.CaptureFixture[str]) -> None:
    latin = tmp_path / "latin.py"
    latin.write_bytes(b"# caf\xe9\n" + TTT_MODEL.read_bytes())
    assert main(["check", str(latin), "--game", "tic_tac_toe", "--trajectories", str(data)]) == 2
    err = capsys.readouterr().err
    assert "latin.py: not UTF-8 text" in err and len(err.strip().splitlines()) == 1, err
