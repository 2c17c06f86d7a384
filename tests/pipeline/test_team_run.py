"""The main job offline on a cooperative game: tiny Hanabi's shipped real session synthesizes a world model and
its inference function, and the arena plays teams (the CWM agent's own, it with each other agent, and
theirs) on the same deals; the report and the command's output show team scores out of the game's best,
never wins, draws or losses."""

from __future__ import annotations

import dataclasses
import json
import re

import pytest

from cwm import games, pipeline
from cwm.arena.plan import read_results
from cwm.arena.report import fallback_rates, sampling
from cwm.arena.teams import team_label
from cwm.cli import main


def sampling_moves(results) -> int:
    """The moves the CWM agent searched in ``results``, from its sampling record."""
    return int(sampling([(r, s) for r in results for s, a in enumerate(r.seats) if a == "cwm"]).get("searched_moves", 0))


SMALL = ["--num-test", "4", "--matches", "3", "--sims", "20", "--rollouts", "1", "--executor", "local:2",
         "--opponents", "random", "--quiet"]


def test_cwm_run_on_tiny_hanabi_scores_teams(tmp_path, no_api_keys, capsys) -> None:
    out = tmp_path / "run"
    assert main(["run", "tiny_hanabi", "--out", str(out), *SMALL]) == 0
    printed = capsys.readouterr().out
    report = json.loads((out / "report.json").read_text())
    assert report["llm"] == f"replay:{pipeline.recording_for('tiny_hanabi')}"
    assert report["synthesis"]["solved"] and report["inference"]["solved"]
    assert report["synthesis"]["llm_calls"] == 1 == report["inference"]["llm_calls"]  # the real session's calls
    results = list(read_results(out / "arena" / "matches.jsonl").values())
    assert {team_label(r.seats) for r in results} == {"cwm+cwm", "cwm+random", "random+random"}
    assert len({r.deal for r in results}) == 3  # every team on the same three deals
    rows = {r["team"]: r for r in report["arena"]}
    assert set(rows) == {"cwm+cwm", "cwm+random", "random+random"}
    assert all(r["deals"] == 3 and r["max_score"] == 10 for r in rows.values())
    assert report["config"]["max_rollout_steps"] is None is report["search"]["max_rollout_steps"]  # no cut-off
    assert {frozenset((c["team"], c["other"])) for c in report["arena_comparisons"]} == {
        frozenset(p) for p in (("cwm+cwm", "cwm+random"), ("cwm+cwm", "random+random"), ("cwm+random", "random+random"))}
    arena = (out / "report.md").read_text().split("## Arena")[1].split("## On-policy")[0]
    assert "| team |" in arena and "/ 10" in arena and not re.search(r"\bwins?\b|\bloss|W/D/L", arena), arena
    assert "team cwm+cwm: mean score" in printed and not re.search(r"win_rate|draw_rate", printed)
    # the CWM agent's fallback rate (cwm run's verdict) is read from its matches: it searched every move here
    played = list(read_results(out / "arena" / "matches.jsonl").values())
    assert fallback_rates(played)["cwm"] == 0.0 and sampling_moves(played) > 0


def test_cwm_run_on_hanabi_offline(tmp_path, no_api_keys, capsys) -> None:
    """Hanabi's shipped real session replays; gt-ismcts searches Hanabi with its world sampler, so the
    ground-truth team plays beside random play (and with the CWM agent), and the posterior check says why it
    was not run."""
    out = tmp_path / "run"
    assert main(["run", "hanabi", "--out", str(out), "--num-test", "4", "--matches", "2", "--sims", "10",
                 "--rollouts", "1", "--executor", "local:2", "--quiet"]) == 0
    printed = capsys.readouterr().out
    report = json.loads((out / "report.json").read_text())
    assert report["synthesis"]["llm_calls"] == 1 == report["inference"]["llm_calls"]  # the real session's calls
    assert report["inference"]["test_accuracy"] == 1.0
    # the real world model misses one branch the training games never showed: after the deck runs out it drops
    # the marker of the player to act from the observations of the final round (docs/games.md)
    assert 0.99 < report["synthesis"]["test_accuracy"] < 1.0
    assert {r["team"] for r in report["arena"]} == {"cwm+cwm", "cwm+random", "random+random", "cwm+gt-ismcts",
                                                      "gt-ismcts+gt-ismcts"}
    assert all(r["max_score"] == 25 and r["deals"] == 2 for r in report["arena"])
    assert "world sampler for hanabi draws uniformly" in report["posterior"]["skipped"]
    assert "posterior not checked" in printed and "about 15 of 25" in printed
    assert "## Beliefs" in (out / "report.md").read_text()
    # Hanabi's rollout cut-off by default (its random playouts to the end all score 0), stated, never hidden
    assert report["config"]["max_rollout_steps"] == 10 == report["search"]["max_rollout_steps"]
    config = json.loads((out / "arena" / "config.json").read_text())
    assert config["settings"]["search"]["max_rollout_steps"] == 10
    assert "each rollout cut off after 10 moves" in (out / "report.md").read_text()


def test_the_run_s_rollout_cut_off_is_the_game_s_unless_given() -> None:
    assert pipeline.RunConfig("hanabi").max_rollout_steps == games.resolve("hanabi").rollout_cutoff == 10
    assert pipeline.RunConfig("tic_tac_toe").max_rollout_steps is None  # rollouts play to the end
    given = pipeline.RunConfig("hanabi", max_rollout_steps=30)
    assert given.max_rollout_steps == 30 == pipeline.arena_search(given).max_rollout_steps
    none = pipeline.RunConfig("hanabi", max_rollout_steps=0)  # 0: no cut-off, even where the game has one
    assert none.max_rollout_steps == 0 and pipeline.arena_search(none).max_rollout_steps is None
    with pytest.raises(pipeline.PipelineError, match=r"max_rollout_steps must be at least 1 \(got -1\)"):
        pipeline.RunConfig("hanabi", max_rollout_steps=-1)
    with pytest.raises(ValueError, match="a rollout cut-off is a number of moves"):
        games.register(dataclasses.replace(games.resolve("tiny_hanabi"), name="tiny_cut", rollout_cutoff=0))


def test_a_run_recorded_before_the_cut_off_resumes_with_its_own_settings(tmp_path, capsys) -> None:
    """A run folder whose config.json has no max_rollout_steps (written before cwm run had a cut-off) played its
    rollouts to the end: resumed with the game's default cut-off, it keeps none and says so; another cut-off
    differs from its settings."""
    from cwm.pipeline import stages

    out = tmp_path / "run"
    (out / "synthesis").mkdir(parents=True)
    older = {k: v for k, v in dataclasses.asdict(pipeline.RunConfig("hanabi")).items() if k != "max_rollout_steps"}
    (out / "config.json").write_text(json.dumps(older | {"llm_resolved": "replay:x"}))
    for _ in range(2):  # and again: the folder still records no cut-off
        resumed = stages._check_config(out, pipeline.RunConfig("hanabi"), "replay:x")
        assert resumed.max_rollout_steps == 0 and pipeline.arena_search(resumed).max_rollout_steps is None
        assert "resumes with its own setting, rollouts played to the end, not cut off after 10" in capsys.readouterr().err
        assert "max_rollout_steps" not in json.loads((out / "config.json").read_text())
    asked_none = stages._check_config(out, pipeline.RunConfig("hanabi", max_rollout_steps=0), "replay:x")
    assert asked_none.max_rollout_steps == 0 and capsys.readouterr().err == ""
    with pytest.raises(pipeline.PipelineError, match=r"other settings \(max_rollout_steps differ\)"):
        stages._check_config(out, pipeline.RunConfig("hanabi", max_rollout_steps=30), "replay:x")
    # a run that recorded its cut-off resumes only with it
    recorded = dataclasses.asdict(pipeline.RunConfig("hanabi")) | {"llm_resolved": "replay:x"}
    (out / "config.json").write_text(json.dumps(recorded))
    assert stages._check_config(out, pipeline.RunConfig("hanabi"), "replay:x").max_rollout_steps == 10
    with pytest.raises(pipeline.PipelineError, match=r"max_rollout_steps differ"):
        stages._check_config(out, pipeline.RunConfig("hanabi", max_rollout_steps=0), "replay:x")
