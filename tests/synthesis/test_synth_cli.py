"""`cwm synthesize` end to end on the recorded (scripted) tic-tac-toe session."""

from __future__ import annotations

import importlib.resources
import json
from pathlib import Path

import pytest

from cwm.cli import main

# the installed package's copy, so a missing package-data entry fails here
RECORDING = Path(str(importlib.resources.files("cwm").joinpath("data/recordings/tic_tac_toe.jsonl")))


def test_cli_replays_the_recorded_session(tmp_path: Path, capsys) -> None:
    out = tmp_path / "run"
    argv = ["synthesize", "tic_tac_toe", "--llm", f"replay:{RECORDING}", "--out", str(out), "--num-test", "4",
            "--test-mcts-simulations", "10", "--no-sandbox"]
    assert main(argv) == 0
    printed = capsys.readouterr().out
    assert "solved after 3 LLM calls" in printed and "test 1.0000" in printed
    result = json.loads((out / "result.json").read_text())
    assert result["solved"] and result["llm_calls"] == 3 and result["test_accuracy"] == 1.0
    assert result["model"] == "scripted-tic-tac-toe"
    for name in ("summary.md", "accuracy.png", "best_program.py", "llm_log.jsonl"):
        assert (out / name).is_file(), name
    # a second run of the same command resumes: nothing left to do, same result
    assert main(argv) == 0
    again = json.loads((out / "result.json").read_text())
    assert {k: v for k, v in again.items() if k not in ("wall_time_s", "cost_usd")} == {
        k: v for k, v in result.items() if k not in ("wall_time_s", "cost_usd")}


def test_cli_rejects_an_unknown_strategy(capsys) -> None:
    try:
        main(["synthesize", "tic_tac_toe", "--strategy", "beam", "--out", "x"])
    except SystemExit as e:
        assert e.code == 2
    assert "invalid choice" in capsys.readouterr().err


BAD_FLAGS = {
    # id: (flags, words of the one-line error)
    "num-test-negative": (["--num-test", "-1"], "--num-test must be >= 0, got -1"),
    "max-steps-shown-0": (["--max-steps-shown", "0"], "--max-steps-shown must be >= 1, got 0"),
    "max-steps-shown-negative": (["--max-steps-shown", "-2"], "--max-steps-shown must be >= 1, got -2"),
    "budget-0": (["--budget", "0"], "--budget must be >= 1, got 0"),
    "concurrency-0": (["--concurrency", "0"], "--concurrency must be >= 1, got 0"),
    "c-negative": (["--c", "-1"], "--c must be >= 0, got -1.0"),
}


@pytest.mark.parametrize("name", sorted(BAD_FLAGS))
def test_cli_rejects_out_of_range_numbers_in_one_line(tmp_path: Path, capsys, name: str) -> None:
    flags, words = BAD_FLAGS[name]
    out = tmp_path / "run"
    assert main(["synthesize", "tic_tac_toe", "--llm", f"replay:{RECORDING}", "--out", str(out), *flags]) == 2
    err = capsys.readouterr().err
    assert err.strip() == f"cwm synthesize: error: {words}"
    assert not (out / "config.json").exists()


def test_cli_lets_the_client_carry_the_asked_concurrency(tmp_path: Path, monkeypatch) -> None:
    import cwm.commands.synthesize

    seen: dict = {}

    def fake_make_client(spec: str, **options: object) -> object:
        seen.update(options)
        raise KeyboardInterrupt  # stop before any work

    monkeypatch.setattr(cwm.commands.synthesize, "make_client", fake_make_client)
    for concurrency, limit in (("3", 8), ("16", 16)):
        argv = ["synthesize", "tic_tac_toe", "--out", str(tmp_path / concurrency), "--concurrency", concurrency]
        assert main(argv) == 130
        assert seen["max_concurrency"] == limit


@pytest.mark.parametrize("flags,counted", [([], True), (["--paper-beta"], False)], ids=["default", "paper-beta"])
def test_cli_counts_refinements_in_beta_unless_paper_beta(tmp_path: Path, flags: list, counted: bool) -> None:
    out = tmp_path / "run"
    assert main(["synthesize", "tic_tac_toe", "--llm", f"replay:{RECORDING}", "--out", str(out), "--num-test", "0",
                 "--no-sandbox", "--quiet", *flags]) == 0
    assert json.loads((out / "config.json").read_text())["tree"]["count_refinements"] is counted
