"""The main job offline: the recorded session synthesizes tic-tac-toe, the bundle plays, the report says so."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from cwm import pipeline
from cwm.cli import main

SMALL = dict(num_test=4, matches=6, simulations=300, rollouts=4, executor="local:2")


@pytest.fixture(scope="module")
def finished_run(tmp_path_factory) -> tuple[Path, dict]:
    out = tmp_path_factory.mktemp("run")
    with pytest.MonkeyPatch.context() as mp:  # a developer's own key must not turn this into a paid live run
        for var in pipeline.API_KEY_VARS:
            mp.delenv(var, raising=False)
        report = pipeline.run(pipeline.RunConfig("tic_tac_toe", **SMALL), out, progress=False)
    return out, report


def test_offline_run_synthesizes_exports_and_beats_random(finished_run, monkeypatch):
    out, report = finished_run
    assert report["offline_recording"] and report["llm"].startswith("replay:")
    s = report["synthesis"]
    assert s["solved"] and s["train_accuracy"] == 1.0 and s["test_accuracy"] == 1.0
    vs_random = next(r for r in report["arena"] if r["opponent"] == "random" and r["seat"] == "all")
    assert vs_random["matches"] == 12
    assert vs_random["win_rate"] > 0.5 and vs_random["loss_rate"] == 0.0
    for name in ("report.md", "report.json", "config.json", "bundle/manifest.json", "synthesis/accuracy.png",
                 "arena/results.png", "arena/matches.jsonl"):
        assert (out / name).is_file(), name
    md = (out / "report.md").read_text()
    assert "recorded session shipped with cwm" in md and "| random | all |" in md


def test_rerun_resumes_without_new_calls_or_matches(finished_run):
    out, report = finished_run
    matches_before = (out / "arena" / "matches.jsonl").read_text()
    calls_before = sorted(p.name for p in (out / "synthesis" / "calls").iterdir())
    again = pipeline.run(pipeline.RunConfig("tic_tac_toe", **SMALL), out, progress=False)
    assert (out / "arena" / "matches.jsonl").read_text() == matches_before
    assert sorted(p.name for p in (out / "synthesis" / "calls").iterdir()) == calls_before
    assert again["synthesis"] == report["synthesis"] and again["arena"] == report["arena"]


def test_other_settings_in_same_directory_are_refused(finished_run):
    out, _ = finished_run
    with pytest.raises(pipeline.PipelineError, match="seed differ"):
        pipeline.run(pipeline.RunConfig("tic_tac_toe", seed=1, **SMALL), out, progress=False)


def test_auto_llm_prefers_gemini_when_a_key_is_set(monkeypatch):
    monkeypatch.setenv("GEMINI_API_KEY", "test-key-not-used")
    assert pipeline.resolve_llm("auto", "tic_tac_toe") == "gemini"
    monkeypatch.delenv("GEMINI_API_KEY")
    monkeypatch.delenv("GOOGLE_API_KEY", raising=False)
    assert pipeline.resolve_llm("auto", "tic_tac_toe").startswith("replay:")


def test_auto_without_key_or_recording_is_a_clear_error(monkeypatch, tmp_path, capsys):
    monkeypatch.chdir(tmp_path)
    for var in pipeline.API_KEY_VARS:
        monkeypatch.delenv(var, raising=False)
    assert main(["run", "connect_four", "--out", "unused-dir", "--quiet"]) == 2
    err = capsys.readouterr().err
    assert "set GEMINI_API_KEY" in err and "tic_tac_toe" in err and "Traceback" not in err
    assert not Path("unused-dir").exists()


@pytest.mark.parametrize(
    "argv, message",
    [(["--budget", "0"], "budget must be at least 1"), (["--matches", "0"], "matches must be at least 1"),
     (["--llm", "replay:/no/such/file.jsonl"], "no/such/file.jsonl")],
    ids=["budget", "matches", "missing-recording"],
)
def test_bad_settings_fail_before_anything_is_written_and_the_fix_runs(argv, message, monkeypatch, tmp_path,
                                                                       capsys):
    monkeypatch.chdir(tmp_path)
    assert main(["run", "tic_tac_toe", "--out", "r", "--quiet", *argv]) == 2
    err = capsys.readouterr().err
    assert message in err and "Traceback" not in err
    assert not (tmp_path / "r" / "config.json").exists()


def test_record_names_config_llm_prompts_and_commit(finished_run):
    out, report = finished_run
    record = json.loads((out / "record.json").read_text())
    assert record["config"]["game"] == "tic_tac_toe" and record["seed"] == 0
    assert record["llm"].startswith("replay:") and record["llm_model"] == "scripted-tic-tac-toe"
    assert record["prompt_hashes"] and "temperature" in record["request"]
    assert record["git_commit"] and record["results"]["synthesis"] == report["synthesis"]
