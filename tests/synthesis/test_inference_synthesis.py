"""Inference synthesis from scripted replies (hand-written test fixtures, not LLM output): open deck for the
reference Leduc model, and closed deck (world model and inference together), through the sandbox; the run
is saved and resumes without a call."""

from __future__ import annotations

import json

import pytest

from cwm.llm import ScriptedClient
from cwm.synthesis import SynthesisSettings
from cwm.synthesis.inference import synthesize_inference
from cwm.synthesis.report import summary_markdown
from cwm.synthesis.types import SynthesisResult
from cwm.types import UsageError
from tests.checks.test_inference_checks import SEARCH_INFERENCE_SOURCE


def _reply(code: str) -> str:
    return f"Here is the module.\n\n```python\n{code}\n```\n"


TOO_SHORT = "def resample_history(events, player_id, seed):\n    return []\n"


def test_open_deck_inference_is_refined_until_every_view_replays(tmp_path, leduc_source):
    # the open-deck candidate is an inference module alone: the search calls the model's functions, so the
    # fixture gives it the reference model's functions (a candidate may define helpers it needs)
    correct = leduc_source + "\n\n" + SEARCH_INFERENCE_SOURCE
    llm = ScriptedClient([_reply(TOO_SHORT), _reply(correct)], model="scripted-inference")
    result = synthesize_inference("leduc_poker", llm, SynthesisSettings.of("inference", budget=4, num_train=3, num_test=3), run_dir=tmp_path / "run", world_model=leduc_source)
    assert result.target == "inference" and result.solved and result.llm_calls == 2
    assert result.train_accuracy == 1.0 and result.test_accuracy == 1.0
    assert (tmp_path / "run" / "best_program.py").read_text().strip() == correct.strip()
    config = json.loads((tmp_path / "run" / "config.json").read_text())
    assert config["deck"] == "open" and config["world_model_sha"]
    again = synthesize_inference("leduc_poker", ScriptedClient([], model="scripted-inference"), SynthesisSettings.of("inference", budget=4, num_train=3, num_test=3), run_dir=tmp_path / "run", world_model=leduc_source)
    assert again.solved and again.llm_calls == 2  # resumed from the run directory: no call made


def test_the_held_out_games_are_counted_and_bound_the_per_game_failure_rate(tmp_path, leduc_source):
    llm = ScriptedClient([_reply(leduc_source + "\n\n" + SEARCH_INFERENCE_SOURCE)], model="scripted-inference")
    result = synthesize_inference("leduc_poker", llm, SynthesisSettings.of("inference", budget=1, num_train=2, num_test=3),
                                  run_dir=tmp_path / "run", world_model=leduc_source)
    assert result.test_accuracy == 1.0 and result.test_games == 3 and result.test_checked > 3  # games, not checks
    saved = json.loads((tmp_path / "run" / "result.json").read_text())
    assert saved["test_games"] == 3
    summary = (tmp_path / "run" / "summary.md").read_text()
    assert f"0 of {result.test_checked:,} wrong" in summary and "0 of 3 games wrong: < 1 per game" in summary
    del saved["test_games"]  # a result.json from before the games were counted still loads, bounding per check
    old = SynthesisResult.from_json(saved)
    assert old.test_games is None and old.test_checked == result.test_checked
    assert "games wrong" not in summary_markdown(old) and f"0 of {result.test_checked:,} wrong" in summary_markdown(old)


def test_closed_deck_world_model_and_inference_are_refined_together(tmp_path, leduc_source):
    broken = leduc_source + "\n\n" + TOO_SHORT
    correct = leduc_source + "\n\n" + SEARCH_INFERENCE_SOURCE
    llm = ScriptedClient([_reply(broken), _reply(correct)], model="scripted-joint")
    result = synthesize_inference("leduc_poker", llm, SynthesisSettings.of("inference", deck="closed", budget=4, num_train=4, num_test=2), run_dir=tmp_path / "run")
    assert result.target == "joint" and result.solved, result.train_by_type
    assert set(result.train_by_type) == {"inference", "inference_terminal", "random_play"}
    prompt = next((tmp_path / "run" / "calls").glob("*.prompt.md")).read_text()
    assert "seen by player 1" in prompt and "the real history" not in prompt  # one seat only, no hidden truth


def test_a_never_ending_model_fails_random_play(tmp_path, leduc_source):
    endless = leduc_source.replace('    if state["done"]:\n        return -4\n', "")
    assert endless != leduc_source
    llm = ScriptedClient([_reply(endless + "\n\n" + SEARCH_INFERENCE_SOURCE)] * 2, model="scripted-joint")
    result = synthesize_inference("leduc_poker", llm, SynthesisSettings.of("inference", deck="closed", budget=1, num_train=2, num_test=0), run_dir=tmp_path / "run")
    assert not result.solved and result.train_by_type["random_play"] == 0.0
    report = json.loads(next((tmp_path / "run" / "checks").glob("*.json")).read_text())
    failures = report.get("report", report)["failures"]
    assert any("did not end within 1000 steps" in f["diff"] for f in failures if f["test_type"] == "random_play")


@pytest.mark.parametrize("kwargs,message", [({"deck": "open"}, "written for a world model"),
                                            ({"deck": "sideways"}, "deck must be"),
                                            ({"deck": "closed", "budget": 0}, "budget must be")])
def test_bad_settings_are_refused_before_anything_is_written(tmp_path, kwargs, message):
    with pytest.raises(UsageError, match=message):
        synthesize_inference("leduc_poker", ScriptedClient([]), SynthesisSettings.of("inference", **kwargs),
                             run_dir=tmp_path / "run")
    assert not (tmp_path / "run").exists()


def test_the_former_keywords_still_work_with_a_deprecation_warning(tmp_path):
    with pytest.warns(DeprecationWarning, match=r"synthesize_inference\(budget=, deck=...\) is deprecated"), \
            pytest.raises(UsageError, match="budget must be"):
        synthesize_inference("leduc_poker", llm=ScriptedClient([]), run_dir=tmp_path / "run", deck="closed",
                             budget=0)
    assert not (tmp_path / "run").exists()


def test_a_joint_candidate_without_the_world_model_api_is_refused_the_same_in_process_and_contained(
        leduc_games, leduc_source):
    """A closed-deck candidate must define the world model's functions too; where the check ran does not change
    what the LLM is told."""
    from cwm.games.trajectories import views_of
    from cwm.sandbox import Sandbox
    from cwm.sandbox.checkers import inference_checker

    no_rewards = leduc_source.replace("def get_rewards(", "def get_reward(") + "\n\n" + SEARCH_INFERENCE_SOURCE
    assert "def get_rewards(" not in no_rewards
    views = views_of(leduc_games[:1])
    with Sandbox() as box:
        contained = inference_checker(views, world_model=None, sandbox=box)(no_rewards)
    in_process = inference_checker(views, world_model=None)(no_rewards)
    assert contained.error == in_process.error and contained.pass_rate == in_process.pass_rate == 0.0
    assert "cwm_model: missing contract function(s): get_rewards" in str(contained.error)
