"""experiments/value_ablation.py on the smallest settings: a tic-tac-toe bundle with a hand-written value, played
with and without it against random and GT-MCTS, one table."""

from __future__ import annotations

import importlib
import json
import sys
from pathlib import Path

from cwm.bundle import export_bundle
from cwm.games import trajectories

ROOT = Path(__file__).resolve().parents[2]
DATA = ROOT / "tests" / "data"


def script(name: str):
    if str(ROOT) not in sys.path:
        sys.path.append(str(ROOT))
    return importlib.import_module(f"experiments.{name}")


def test_the_ablation_plays_both_agents_against_both_opponents(tmp_path: Path) -> None:
    bundle = export_bundle(tmp_path / "bundle", game="tic_tac_toe",
                           model_source=(DATA / "reference" / "tic_tac_toe_model.py").read_text(),
                           train=trajectories.collect("tic_tac_toe", 2, seed=0),
                           extra_sources={"value.py": (DATA / "values" / "tic_tac_toe_value.py").read_text()})
    out = tmp_path / "run"
    argv = ["--bundles", f"tic_tac_toe={bundle}", "--matches", "1", "--sims", "20", "--rollouts", "1",
            "--executor", "inline", "--quiet", "--out", str(out)]
    assert script("value_ablation").main(argv) == 0
    rows = json.loads((out / "ablation.json").read_text())["rows"]
    assert [(r["agent"], r["opponent"]) for r in rows] == [
        ("value", "random"), ("value", "gt-mcts"), ("no-value", "random"), ("no-value", "gt-mcts")]
    assert all(r["matches"] == 2 and r["value_py"] for r in rows)  # one match per seat order
    assert (bundle / "value.py").is_file() and not (out / "tic_tac_toe" / "no_value_bundle" / "value.py").exists()
    table = (out / "ablation.md").read_text()
    assert table.count("| tic_tac_toe | yes |") == 4
    assert json.loads((out / "record.json").read_text())["experiment"] == "value_ablation"


def test_the_ablation_refuses_a_zero_count_in_one_line(tmp_path: Path, capsys) -> None:
    assert script("value_ablation").main(["--bundles", f"tic_tac_toe={tmp_path}", "--matches", "0"]) == 2
    assert "--matches must be at least 1, got 0" in capsys.readouterr().err
