"""`cwm select` from the command line: the report, the survivors and the arena spec; bad input in one line."""

from __future__ import annotations

from pathlib import Path

import pytest

from cwm.cli import main


def test_cwm_select_prints_the_report_and_the_spec(bundles: dict[str, Path], tmp_path: Path,
                                                    capsys: pytest.CaptureFixture[str]) -> None:
    out = tmp_path / "sel"
    code = main(["select", "tic_tac_toe", str(bundles["good"]), str(bundles["weak"]), "--out", str(out), "--hosts", "1",
                 "--games", "1", "--sims", "50", "--rollouts", "2", "--executor", "inline"])
    printed = capsys.readouterr()
    assert code == 0
    assert "1 host(s) x 4 pairings x 1 games = 4 games" in printed.err  # the size, before anything is played
    assert "| good |" in printed.out and f"cwm-selected:{out.resolve()}" in printed.out
    assert (out / "selection.json").is_file() and len((out / "games.jsonl").read_text().splitlines()) == 4


def test_cwm_select_refuses_bad_input_in_one_line(bundles: dict[str, Path], tmp_path: Path,
                                                  capsys: pytest.CaptureFixture[str]) -> None:
    code = main(["select", "tic_tac_toe", str(bundles["good"]), "--out", str(tmp_path / "sel")])
    err = capsys.readouterr().err
    assert code == 2 and err.count("\n") == 1 and "at least two bundles" in err
    assert not (tmp_path / "sel").exists()
