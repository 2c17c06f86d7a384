"""Both experiment scripts check every flag before they write anything: a bad value is one line on stderr,
exit status 2, and no run directory (so the corrected command can use the same ``--out``)."""

from __future__ import annotations

import importlib
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
SCRIPTS = ("arena_figure", "synthesis_table")


def script(name: str):
    """An experiment script as a module (the repository root is appended, so the installed cwm still wins)."""
    if str(ROOT) not in sys.path:
        sys.path.append(str(ROOT))
    return importlib.import_module(f"experiments.{name}")


def refused(name: str, argv: list[str], out: Path, capsys) -> str:
    """Runs a script that must refuse ``argv``; its stderr, after checking it wrote nothing."""
    assert script(name).main([*argv, "--out", str(out), "--quiet"]) == 2
    err = capsys.readouterr().err
    assert err.startswith(f"{name}: error: ") and "Traceback" not in err and len(err.splitlines()) == 1
    assert not out.exists()
    return err


COUNTS = {  # flags -> the error; arena_figure refuses any --seeds but 1 with its own message (tested there)
    "matches": (["--matches", "0"], "tic_tac_toe: matches (--matches) must be a whole number of at least 1, got 0"),
    "sims": (["--sims", "0"], "tic_tac_toe: sims (--sims) must be a whole number of at least 1, got 0"),
    "rollouts": (["--rollouts", "0"], "tic_tac_toe: rollouts (--rollouts) must be a whole number of at least 1"),
    "seeds": (["--seeds", "0"], "tic_tac_toe: seeds (--seeds) must be a whole number of at least 1, got 0"),
    "budget": (["--budget", "0"], "tic_tac_toe: budget (--budget) must be a whole number of at least 1, got 0"),
    "num-train": (["--num-train", "0"], "tic_tac_toe: num_train (--num-train) must be a whole number of at least 1"),
    "num-test": (["--num-test", "-1"], "tic_tac_toe: num_test (--num-test) must be a whole number of at least 0"),
    "first-seed": (["--first-seed", "-1"], "--first-seed must be at least 0, got -1"),
}
CASES = [(name, case) for name in SCRIPTS for case in COUNTS if (name, case) != ("arena_figure", "seeds")]


@pytest.mark.parametrize("name, case", CASES, ids=[f"{n}-{c}" for n, c in CASES])
def test_counts_below_their_least_value_are_refused(tmp_path, capsys, name, case):
    flags, message = COUNTS[case]
    err = refused(name, ["--games", "tic_tac_toe", "--executor", "inline", *flags], tmp_path / "o", capsys)
    assert message in err


@pytest.mark.parametrize("text, message", [
    ('{"game": "tic_tac_toe", "matches": "3"}', "matches (--matches) must be a whole number of at least 1, got '3'"),
    ('{"game": "tic_tac_toe", "test_mcts_simulations": 0}', "test_mcts_simulations must be a whole number"),
    ('{"game": "tic_tac_toe", "sims": true}', "sims (--sims) must be a whole number of at least 1, got True"),
], ids=["text-count", "no-flag-key", "bool-count"])
def test_config_file_counts_are_checked_too(tmp_path, capsys, text, message):
    path = tmp_path / "mine.json"
    path.write_text(text)
    assert message in refused("synthesis_table", ["--config", str(path)], tmp_path / "o", capsys)
