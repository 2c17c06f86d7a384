"""`cwm sandbox info|gate|check` from the command line."""

from __future__ import annotations

from pathlib import Path

import pytest

from cwm import cli

from .conftest import DATA, HOSTILE


def test_info_lists_the_layers(capsys: pytest.CaptureFixture[str]) -> None:
    assert cli.main(["sandbox", "info"]) == 0
    out = capsys.readouterr().out
    assert "seccomp" in out and "bwrap" in out


def test_gate_accepts_and_rejects_files(capsys: pytest.CaptureFixture[str]) -> None:
    good = DATA / "reference" / "tic_tac_toe_model.py"
    bad = HOSTILE / "os_system.py"
    assert cli.main(["sandbox", "gate", str(good)]) == 0
    assert cli.main(["sandbox", "gate", str(good), str(bad)]) == 1
    out = capsys.readouterr().out
    assert f"{good}: ok" in out and f"{bad}: rejected: line 6: import of 'os' is not allowed" in out


@pytest.mark.parametrize("model,code,text", [
    (DATA / "reference" / "tic_tac_toe_model.py", 0, "checks passed (100.0%); transition accuracy (world model)"),
    (HOSTILE / "infinite_loop.py", 1, "error: timeout: get_current_player(...) ran longer than the per-call"),
], ids=["reference", "infinite-loop"])
def test_check_runs_in_the_sandbox(model: Path, code: int, text: str, capsys: pytest.CaptureFixture[str]) -> None:
    argv = ["sandbox", "check", str(model), "--game", "tic_tac_toe", "--n", "2", "--isolation", "process",
            "--per-call-s", "0.3", "--wall-s", "10"]
    assert cli.main(argv) == code
    out = capsys.readouterr().out
    assert out.startswith("[sandbox: process]") and text in out
