"""Inference from the command line: `cwm synthesize --target/--deck/--model` refusals, and bundles that carry
an inference module (`cwm export --inference`, a closed-deck run) verified by `cwm inspect`. The replies are
hand-written test fixtures (the reference Leduc model and a search-based inference function), not LLM output."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from cwm.bundle import BundleError, export_run
from cwm.cli import main
from cwm.llm import ScriptedClient
from cwm.synthesis import SynthesisSettings, synthesize_world_model
from cwm.synthesis.inference import synthesize_inference
from tests.checks.test_inference_checks import SEARCH_INFERENCE_SOURCE


def _reply(code: str) -> str:
    return f"```python\n{code}\n```\n"


REFUSED = {
    # id: (flags, words of the one-line error)
    "inference-without-model": (["--target", "inference"], "--target inference needs --model"),
    "model-for-world-model": (["--model", "m.py"], "--target world-model does not take one"),
    "model-for-joint": (["--target", "joint", "--model", "m.py"], "--target joint does not take one"),
    "closed-inference": (["--target", "inference", "--deck", "closed", "--model", "m.py"],
                         "runs on the open deck, not --deck closed"),
    "open-joint": (["--target", "joint", "--deck", "open"], "runs on the closed deck, not --deck open"),
    "missing-model": (["--target", "inference", "--model", "nowhere"], "is neither a .py file"),
    "hidden-state-joint": (["--target", "joint", "--hidden", "state"], "is a variant of --target inference"),
}


@pytest.mark.parametrize("name", sorted(REFUSED))
def test_bad_target_settings_are_refused_in_one_line_before_anything_is_written(tmp_path: Path, capsys,
                                                                                name: str) -> None:
    flags, words = REFUSED[name]
    out = tmp_path / "run"
    assert main(["synthesize", "leduc_poker", "--llm", "replay:none.jsonl", "--out", str(out), *flags]) == 2
    err = capsys.readouterr().err.strip()
    assert words in err and len(err.splitlines()) == 1, err
    assert not out.exists()


def test_a_model_that_is_not_utf8_is_refused(tmp_path: Path, capsys) -> None:
    bad = tmp_path / "model.py"
    bad.write_bytes(b"x = '\xff'\n")
    assert main(["synthesize", "leduc_poker", "--target", "inference", "--model", str(bad),
                 "--out", str(tmp_path / "run")]) == 2
    assert "not UTF-8" in capsys.readouterr().err


@pytest.fixture(scope="module")
def world_model_run(tmp_path_factory, leduc_source) -> Path:
    run = tmp_path_factory.mktemp("wm") / "run"
    result = synthesize_world_model("leduc_poker", ScriptedClient([_reply(leduc_source)], model="scripted-wm"), SynthesisSettings.of("world_model", budget=1, num_train=3, num_test=0), run_dir=run)
    assert result.solved
    return run


def _inference_run(tmp_path: Path, world_model: str, name: str = "inf") -> Path:
    run = tmp_path / name
    correct = world_model + "\n\n" + SEARCH_INFERENCE_SOURCE
    result = synthesize_inference("leduc_poker", ScriptedClient([_reply(correct)], model="scripted-inference"), SynthesisSettings.of("inference", budget=1, num_train=2, num_test=0), run_dir=run, world_model=world_model)
    assert result.solved
    return run


def test_an_inference_run_for_the_world_model_is_exported_and_checked_on_load(tmp_path: Path, capsys,
                                                                            world_model_run: Path) -> None:
    inference = _inference_run(tmp_path, (world_model_run / "best_program.py").read_text())
    bundle_dir = tmp_path / "bundle"
    assert main(["export", str(world_model_run), "--out", str(bundle_dir), "--inference", str(inference)]) == 0
    printed = capsys.readouterr().out
    assert (bundle_dir / "inference.py").is_file()
    assert "inference (at synthesis): train 1.0" in printed and "inference load check:" in printed
    assert main(["inspect", str(bundle_dir)]) == 0
    shown = capsys.readouterr().out
    check = next(line for line in shown.splitlines() if "inference load check" in line)
    assert "passed" in check and "failed" not in check.split("passed")[0], check
    assert "inference accuracy (inference) 1.000" in check  # its quantity and stage, not "transition accuracy"
    assert "train_accuracy: 1.0 (transition accuracy of the world model)" in shown
    assert "load check:" in shown and "transition accuracy (world model) 1.000" in shown


def test_an_inference_run_for_another_world_model_is_refused(tmp_path: Path, world_model_run: Path,
                                                            leduc_source: str) -> None:
    other = leduc_source + "\n\nVERSION = 2\n"
    inference = _inference_run(tmp_path, other)
    with pytest.raises(BundleError, match="written for another world model"):
        export_run(world_model_run, tmp_path / "bundle", inference_run=inference)
    assert not (tmp_path / "bundle").exists()
    with pytest.raises(BundleError, match="not a finished inference run"):
        export_run(world_model_run, tmp_path / "bundle", inference_run=world_model_run)


def test_a_closed_deck_run_exports_one_module_as_model_and_inference(tmp_path: Path, capsys,
                                                                     leduc_source: str) -> None:
    run = tmp_path / "joint"
    joint = leduc_source + "\n\n" + SEARCH_INFERENCE_SOURCE
    result = synthesize_inference("leduc_poker", ScriptedClient([_reply(joint)], model="scripted-joint"), SynthesisSettings.of("inference", deck="closed", budget=1, num_train=2, num_test=0), run_dir=run)
    assert result.solved
    bundle_dir = tmp_path / "bundle"
    assert main(["export", str(run), "--out", str(bundle_dir)]) == 0
    assert (bundle_dir / "model.py").read_text() == (bundle_dir / "inference.py").read_text()
    assert json.loads((bundle_dir / "manifest.json").read_text())["provenance"]["target"] == "joint"
    exported = capsys.readouterr().out
    assert "inference load check:" in exported
    # its rates are the joint module's inference accuracies, said so, with the line an open bundle has
    assert main(["inspect", str(bundle_dir)]) == 0
    shown = capsys.readouterr().out
    for printed in (exported, shown):
        assert "train_accuracy: 1.0 (inference accuracy of the joint module)" in printed
        assert "inference (at synthesis): train 1.0, test None, LLM calls: 1 (the joint run above)" in printed
        assert "inference accuracy (joint) 1.000" in printed and "transition accuracy of" not in printed
