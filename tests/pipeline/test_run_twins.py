"""`cwm run`'s twin stages: the fast twin and PPO on a JAX twin, from the real sessions shipped in the package
(cwm/data/recordings/twins). The quick tests cover which sessions ship, the check's projected cost, when a
stage is skipped and why, resuming, the flags and the report; the slow ones run the whole pipeline offline."""

from __future__ import annotations

import dataclasses
import importlib.util
import json
from pathlib import Path

import pytest

from cwm import games
from cwm import pipeline as door
from cwm.cli import main
from cwm.pipeline import RunConfig, ppo_stage, twins
from cwm.pipeline import stages as pipeline
from cwm.pipeline.report import twin_lines
from cwm.sandbox.equivalence import DEFAULT_EQUIVALENCE

SHIPPED = Path(__file__).resolve().parents[2] / "cwm" / "data" / "recordings" / "twins"


def stage_input(tmp_path: Path, game: str, model: str, *, llm: str = "replay:x", **config) -> twins.StageInput:
    """A stage's input whose bundle holds only ``model.py`` (all the skipping paths read)."""
    bundle = tmp_path / "bundle"
    bundle.mkdir(exist_ok=True)
    (bundle / "model.py").write_text(model, encoding="utf-8")
    return twins.StageInput(spec=games.resolve(game), bundle_dir=bundle, out=tmp_path, llm_spec=llm,
                            config=RunConfig(game, **config), progress=False)


def test_the_twin_sessions_ship_as_package_data_where_cwm_run_finds_them():
    for game in ("tic_tac_toe", "connect_four", "leduc_poker", "backgammon"):
        found = twins.session(game, "fast")  # in the installed package (CI) or this tree
        assert found is not None and found.name == f"{game}.fast.jsonl"
        assert found.read_bytes() == (SHIPPED / f"{game}.fast.jsonl").read_bytes()
        assert twins.provenance(SHIPPED / f"{game}.fast.jsonl")["target"] == "fast"
    assert {g for g in ("tic_tac_toe", "connect_four", "leduc_poker") if twins.session(g, "ppo")} == {
        "tic_tac_toe", "connect_four"}
    assert twins.session("quadranto", "fast") is None and twins.session("no_such_game", "fast") is None
    assert not (Path(__file__).resolve().parents[2] / "experiments" / "twins").exists()  # one home


def test_the_projected_check_cost_keeps_backgammon_out_of_an_unasked_run_and_tic_tac_toe_in():
    def projected(game: str) -> float:
        profile = json.loads((SHIPPED / f"{game}.profile.json").read_text())
        return twins.check_cpu_s(profile, twins.equivalence_of(twins.provenance(SHIPPED / f"{game}.fast.jsonl")))

    assert twins.equivalence_of(twins.provenance(SHIPPED / "tic_tac_toe.fast.jsonl")) == DEFAULT_EQUIVALENCE
    bound = twins.equivalence_of(twins.provenance(SHIPPED / "backgammon.fast.jsonl"))
    assert (bound.p, bound.delta, bound.simulations, bound.playouts) == (0.2, 0.05, 3, 14)  # as it was accepted
    assert projected("tic_tac_toe") < projected("connect_four") < twins.AUTO_CHECK_CPU_S < projected("backgammon")
    profile = json.loads((SHIPPED / "backgammon.profile.json").read_text())
    assert twins.check_cpu_s(profile, DEFAULT_EQUIVALENCE) > 10 * projected("backgammon")  # 90 playouts, 50 sims


def test_a_fast_twin_stage_says_why_it_did_not_run(tmp_path, capsys):
    other = "def get_initial_state():\n    return {}\n"
    cases = [({"twins": "off"}, "replay:x", "turned off"),
             ({}, "replay:x", "another model than this run's"),  # the session was asked for the shipped model
             ({}, "gemini", "live: it writes a fast twin only when asked (--twins on)")]
    for config, llm, why in cases:
        (tmp_path / twins.TWIN_RECORD).unlink(missing_ok=True)
        record = twins.fast_stage(stage_input(tmp_path, "tic_tac_toe", other, llm=llm, **config))
        assert record["status"] == "skipped" and why in record["reason"], record
        assert json.loads((tmp_path / twins.TWIN_RECORD).read_text()) == record  # kept for a resume
    (tmp_path / twins.TWIN_RECORD).unlink()
    record = twins.fast_stage(stage_input(tmp_path, "quadranto", other))
    assert "no fast-twin session of quadranto ships" in record["reason"]
    said = capsys.readouterr()
    assert said.out == ""  # nothing estimated: nothing would have run
    assert [line.split(":")[0] for line in said.err.splitlines()] == ["fast twin stage skipped"] * 3  # not --twins off
    assert twins.fast_stage(stage_input(tmp_path, "quadranto", other)) == record  # resumed: its record, unsaid
    assert capsys.readouterr().err == ""


def test_a_finished_stage_is_not_redone_and_another_models_record_does_not_count(tmp_path):
    stage = stage_input(tmp_path, "tic_tac_toe", "def f():\n    return 1\n", twins="off")
    sha = twins.model_sha(stage.bundle_dir)
    finished = {"status": "accepted", "playout": True, "model_sha256": sha}
    (tmp_path / twins.TWIN_RECORD).write_text(json.dumps(finished))
    assert twins.fast_stage(stage) == finished  # --twins off now, but the stage was done: not redone
    (tmp_path / twins.TWIN_RECORD).write_text(json.dumps(finished | {"model_sha256": "0" * 64}))
    assert twins.fast_stage(stage)["status"] == "skipped"  # a record of another model is not this one's
    (tmp_path / twins.TWIN_RECORD).write_text("{not json")
    assert twins.fast_stage(stage)["status"] == "skipped"  # nor is a damaged one


def test_a_ppo_stage_says_why_it_did_not_run(tmp_path):
    model = "def f():\n    return 1\n"
    assert ppo_stage.ppo_stage(stage_input(tmp_path, "tic_tac_toe", model, ppo_steps=0))["reason"] == \
        "turned off (--ppo-steps 0)"
    (tmp_path / ppo_stage.PPO_RECORD).unlink()
    assert "no PPO session" in ppo_stage.ppo_stage(stage_input(tmp_path, "leduc_poker", model))["reason"]
    (tmp_path / ppo_stage.PPO_RECORD).unlink()
    assert "another model" in ppo_stage.ppo_stage(stage_input(tmp_path, "tic_tac_toe", model))["reason"]


def test_settings_and_flags_of_the_stages(monkeypatch):
    with pytest.raises(pipeline.PipelineError, match="twins must be one of auto, on, off"):
        RunConfig("tic_tac_toe", twins="maybe")
    with pytest.raises(pipeline.PipelineError, match="ppo_steps must be 0"):
        RunConfig("tic_tac_toe", ppo_steps=-1)
    seen = {}
    monkeypatch.setattr(door, "run", lambda config, out, **kw: seen.setdefault("config", config) and 1 / 0)
    for argv, want in ((["--no-twins"], ("off", ppo_stage.PPO_STEPS)), (["--twins", "on", "--ppo-steps", "5"], ("on", 5)),
                       ([], ("auto", ppo_stage.PPO_STEPS))):
        seen.clear()
        with pytest.raises(ZeroDivisionError):
            main(["run", "tic_tac_toe", "--out", "unused", *argv])
        assert (seen["config"].twins, seen["config"].ppo_steps) == want


def test_the_report_says_what_the_agent_planned_on_and_why_a_stage_was_skipped():
    lines = twin_lines({"planned_on": "twin with playout",
                        "fast": {"status": "accepted", "playout": True, "estimate_cpu_s": 69.0, "cpu_s": 6.0,
                                 "session": "<cwm>/data/recordings/twins/tic_tac_toe.fast.jsonl"},
                        "ppo": {"status": "skipped", "reason": "PPO on a JAX twin needs JAX and optax"}})
    text = "\n".join(lines)
    assert "planned on its fast twin (twin.py) with the twin's own checked playout loop" in text
    assert "- fast twin: accepted with its own playout loop checked" in text and "6 CPU s" in text
    assert "- PPO: skipped: PPO on a JAX twin needs JAX and optax" in text
    assert twin_lines(None) == []  # a report from before the stages


SMALL = dict(num_test=4, matches=1, simulations=20, rollouts=1, opponents=("random",), executor="inline")


@pytest.mark.slow  # the whole pipeline with both stages: about 2 CPU-minutes (a JAX training in a sandbox child)
@pytest.mark.skipif(importlib.util.find_spec("jax") is None, reason="the jax extra")
def test_cwm_run_plans_on_the_fast_twin_and_trains_ppo_on_the_jax_twin(tmp_path, no_api_keys, capsys):
    out = tmp_path / "run"
    report = pipeline.run(RunConfig("tic_tac_toe", ppo_steps=20_000, **SMALL), out, progress=False)
    said = capsys.readouterr().out
    assert "equivalence check (90 random + 90 MCTS-guided playouts) is projected at" in said  # before it ran
    assert "PPO on the JAX twin of tic_tac_toe, 20,000 steps: cost estimate" in said
    record = report["twins"]
    assert record["planned_on"] == "twin with playout" and record["fast"]["status"] == "accepted"
    assert record["ppo"]["status"] == "trained" and record["ppo"]["steps"] == 20_000
    assert record["ppo"]["session"] == "<cwm>/data/recordings/twins/tic_tac_toe.ppo.jsonl"
    for name in ("twin.py", "twin_evidence.json", "encoder.py", "jax_twin.py", "policy.npz"):
        assert (out / "bundle" / name).is_file(), name
    ppo = [r for r in report["arena"] if r["agent"] == "ppo" and r["seat"] == "all"]
    assert [r["opponent"] for r in ppo] == ["random"] and ppo[0]["matches"] == 2
    assert report["arena_agents"]["ppo"] and "## Twins and PPO" in (out / "report.md").read_text()
    stamps = {n: (out / n).stat().st_mtime_ns for n in ("twin.json", "ppo.json", "bundle/policy.npz")}
    again = pipeline.run(RunConfig("tic_tac_toe", ppo_steps=20_000, **SMALL), out, progress=False)
    assert {n: (out / n).stat().st_mtime_ns for n in stamps} == stamps  # resumed: nothing redone
    assert again["twins"] == report["twins"] and again["arena"] == report["arena"]


@pytest.mark.slow  # backgammon's world model replayed and exported, and the probe: about 40 s
def test_backgammons_session_answers_its_first_request_and_its_costly_check_waits_to_be_asked(tmp_path, capsys):
    session = pipeline.recording_for("backgammon")
    made = shipped_bundle("backgammon", tmp_path)
    stage = twins.StageInput(spec=games.resolve("backgammon"), bundle_dir=made, out=tmp_path, llm_spec=f"replay:{session}",
                             config=RunConfig("backgammon"), progress=False)
    record = twins.fast_stage(stage)
    assert "projected at" in capsys.readouterr().out and record["estimate_cpu_s"] > twins.AUTO_CHECK_CPU_S
    assert record["status"] == "skipped", record
    assert record["reason"].startswith("its check is projected at"), record  # the session replays today's request
    assert record["reason"].endswith("a run spends unasked (--twins on runs it)"), record
    assert not (made / "twin.py").exists() and "cpu_s" not in record  # no check ran


def test_a_session_that_no_longer_replays_is_named_by_the_probe_without_running_the_check(tmp_path, capsys,
                                                                                          monkeypatch):
    """A session whose first request is not today's (a prompt changed since it was recorded): the stage,
    skipped for its cost, says the session no longer replays, and no candidate is checked."""
    stale = tmp_path / "twins" / "tic_tac_toe.fast.jsonl"
    stale.parent.mkdir()
    for name in ("tic_tac_toe.fast.provenance.json", "tic_tac_toe.profile.json"):
        (stale.parent / name).write_bytes((SHIPPED / name).read_bytes())
    lines = (SHIPPED / "tic_tac_toe.fast.jsonl").read_text().splitlines()
    first = json.loads(lines[0])
    first["key"] = "0" * 64  # the recorded request's hash, as a different prompt would give
    stale.write_text("\n".join([json.dumps(first), *lines[1:]]) + "\n")
    monkeypatch.setattr(twins, "session", lambda game, kind: stale if kind == "fast" else None)
    monkeypatch.setattr(twins, "AUTO_CHECK_CPU_S", 0.0)  # every check is over what a run spends unasked
    made = shipped_bundle("tic_tac_toe", tmp_path)
    stage = twins.StageInput(spec=games.resolve("tic_tac_toe"), bundle_dir=made, out=tmp_path / "run",
                             llm_spec="replay:x", config=RunConfig("tic_tac_toe"), progress=False)
    record = twins.fast_stage(stage)
    assert record["status"] == "skipped" and "cpu_s" not in record, record
    assert record["reason"].startswith("the shipped session no longer replays with today's prompts"), record
    assert not (made / "twin.py").exists()


def test_a_run_from_before_the_twin_stages_resumes_without_them(tmp_path, capsys):
    out = tmp_path / "run"
    (out / "synthesis").mkdir(parents=True)
    older = {k: v for k, v in dataclasses.asdict(RunConfig("tic_tac_toe")).items() if k not in ("twins", "ppo_steps")}
    (out / "config.json").write_text(json.dumps(older | {"llm_resolved": "replay:x"}))
    resumed = pipeline._check_config(out, RunConfig("tic_tac_toe"), "replay:x")
    assert (resumed.twins, resumed.ppo_steps) == ("off", 0) and "resumes without them" in capsys.readouterr().err
    assert "twins" not in json.loads((out / "config.json").read_text())  # and so again next time
    assert pipeline._check_config(out, RunConfig("tic_tac_toe", twins="off", ppo_steps=0), "replay:x").twins == "off"
    with pytest.raises(pipeline.PipelineError, match="ppo_steps, twins differ"):
        pipeline._check_config(out, RunConfig("tic_tac_toe", twins="on"), "replay:x")


def shipped_bundle(game: str, tmp_path: Path) -> Path:
    """The bundle of the model the game's shipped real world-model session writes (the twin sessions' model)."""
    from cwm import bundle
    from cwm.games import trajectories
    from cwm.llm import make_client
    from cwm.synthesis import SynthesisSettings, synthesize_world_model

    model = synthesize_world_model(game, make_client(f"replay:{pipeline.recording_for(game)}"),
                                   SynthesisSettings.of("world_model", budget=20, num_test=0),
                                   run_dir=tmp_path / "wm").best_source
    return bundle.export_bundle(tmp_path / "bundle", game=game, model_source=model,
                                train=trajectories.collect(game, 2, seed=0))


@pytest.mark.slow  # a world model replayed and exported, a profile and an equivalence check: about a minute
def test_with_a_live_llm_and_twins_on_the_runs_own_llm_writes_the_twin(tmp_path, monkeypatch, capsys):
    from cwm.llm import ScriptedClient

    made = shipped_bundle("tic_tac_toe", tmp_path)
    reply = json.loads((SHIPPED / "tic_tac_toe.fast.jsonl").read_text().splitlines()[0])["response"]["texts"][0]
    asked = []
    monkeypatch.setattr(twins, "make_client", lambda spec, **kw: asked.append(spec) or ScriptedClient([reply]))
    stage = twins.StageInput(spec=games.resolve("tic_tac_toe"), bundle_dir=made, out=tmp_path, llm_spec="gemini",
                             config=RunConfig("tic_tac_toe", twins="on"), progress=False)
    record = twins.fast_stage(stage)
    assert asked == ["gemini"] and record["session"] == "gemini"  # the run's LLM, not the shipped session
    assert record["status"] == "accepted" and record["llm_calls"] == 1 and (made / "twin.py").is_file()
    assert "projected at" in capsys.readouterr().out
    assert twins.planned_on(made) == "twin with playout"
