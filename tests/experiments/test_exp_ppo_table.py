"""experiments/ppo_table.py on the smallest settings: a tic-tac-toe bundle synthesized offline (the recorded
session), PPO trained inside it for a few updates with the hand-written encoder, then played against random,
GT-MCTS and the CWM agent on the same bundle; a game without an encoder is a row saying so."""

from __future__ import annotations

import importlib
import json
import sys
from pathlib import Path

from cwm.bundle import export_bundle
from cwm.games import trajectories

ROOT = Path(__file__).resolve().parents[2]
REFERENCE = ROOT / "tests" / "data" / "reference"
TINY = ["--games", "tic_tac_toe", "--matches", "1", "--sims", "20", "--rollouts", "1", "--num-test", "2",
        "--steps", "128", "--ppo-seeds", "1", "--num-envs", "8", "--rollout", "8", "--executor", "inline",
        "--ppo-executor", "inline", "--quiet"]


def script(name: str):
    if str(ROOT) not in sys.path:
        sys.path.append(str(ROOT))
    return importlib.import_module(f"experiments.{name}")


def test_the_policy_trained_in_the_cwm_plays_random_ground_truth_and_the_cwm_agent(tmp_path: Path) -> None:
    out = tmp_path / "run"
    argv = [*TINY, "--encoders", f"tic_tac_toe={REFERENCE / 'tic_tac_toe_encoder.py'}", "--out", str(out)]
    assert script("ppo_table").main(argv) == 0
    rows = json.loads((out / "ppo.json").read_text())["rows"]
    assert [(r["game"], r["agent"], r["opponent"], r["matches"]) for r in rows] == [
        ("tic_tac_toe", "ppo", "random", 2), ("tic_tac_toe", "ppo", "gt-mcts", 2), ("tic_tac_toe", "ppo", "cwm", 2)]
    assert all(r["steps"] == 128 and r["forfeit_rate"] == 0.0 for r in rows)
    game = out / "tic_tac_toe"
    assert not (game / "bundle" / "policy.npz").exists()  # the synthesized bundle stays as exported
    assert (game / "bundle-ppo" / "policy.npz").is_file() and (game / "ppo" / "curve.png").is_file()
    record = json.loads((out / "record.json").read_text())
    assert record["experiment"] == "ppo_table" and record["results"]["ppo"]["tic_tac_toe"]["best_seed"] == 0
    table = (out / "ppo.md").read_text()
    assert table.count(" | 128 |\n") == 3  # a row per opponent, with its PPO steps
    assert table.count("| tic_tac_toe | ppo | ") == 3  # and a paired comparison per opponent


def test_each_opponent_gets_the_arenas_paired_comparison_of_the_matches_played(tmp_path: Path) -> None:
    out = tmp_path / "run"
    argv = [*TINY, "--matches", "6", "--encoders", f"tic_tac_toe={REFERENCE / 'tic_tac_toe_encoder.py'}",
            "--out", str(out)]
    assert script("ppo_table").main(argv) == 0
    rows = json.loads((out / "ppo.json").read_text())["rows"]
    table = (out / "ppo.md").read_text()
    assert "## Paired comparisons" in table
    for r in rows:
        c = r["paired"]  # 6 matches per seat order: 6 seat-swapped pairs, all on shared deals
        assert (c["agent"], c["opponent"], c["matches"], c["pairs"], c["unpaired"]) == ("ppo", r["opponent"], 12, 6, 0)
        score = (r["wins"] + r["draws"] / 2) / r["matches"]  # the pooled rows and the pairs count the same matches
        assert abs(0.5 + c["mean"] - score) < 1e-9 and c["lo"] <= c["mean"] <= c["hi"]
        assert c["mde"] is not None and c["mde"] > 0  # six pairs can show a difference: the MDE is printed
        mde = f"±{c['mde']:.2f}"
        line = next(x for x in table.splitlines() if x.startswith(f"| tic_tac_toe | ppo | {r['opponent']} | 12 (6) |"))
        assert mde in line and c["verdict"] in line


def test_a_game_without_an_encoder_is_a_row_saying_so(tmp_path: Path) -> None:
    given = export_bundle(tmp_path / "bundle", game="tic_tac_toe",
                          model_source=(REFERENCE / "tic_tac_toe_model.py").read_text(),
                          train=trajectories.collect("tic_tac_toe", 2, seed=0))
    out = tmp_path / "run"
    assert script("ppo_table").main([*TINY, "--bundles", f"tic_tac_toe={given}", "--out", str(out)]) == 0
    rows = json.loads((out / "ppo.json").read_text())["rows"]
    assert rows == [{"game": "tic_tac_toe", "status": "no encoder (give --encoders GAME=FILE)"}]
    assert "no encoder" in (out / "ppo.md").read_text()


def test_a_zero_step_budget_is_refused_in_one_line(tmp_path: Path, capsys) -> None:
    assert script("ppo_table").main([*TINY, "--steps", "0", "--out", str(tmp_path / "run")]) == 2
    assert "--steps must be at least 1, got 0" in capsys.readouterr().err
