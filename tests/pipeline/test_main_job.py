"""The main job offline: the recorded session synthesizes tic-tac-toe, the bundle plays, the report says so."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from cwm.cli import main
from cwm.pipeline import recordings
from cwm.pipeline import stages as pipeline

SMALL = dict(num_test=4, matches=6, simulations=300, rollouts=4, executor="local:2", twins="off",
             ppo_steps=0)  # the twin and PPO stages: tests/pipeline/test_run_twins.py


@pytest.fixture(scope="module")
def finished_run(tmp_path_factory, no_api_keys) -> tuple[Path, dict]:
    out = tmp_path_factory.mktemp("run")
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
    compared = {r["opponent"]: r for r in report["arena_comparisons"]}
    assert compared["random"]["agent"] == "cwm" and compared["random"]["matches"] == 12
    assert compared["random"]["pairs"] == 6 and compared["random"]["mean"] > 0  # the CWM agent's edge
    assert f"| cwm | random | 12 (6) | {0.5 + compared['random']['mean']:.2f} [" in md
    search = report["search"]
    assert (f"- `cwm`: MCTS on the synthesized model, {search['num_simulations']} simulations" in md
            and "- `random`: uniformly random legal moves" in md)  # what was run, with its settings


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


def test_auto_without_key_or_recording_is_a_clear_error(monkeypatch, tmp_path, capsys, no_api_keys):
    monkeypatch.chdir(tmp_path)
    shipped, listed = recordings.recording_for, recordings._recordings  # backgammon as a game shipping no session
    monkeypatch.setattr(recordings, "recording_for",
                        lambda game, deck="open", *a, **k: None if game == "backgammon" else shipped(game, deck, *a, **k))
    monkeypatch.setattr(recordings, "_recordings", lambda: [p for p in listed() if p.stem != "backgammon"])
    assert main(["run", "backgammon", "--out", "unused-dir", "--quiet"]) == 2
    err = capsys.readouterr().err
    assert "set GEMINI_API_KEY" in err and "tic_tac_toe" in err and "backgammon" not in err.split("ship only for")[1]
    assert "Traceback" not in err
    assert not Path("unused-dir").exists()


@pytest.mark.parametrize(
    "argv, message",
    [(["--budget", "0"], "budget must be at least 1"), (["--matches", "0"], "matches must be at least 1"),
     (["--move-time-limit", "0"], "the move time limit must be > 0 seconds"),
     (["--llm", "replay:/no/such/file.jsonl"], "no/such/file.jsonl")],
    ids=["budget", "matches", "move-time-limit", "missing-recording"],
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
    # the shipped real-model session: who answered it and how, in short fields from its provenance
    shipped = pipeline.recording_provenance(pipeline.recording_for("tic_tac_toe"))
    assert record["llm"].startswith("replay:") and record["provenance"] == report["provenance"]
    assert {k: report["provenance"][k] for k in ("answered_by", "relay", "date")} == \
        {k: shipped[k] for k in ("answered_by", "relay", "date")}
    line = next(x for x in (out / "report.md").read_text().splitlines() if x.startswith("- LLM:"))
    assert f"answered by {shipped['answered_by']}; relay `agent-relay-hashed`" in line
    assert "not machine-checked" not in line  # every reply's prompt hash matched its request
    assert len(line) < 400  # short fields, not prose repeated into every report
    manifest = json.loads((out / "bundle" / "manifest.json").read_text())
    assert manifest["provenance"]["answered_by"] == shipped["answered_by"]  # it flows into the bundle too
    assert record["prompt_hashes"] and "temperature" in record["request"]
    assert record["git_commit"] and record["results"]["synthesis"] == report["synthesis"]


def test_report_holds_the_arena_cost_estimate_beside_its_real_time(finished_run):
    out, report = finished_run  # the first run's report (a later test resumes the run: nothing left to project)
    cost = report["arena_cost"]
    assert cost["elapsed_wall_s"] > 0 and cost["estimate"]["matches"] == 2 * 2 * SMALL["matches"]
    assert set(cost["estimate"]["per_move_s"]) == {"cwm", "random", "gt-mcts"}
    assert "arena_cost" in json.loads((out / "record.json").read_text())


# A moved run directory: the CWM agent is labelled `cwm`, not by its absolute path, so nothing replays.

TINY = ["--num-test", "4", "--matches", "2", "--sims", "30", "--rollouts", "1", "--executor", "inline",
        "--quiet", "--no-twins", "--ppo-steps", "0"]  # the twin and PPO stages: tests/pipeline/test_run_twins.py


@pytest.fixture(scope="module")
def tiny_run(tmp_path_factory, no_api_keys) -> Path:
    out = tmp_path_factory.mktemp("tiny") / "run"
    assert main(["run", "tic_tac_toe", "--out", str(out), *TINY]) == 0
    return out


def _copy_to(run: Path, place: Path) -> Path:
    shutil.copytree(run, place)
    return place


def _resume_moved(a: Path, b: Path) -> tuple[str, list[str]]:
    """Moves run ``a`` to ``b`` and re-runs the same command there (ask for ``no_api_keys``); returns what the arena and the
    synthesis held before."""
    matches = (a / "arena" / "matches.jsonl").read_text()
    calls = sorted(p.name for p in (a / "synthesis" / "calls").iterdir())
    shutil.move(a, b)
    assert main(["run", "tic_tac_toe", "--out", str(b), *TINY]) == 0
    return matches, calls


def test_a_moved_run_resumes_without_replaying_and_names_no_path(tiny_run, tmp_path, no_api_keys):
    a = _copy_to(tiny_run, tmp_path / "A")
    matches, calls = _resume_moved(a, tmp_path / "elsewhere" / "B")
    b = tmp_path / "elsewhere" / "B"
    assert (b / "arena" / "matches.jsonl").read_text() == matches  # not one match replayed
    assert len(matches.splitlines()) == 2 * 2 * 2  # 2 matches x 2 seat orders x 2 opponents
    assert sorted(p.name for p in (b / "synthesis" / "calls").iterdir()) == calls
    report = json.loads((b / "report.json").read_text())
    assert {r["agent"] for r in report["arena"]} == {"cwm"} and report["bundle"] == "bundle"
    for name in ("report.md", "arena/results.md", "arena/results.csv", "arena/results.json", "arena/labels.json",
                 "arena/matches.jsonl", "arena/config.json", "config.json"):
        text = (b / name).read_text()
        assert str(tmp_path) not in text and str(tiny_run.parent) not in text, name
    assert "| cwm | random | all | 4 |" in (b / "report.md").read_text()


def test_the_command_prints_what_a_perfect_on_policy_accuracy_bounds(tiny_run, tmp_path, capsys, no_api_keys):
    out = _copy_to(tiny_run, tmp_path / "again")
    capsys.readouterr()
    assert main(["run", "tic_tac_toe", "--out", str(out), *TINY]) == 0
    on_policy = json.loads((out / "report.json").read_text())["on_policy"]
    passed, checked = map(int, on_policy["transitions"].split("/"))
    assert on_policy["transition_accuracy"] == 1.0 and passed == checked > 0
    printed = capsys.readouterr().out
    line = next(x for x in printed.splitlines() if x.startswith("  on-policy, on its"))
    assert f"transition accuracy 1.0000 (0 of {checked:,} wrong: error rate < " in line
    # the synthesis line names its stage and quantity too
    assert "tic_tac_toe: world-model synthesis solved in 1 call (transition accuracy train 1.0000" in printed
    assert f"0 of {on_policy['matches']} games wrong" in line


def test_a_run_played_under_another_label_resumes_where_it_is_and_after_a_move(tiny_run, tmp_path, no_api_keys):
    a = _copy_to(tiny_run, tmp_path / "A")
    old_label = f"cwm:{(a / 'bundle').resolve()}"  # how cwm labelled the agent before it had a name
    path = a / "arena" / "matches.jsonl"
    (a / "arena" / "labels.json").unlink()
    rows = [json.loads(line) for line in path.read_text().splitlines()]
    for r in rows:
        r["seats"] = [old_label if s == "cwm" else s for s in r["seats"]]
    named = "".join(json.dumps(r) + "\n" for r in rows)
    path.write_text(named)
    config = json.loads((a / "config.json").read_text())  # and the recording by a full path on another machine
    config["llm_resolved"] = "replay:/elsewhere/site-packages/cwm/data/recordings/real/tic_tac_toe.jsonl"
    (a / "config.json").write_text(json.dumps(config))
    assert main(["run", "tic_tac_toe", "--out", str(a), *TINY]) == 0
    assert path.read_text() == named  # found by content: nothing replayed, nothing rewritten
    assert "| cwm | random | all | 4 |" in (a / "report.md").read_text()  # shown under its label now
    _resume_moved(a, tmp_path / "B")
    assert (tmp_path / "B" / "arena" / "matches.jsonl").read_text() == named
    report = json.loads((tmp_path / "B" / "report.json").read_text())
    assert {r["agent"] for r in report["arena"]} == {"cwm"}
    assert sum(r["matches"] for r in report["arena"] if r["seat"] == "all") == 8


def test_more_matches_extend_a_finished_run_as_cwm_arena_does(tiny_run, tmp_path, no_api_keys):
    run = _copy_to(tiny_run, tmp_path / "more")
    before = (run / "arena" / "matches.jsonl").read_text().splitlines()
    more = [*TINY]
    more[more.index("--matches") + 1] = str(int(more[more.index("--matches") + 1]) + 1)
    assert main(["run", "tic_tac_toe", "--out", str(run), *more]) == 0
    after = (run / "arena" / "matches.jsonl").read_text().splitlines()
    assert after[: len(before)] == before and len(after) > len(before)
    assert json.loads((run / "config.json").read_text())["matches"] == int(more[more.index("--matches") + 1])


def test_by_default_the_held_out_set_is_sized_by_transitions_as_synthesis_sizes_it(tmp_path, no_api_keys):
    config = pipeline.RunConfig("tic_tac_toe", matches=1, simulations=20, rollouts=1, opponents=("random",),
                                executor="inline", twins="off", ppo_steps=0)
    assert config.num_test is None
    report = pipeline.run(config, tmp_path / "run", progress=False)
    synthesis = json.loads((tmp_path / "run" / "synthesis" / "config.json").read_text())
    assert synthesis["num_test"] is None and synthesis["test_transitions"] == 10_000
    test = [json.loads(line) for line in (tmp_path / "run" / "synthesis" / "test.jsonl").read_text().splitlines()]
    assert sum(len(t["steps"]) for t in test) >= 10_000  # whole games up to the paper's 10,000 transitions
    assert report["synthesis"]["test_accuracy"] == 1.0
