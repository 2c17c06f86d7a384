"""The main job offline on hidden-information games: the shipped recording of each (a real model's session where
one ships, else the hand-written demo) synthesizes a world model and its inference function, the bundle carries both, its ISMCTS agent plays random play and
GT-ISMCTS in hardened workers, and the report's numbers come from that play."""

from __future__ import annotations

import json

import pytest

from cwm import pipeline
from cwm.cli import main
from cwm.text import counted

SMALL = ["--num-test", "4", "--matches", "2", "--sims", "30", "--rollouts", "1", "--executor", "local:2",
         "--quiet", "--no-twins", "--ppo-steps", "0"]  # the twin and PPO stages: tests/pipeline/test_run_twins.py


@pytest.fixture(scope="module", params=["leduc_poker", "quadranto"])
def hidden_run(request, tmp_path_factory, no_api_keys):
    out = tmp_path_factory.mktemp(request.param) / "run"
    assert main(["run", request.param, "--out", str(out), *SMALL]) == 0
    return request.param, out, json.loads((out / "report.json").read_text())


def _calls(game: str) -> dict[str, int]:
    """LLM calls per stage of the recording ``cwm run`` replays: its provenance's for a real session; the
    scripted demos make one refinement round in each stage."""
    provenance = pipeline.recording_provenance(pipeline.recording_for(game))
    if provenance is None:
        return {"synthesis": 2, "inference": 2}
    return {"synthesis": provenance["stages"]["world model"]["llm_calls"],
            "inference": provenance["stages"]["inference"]["llm_calls"]}


def test_offline_run_synthesizes_the_model_and_its_inference_from_the_recording(hidden_run):
    game, out, report = hidden_run
    assert report["offline_recording"] and report["llm"] == f"replay:{pipeline.recording_for(game)}"
    calls = _calls(game)
    for stage in ("synthesis", "inference"):
        s = report[stage]
        assert s["solved"] and s["llm_calls"] == calls[stage], stage
        assert s["train_accuracy"] == 1.0 and s["test_accuracy"] == 1.0, stage
    assert report["inference"]["train_by_type"] == {"inference": 1.0, "inference_terminal": 1.0}
    manifest = json.loads((out / "bundle" / "manifest.json").read_text())
    assert (out / "bundle" / "inference.py").read_text() == (out / "inference" / "best_program.py").read_text()
    assert "inference.py" in json.dumps(manifest)


def test_the_bundle_plays_random_and_gt_ismcts_with_no_forfeit(hidden_run):
    _, out, report = hidden_run
    rows = {(r["opponent"], r["seat"]): r for r in report["arena"]}
    assert set(rows) == {(o, s) for o in ("random", "gt-ismcts") for s in ("0", "1", "all")}
    for opponent in ("random", "gt-ismcts"):
        row = rows[(opponent, "all")]
        assert row["matches"] == 4 and row["win_rate"] + row["draw_rate"] + row["loss_rate"] == pytest.approx(1.0)
        assert row["forfeit_rate"] == 0.0 and row["opponent_forfeits"] == 0
        assert row["searched_moves"] > 0 and row["fallback_moves"] == 0  # every move planned on drawn states
    assert len((out / "arena" / "matches.jsonl").read_text().splitlines()) == 8
    on_policy = report["on_policy"]
    assert on_policy["matches"] == 8 and on_policy["transition_accuracy"] == 1.0
    assert on_policy["inference_accuracy"] == 1.0
    md = (out / "report.md").read_text()
    game = hidden_run[0]
    assert f"(0 of {on_policy['transitions'].split('/')[1]} wrong: error rate <" in md
    assert f"inference function (open deck): solved after {counted(_calls(game)['inference'], 'LLM call')}" in md and "| cwm | gt-ismcts | all | 4 |" in md
    assert ("- `cwm`: ISMCTS on the synthesized model, 30 simulations, 1 rollout per leaf; inference: the bundle's "
            "synthesized inference function") in md  # what was run
    assert {c["opponent"]: (c["matches"], c["pairs"]) for c in report["arena_comparisons"]} == {
        "random": (4, 2), "gt-ismcts": (4, 2)}


def test_the_report_gives_the_posterior_distance_off_and_on_policy_with_its_detectable_distance(hidden_run):
    _, out, report = hidden_run
    posterior = report["posterior"]
    assert posterior == json.loads((out / "posterior.json").read_text()) and posterior["matches"] == 8
    for where in ("off_policy", "on_policy"):
        part = posterior[where]
        assert len(part["states"]) == 8 and part["accuracy"] == 1.0 and part["lo"] == 0.0, where
        assert part["detectable"] <= 0.2 + 1e-9 and all(s["draws"] >= 200 for s in part["states"]), where
    assert posterior["on_policy"]["where"] == "on-policy" and posterior["off_policy"]["where"] == "off-policy"
    assert set(posterior["by_opponent"]) <= {"random", "gt-ismcts"}
    assert sum(r["states"] for r in posterior["by_opponent"].values()) == 8
    md = (out / "report.md").read_text()
    assert "## Beliefs (posterior check)" in md and "- on-policy (states the CWM agent met in the arena): TV " in md
    assert "over 8 states" in md and "detectable 0.200" in md
