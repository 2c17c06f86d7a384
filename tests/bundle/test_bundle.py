"""Bundles: export, load anywhere, play; tampered, truncated or foreign bundles fail with clear errors."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import numpy as np
import pytest
from open_spiel.python.algorithms import evaluate_bots, mcts

from cwm import bundle, trajectories
from cwm.cli import main

DATA = Path(__file__).resolve().parents[1] / "data"
TTT_SOURCE = (DATA / "synthesis" / "ttt_correct.py").read_text(encoding="utf-8")


@pytest.fixture(scope="module")
def train():
    return trajectories.collect("tic_tac_toe", 3, seed=0)


@pytest.fixture()
def exported(tmp_path, train) -> Path:
    return bundle.export_bundle(tmp_path / "ttt", game="tic_tac_toe", model_source=TTT_SOURCE, train=train,
                                provenance={"llm": "hand-written fixture", "seed": 0})


def test_export_writes_versioned_manifest_with_hashes(exported):
    manifest = json.loads((exported / "manifest.json").read_text())
    assert manifest["bundle_format"] == bundle.BUNDLE_FORMAT
    assert manifest["game"] == "tic_tac_toe"
    assert set(manifest["files"]) == {"model.py", "check_report.json", "trajectories.jsonl"}
    assert manifest["export_check"]["transition_accuracy"] == 1.0
    assert manifest["provenance"]["llm"] == "hand-written fixture"
    assert len(manifest["trajectory_hash"]) == 16


def test_bundle_copied_elsewhere_loads_and_plays(exported, tmp_path):
    moved = shutil.copytree(exported, tmp_path / "elsewhere" / "copy")
    b = bundle.load_bundle(moved)
    assert b.check_report.all_passed and b.check_report.executed > 0
    game = b.as_openspiel_game()
    rng = np.random.RandomState(0)
    bots = [mcts.MCTSBot(game, 2.0, 30, mcts.RandomRolloutEvaluator(1, rng), random_state=rng) for _ in range(2)]
    returns = evaluate_bots.evaluate_bots(game.new_initial_state(), bots, rng)
    assert sorted(returns) in ([-1.0, 1.0], [0.0, 0.0])


def test_edited_model_fails_load_check(exported):
    path = exported / "model.py"
    path.write_text(path.read_text().replace("return", "return", 1) + "\n# a harmless-looking edit\n")
    with pytest.raises(bundle.BundleError, match="model.py does not match its hash"):
        bundle.load_bundle(exported)


@pytest.mark.parametrize(
    "damage, message",
    [
        (lambda p: (p / "model.py").unlink(), "model.py is missing"),
        (lambda p: (p / "manifest.json").unlink(), "manifest.json is missing"),
        (lambda p: (p / "manifest.json").write_text("{not json"), "manifest.json is not valid JSON"),
        (lambda p: _set_manifest(p, bundle_format=99), "bundle format 99 is not supported"),
        (lambda p: (p / "trajectories.jsonl").write_text("garbage\n"), "does not match its hash"),
    ],
    ids=["missing-model", "missing-manifest", "bad-manifest", "wrong-version", "corrupt-trajectories"],
)
def test_damaged_bundle_gets_clear_error(exported, damage, message):
    damage(exported)
    with pytest.raises(bundle.BundleError, match=message):
        bundle.load_bundle(exported)


def _set_manifest(path: Path, **changes: object) -> None:
    manifest = json.loads((path / "manifest.json").read_text())
    manifest.update(changes)
    (path / "manifest.json").write_text(json.dumps(manifest))


def test_consistently_rewritten_wrong_model_fails_conformance(exported):
    """Someone edits model.py and the manifest hash together: the re-run checks still catch it."""
    import hashlib

    bad = TTT_SOURCE.replace('"x"', '"o"', 1)
    assert bad != TTT_SOURCE
    (exported / "model.py").write_text(bad)
    _set_manifest(exported, files={**json.loads((exported / "manifest.json").read_text())["files"],
                                   "model.py": hashlib.sha256(bad.encode()).hexdigest()})
    with pytest.raises(bundle.BundleError, match="failed"):
        bundle.load_bundle(exported)


def test_export_refuses_existing_directory(exported, train):
    with pytest.raises(bundle.BundleError, match="already exists"):
        bundle.export_bundle(exported, game="tic_tac_toe", model_source=TTT_SOURCE, train=train)


def test_not_a_bundle(tmp_path):
    with pytest.raises(bundle.BundleError, match="is not a directory"):
        bundle.load_bundle(tmp_path / "nope")


def test_cli_inspect(exported, capsys):
    assert main(["inspect", str(exported)]) == 0
    out = capsys.readouterr().out
    assert "game: tic_tac_toe" in out and "transition accuracy 1.000" in out


def test_cli_inspect_tampered_is_one_line_error(exported, capsys):
    (exported / "model.py").write_text("x = 1\n")
    assert main(["inspect", str(exported)]) == 2
    err = capsys.readouterr().err
    assert "does not match its hash" in err and "Traceback" not in err


def test_imperfect_model_exports_and_loads_with_its_accuracy(tmp_path, train):
    """A model that fails some checks (as gin rummy's did in the paper) is still a usable bundle."""
    partial = (DATA / "synthesis" / "ttt_v2_no_diagonals.py").read_text(encoding="utf-8")
    path = bundle.export_bundle(tmp_path / "partial", game="tic_tac_toe", model_source=partial, train=train)
    b = bundle.load_bundle(path)
    assert 0 < b.check_report.pass_rate < 1
    assert json.loads((path / "manifest.json").read_text())["export_check"]["pass_rate"] == b.check_report.pass_rate


def test_hostile_code_in_a_rehashed_bundle_is_refused_by_the_sandbox(exported):
    import hashlib

    hostile = "import os\n" + TTT_SOURCE
    (exported / "model.py").write_text(hostile)
    _set_manifest(exported, files={**json.loads((exported / "manifest.json").read_text())["files"],
                                   "model.py": hashlib.sha256(hostile.encode()).hexdigest()})
    with pytest.raises(bundle.BundleError, match="import of 'os' is not allowed"):
        bundle.load_bundle(exported)


def test_planning_calls_run_under_a_time_budget(exported):
    from cwm.types import ModelContractError

    b = bundle.load_bundle(exported, call_budget_s=0.5)
    assert b.model.guard is not None
    with pytest.raises(ModelContractError, match="time budget"):
        b.model.guard(lambda: [0 for _ in iter(int, 1)])
