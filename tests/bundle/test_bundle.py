"""Bundles: export, load anywhere, play; tampered, truncated or foreign bundles fail with clear errors."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import numpy as np
import pyspiel
import pytest
from open_spiel.python.algorithms import evaluate_bots, mcts

from cwm import bundle
from cwm.agents import bundle_move
from cwm.cli import main
from cwm.synthesis import SynthesisSettings

DATA = Path(__file__).resolve().parents[1] / "data"


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
    contained = bundle.load_bundle(moved)
    assert contained.check_report.all_passed and contained.check_report.executed > 0
    state = pyspiel.load_game("tic_tac_toe").new_initial_state()
    assert bundle_move(contained, state) in range(9)  # in a worker
    b = bundle.load_bundle(moved, trusted=True)  # OpenSpiel's own algorithms call the model in-process
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
        (lambda p, edit: (p / "model.py").unlink(), "model.py is missing"),
        (lambda p, edit: (p / "manifest.json").unlink(), "manifest.json is missing"),
        (lambda p, edit: (p / "manifest.json").write_text("{not json"), "manifest.json is not valid JSON"),
        (lambda p, edit: edit(p, bundle_format=99), "bundle format 99 is not supported"),
        (lambda p, edit: (p / "trajectories.jsonl").write_text("garbage\n"), "does not match its hash"),
    ],
    ids=["missing-model", "missing-manifest", "bad-manifest", "wrong-version", "corrupt-trajectories"],
)
def test_damaged_bundle_gets_clear_error(exported, set_manifest, damage, message):
    damage(exported, set_manifest)
    with pytest.raises(bundle.BundleError, match=message):
        bundle.load_bundle(exported)


def test_consistently_rewritten_wrong_model_fails_conformance(exported, rehashed, ttt_source):
    """Someone edits model.py and the manifest hash together: the re-run checks still catch it."""
    bad = ttt_source.replace('"x"', '"o"', 1)
    assert bad != ttt_source
    rehashed(exported, "model.py", bad.encode())
    with pytest.raises(bundle.BundleError, match="failed"):
        bundle.load_bundle(exported)


def test_export_refuses_existing_directory(exported, train, ttt_source):
    with pytest.raises(bundle.BundleError, match="already exists"):
        bundle.export_bundle(exported, game="tic_tac_toe", model_source=ttt_source, train=train)


def test_not_a_bundle(tmp_path):
    with pytest.raises(bundle.BundleError, match="is not a directory"):
        bundle.load_bundle(tmp_path / "nope")


def test_cli_inspect(exported, capsys):
    assert main(["inspect", str(exported)]) == 0
    out = capsys.readouterr().out
    assert "game: tic_tac_toe" in out and "transition accuracy (world model) 1.000" in out


def test_cli_inspect_prints_a_bundles_text_cleaned(tmp_path, train, ttt_source, set_manifest, capsys):
    """The manifest's fields and the model's source are a stranger's text: their escape sequences (retitle or
    clear the terminal) reach the terminal escaped, and lines keep their tabs and newlines."""
    source = ttt_source + "\n# \x1b]0;pwned\x07\x1b[2J\tcomment\n"
    path = bundle.export_bundle(tmp_path / "b", game="tic_tac_toe", model_source=source, train=train,
                                provenance={"llm": "gemini\x1b[2J\u202e", "seed": 3})
    set_manifest(path, created_at="today\r\x1b[1A")
    assert main(["inspect", str(path), "--code"]) == 0
    out = capsys.readouterr().out
    assert not any(c in out for c in "\x1b\x07\r\u202e"), out
    assert "llm: gemini\\x1b[2J\\u202e" in out and "created today\\r\\x1b[1A" in out
    assert "# \\x1b]0;pwned\\x07\\x1b[2J\tcomment\n" in out and "def get_rewards(state):\n" in out


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


def test_hostile_code_in_a_rehashed_bundle_is_refused_by_the_sandbox(exported, rehashed, ttt_source):
    rehashed(exported, "model.py", ("import os\n" + ttt_source).encode())
    with pytest.raises(bundle.BundleError, match="import of 'os' is not allowed"):
        bundle.load_bundle(exported)


def test_planning_calls_run_under_a_time_budget(exported):
    from cwm.types import ModelContractError

    b = bundle.load_bundle(exported, trusted=True, call_budget_s=0.5)
    assert b.model.guard is not None
    with pytest.raises(ModelContractError, match="time budget"):
        b.model.guard(lambda: [0 for _ in iter(int, 1)])


def test_overwrite_refuses_what_is_not_a_bundle(tmp_path, train, ttt_source):
    precious = tmp_path / "notes"
    precious.mkdir()
    (precious / "results.md").write_text("a week of work")
    with pytest.raises(bundle.BundleError, match="is not a cwm bundle; refusing to replace it"):
        bundle.export_bundle(precious, game="tic_tac_toe", model_source=ttt_source, train=train, overwrite=True)
    assert (precious / "results.md").read_text() == "a week of work"


def test_overwrite_replaces_an_earlier_bundle(exported, train, ttt_source):
    again = bundle.export_bundle(exported, game="tic_tac_toe", model_source=ttt_source, train=train, overwrite=True)
    assert bundle.load_bundle(again).check_report.all_passed


@pytest.mark.parametrize(
    "changes, message",
    [
        ({"game": None}, "field 'game' is missing"),
        ({"files": ["model.py"]}, "field 'files' is missing or not a dict"),
        ({"contract_version": "999"}, "contract version '999'"),
        ({"files": {"model.py": "0", "../../etc/hostname": "0", "check_report.json": "0",
                    "trajectories.jsonl": "0"}}, "'../../etc/hostname' is not a plain file name"),
        ({"files": {"model.py": "0"}}, "a bundle holds"),
    ],
    ids=["no-game", "files-not-a-dict", "contract-version", "foreign-file", "unhashed-files"],
)
def test_malformed_manifest_is_named(exported, set_manifest, changes, message):
    set_manifest(exported, **changes)
    with pytest.raises(bundle.BundleError, match=message):
        bundle.load_bundle(exported)


def test_export_run_records_the_generator_settings(tmp_path):
    from cwm.llm import make_client
    from cwm.pipeline import recording_for
    from cwm.synthesis import synthesize_world_model

    run = tmp_path / "run"
    synthesize_world_model("tic_tac_toe", make_client(f"replay:{recording_for('tic_tac_toe')}"), SynthesisSettings.of("world_model", num_test=0), run_dir=run)
    path = bundle.export_run(run, tmp_path / "b")
    provenance = json.loads((path / "manifest.json").read_text())["provenance"]
    assert provenance["num_train"] == 5 and "temperature" in provenance["request"] and "c" in provenance["tree"]
    assert provenance["train_pool"] == SynthesisSettings().train_pool  # the pool its training games came from
    assert provenance["solved"] is True and provenance["llm_calls"] == 1  # the shipped real-model session
    assert provenance["target"] == "world_model"  # what the program was written as, for inspect and display
    # a run kept inside an earlier bundle's directory must not be deleted by overwriting that bundle
    inner = shutil.copytree(run, path / "the_run")
    with pytest.raises(bundle.BundleError, match="contains the run being exported"):
        bundle.export_run(inner, path, overwrite=True)
    assert (inner / "result.json").is_file()


def test_arena_with_a_tampered_bundle_is_a_setup_error_before_any_match(exported, tmp_path, capsys):
    (exported / "model.py").write_text((exported / "model.py").read_text() + "\n# edited\n")
    out = tmp_path / "arena"
    code = main(["arena", "tic_tac_toe", "--agents", f"random,mine=cwm:{exported}", "--matches", "1",
                 "--sims", "5", "--out", str(out), "--no-progress", "--executor", "inline"])
    err = capsys.readouterr().err
    assert code == 2 and "does not match its hash" in err and "mine" in err
    assert not (out / "matches.jsonl").exists()
