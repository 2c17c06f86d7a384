"""The closed-deck sessions shipped with cwm (hand-written replies, not LLM output; see
cwm/data/recordings/README.md) replayed through the sandbox: the joint world models and inference functions
of Leduc poker and Quadranto are refined to 100% of their checks, ends of games included."""

from __future__ import annotations

import importlib.resources
import json
from pathlib import Path

from cwm.cli import main
from cwm.llm import ReplayClient
from cwm.synthesis import SynthesisSettings
from cwm.synthesis.inference import synthesize_inference

CLOSED = Path(str(importlib.resources.files("cwm").joinpath("data", "recordings", "closed")))
JOINT_TYPES = {"inference", "inference_terminal", "random_play"}


def _reports(run: Path) -> list[dict]:
    """The check reports of the run's candidates, in the order they were written (a node per candidate)."""
    return [json.loads(p.read_text()) for p in sorted((run / "nodes").glob("*/report.json"))]


def _failures(report: dict) -> list[dict]:
    return report["failures"]


def test_closed_deck_leduc_is_refined_to_every_check_from_the_recording(tmp_path):
    run = tmp_path / "run"
    result = synthesize_inference("leduc_poker", ReplayClient(CLOSED / "leduc_poker.jsonl"), SynthesisSettings.of("inference", deck="closed", num_test=6), run_dir=run)
    assert result.target == "joint" and result.solved and result.llm_calls == 3
    assert result.train_accuracy == 1.0 and set(result.train_by_type) == JOINT_TYPES
    assert all(v == 1.0 for v in result.train_by_type.values())
    assert result.test_accuracy == 1.0  # held-out closed-deck games, ends of games included
    first, fixed, own_fold = _reports(run)
    # the first candidate ignored the showdown: its histories end paying the player what it was not paid
    assert {f["test_type"] for f in _failures(first)} == {"inference_terminal"}
    assert any("observation differs" in f["diff"] for f in _failures(first))
    # the second scored a game the player ended by folding as a showdown: at that game's end no card fits
    assert [f["test_type"] for f in _failures(fixed)] == ["inference_terminal"]
    assert "resample_history raised" in _failures(fixed)[0]["diff"] and not _failures(own_fold)


def test_closed_deck_quadranto_is_refined_to_every_check_with_the_terminal_flag(tmp_path):
    run = tmp_path / "run"
    result = synthesize_inference("quadranto", ReplayClient(CLOSED / "quadranto.jsonl"), SynthesisSettings.of("inference", deck="closed", num_test=20), run_dir=run)
    assert result.target == "joint" and result.solved and result.llm_calls == 2
    assert result.train_accuracy == 1.0 and set(result.train_by_type) == JOINT_TYPES
    assert result.test_accuracy == 1.0  # 20 held-out games, catches by either player included
    first, refined = _reports(run)
    # the first candidate kept every game going at its last state: a catch it was told of did not end the game
    assert {f["test_type"] for f in _failures(first)} == {"inference_terminal"}
    assert all("not terminal" in f["diff"] for f in _failures(first)) and not _failures(refined)


def test_cwm_synthesize_replays_the_closed_recording(tmp_path, capsys):
    out = tmp_path / "run"
    argv = ["synthesize", "leduc_poker", "--target", "joint", "--llm", f"replay:{CLOSED / 'leduc_poker.jsonl'}",
            "--out", str(out), "--num-test", "2"]
    assert main(argv) == 0
    printed = capsys.readouterr().out
    assert "leduc_poker (joint, closed deck): solved after 3" in printed
    assert json.loads((out / "result.json").read_text())["model"] == "scripted-leduc-poker-joint"
