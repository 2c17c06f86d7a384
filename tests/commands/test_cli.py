"""`cwm games`, `cwm collect`, `cwm check` through cwm.cli.main, and the installed console script."""

from __future__ import annotations

import json
import math
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from cwm import games
from cwm.cli import main
from cwm.games import trajectories

REFERENCE = Path(__file__).resolve().parent.parent / "data" / "reference"
TTT_MODEL = REFERENCE / "tic_tac_toe_model.py"


def test_games_lists_every_registered_game_with_facts(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["games"]) == 0
    out = capsys.readouterr().out
    for spec in games.registered():
        assert spec.name in out and spec.openspiel in out
    assert main(["games", "--json"]) == 0
    facts = {f["name"]: f for f in json.loads(capsys.readouterr().out)}
    assert facts["leduc_poker"]["information"] == "imperfect" and facts["leduc_poker"]["stochastic"] is True
    assert facts["tic_tac_toe"]["outcome"] == "win/draw/loss" and facts["tic_tac_toe"]["players"] == 2


def test_collect_open_and_closed_deck(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    out = tmp_path / "sub" / "leduc.jsonl"
    assert main(["collect", "leduc_poker", "--n", "3", "--seed", "7", "--out", str(out)]) == 0
    assert "wrote 3 open-deck trajectories of leduc_poker" in capsys.readouterr().out
    assert trajectories.load(out) == trajectories.collect("leduc_poker", 3, seed=7)
    closed = tmp_path / "closed.jsonl"
    assert main(["collect", "leduc", "--n", "2", "--deck", "closed", "--player", "1", "--out", str(closed)]) == 0
    loaded = trajectories.load(closed, game="leduc_poker")
    assert [t.player for t in loaded] == [1, 1]  # type: ignore[union-attr]


def test_check_reference_model_passes(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    data = tmp_path / "ttt.jsonl"
    assert main(["collect", "tic_tac_toe", "--n", "5", "--out", str(data)]) == 0
    capsys.readouterr()
    assert main(["check", str(TTT_MODEL), "--game", "tic_tac_toe", "--trajectories", str(data)]) == 0
    printed = capsys.readouterr().out
    assert "checks passed (100.0%); transition accuracy (world model) 1.000" in printed
    assert main(["check", str(TTT_MODEL), "--game", "tic_tac_toe", "--trajectories", str(data), "--json"]) == 0
    report = json.loads(capsys.readouterr().out)
    assert report["failures"] == [] and report["transitions_passed"] == report["transitions_total"] > 0
    # beside the perfect score, what it bounds: ln(20)/N at 95% with N the transitions checked
    n = report["transitions_total"]
    assert f"transition accuracy (world model) 1.000 (0 of {n:,} wrong: error rate < {math.log(20) / n:.2g} at 95%)" in printed


def test_check_broken_model_prints_the_failure_and_exits_1(tmp_path: Path,
                                                           capsys: pytest.CaptureFixture[str]) -> None:
    data = trajectories.save(tmp_path / "ttt.jsonl", trajectories.collect("tic_tac_toe", 5, seed=0))
    broken = tmp_path / "broken.py"
    broken.write_text(TTT_MODEL.read_text(encoding="utf-8").replace("for i in range(9) if", "for i in range(8) if"),
                      encoding="utf-8")
    assert main(["check", str(broken), "--game", "tic_tac_toe", "--trajectories", str(data)]) == 1
    out = capsys.readouterr().out
    assert "[legal_actions] game" in out and "get_legal_actions(state)" in out
    assert "diff: missing ['x(2,2)']" in out or "diff: missing ['o(2,2)']" in out


@pytest.mark.parametrize(("argv", "message"), [
    (["collect", "tic_tac_to", "--out", "x.jsonl"], "unknown game 'tic_tac_to'"),
    (["check", "missing_model.py", "--game", "tic_tac_toe", "--trajectories", "t.jsonl"],
     "model file 'missing_model.py' does not exist"),
    (["check", "MODEL", "--game", "connect_four", "--trajectories", "t.jsonl"],
     "trajectories of ['tic_tac_toe'] where 'connect_four' was expected"),
    (["check", "BAD", "--game", "tic_tac_toe", "--trajectories", "t.jsonl"], "bad: syntax error at line 1"),
    (["check", "oracle", "--game", "tic_tac_toe", "--trajectories", "closed.jsonl"], "`oracle` has none"),
], ids=["unknown-game", "missing-model", "other-game", "syntax-error", "closed-deck-oracle"])
def test_bad_input_is_one_line_on_stderr_with_exit_2(argv: list[str], message: str, tmp_path: Path,
                                                     monkeypatch: pytest.MonkeyPatch,
                                                     capsys: pytest.CaptureFixture[str]) -> None:
    monkeypatch.chdir(tmp_path)
    trajectories.save("t.jsonl", trajectories.collect("tic_tac_toe", 1, seed=0))
    trajectories.save("closed.jsonl", [trajectories.closed_view(trajectories.record("tic_tac_toe", seed=0), 0)])
    Path("bad.py").write_text("def get_initial_state(:\n", encoding="utf-8")
    argv = [str(TTT_MODEL) if a == "MODEL" else "bad.py" if a == "BAD" else a for a in argv]
    assert main(argv) == 2
    err = capsys.readouterr().err
    assert message in err and "Traceback" not in err
    assert err.startswith(f"cwm {argv[0]}: error: ") and len(err.strip().splitlines()) == 1


def _console_script() -> str:
    beside = Path(sys.executable).parent / "cwm"
    found = str(beside) if beside.is_file() else shutil.which("cwm")
    assert found, "the `cwm` console script is not installed: run `pip install .` (or -e .) first"
    return found


def test_installed_console_script_works_from_any_directory(tmp_path: Path) -> None:
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}

    def run(*args: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run([_console_script(), *args], cwd=tmp_path, env=env, capture_output=True, text=True,
                              timeout=120)

    listed = run("games")
    assert listed.returncode == 0 and "gin_rummy" in listed.stdout, listed.stderr
    collected = run("collect", "tic_tac_toe", "--n", "2", "--out", "t.jsonl")
    assert collected.returncode == 0 and (tmp_path / "t.jsonl").is_file(), collected.stderr
    checked = run("check", str(TTT_MODEL), "--game", "tic_tac_toe", "--trajectories", "t.jsonl")
    assert checked.returncode == 0 and "(100.0%)" in checked.stdout, checked.stdout + checked.stderr
