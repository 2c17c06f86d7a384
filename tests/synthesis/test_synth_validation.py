"""Bad settings are refused before the run directory is touched, and a resume checks the test-set settings."""

from __future__ import annotations

from pathlib import Path

import pytest
from synth_helpers import BUGGY_THEN_FIXED, reply, synthesize

from cwm.llm import ScriptedClient
from cwm.synthesis import RequestSettings, ResumeError, TreeSettings

BAD_ARGUMENTS = {
    # id: (keyword arguments of synthesize_world_model, words of the error)
    "strategy": ({"strategy": "beam"}, "unknown strategy"),
    "budget-0": ({"budget": 0}, "budget must be an integer >= 1"),
    "concurrency-0": ({"concurrency": 0}, "concurrency must be an integer >= 1"),
    "num-train-0": ({"num_train": 0}, "num_train must be an integer >= 1"),
    "num-test-negative": ({"num_test": -1}, "num_test must be an integer >= 0"),
    "test-mcts-0": ({"test_mcts_simulations": 0}, "test_mcts_simulations must be an integer >= 1"),
    "examples-0": ({"examples_per_type": 0}, "examples_per_type must be an integer >= 1"),
    "max-steps-0": ({"max_steps_shown": 0}, "max_steps_shown must be an integer >= 1"),
    "max-example-chars-0": ({"max_example_chars": 0}, "max_example_chars must be an integer >= 1"),
}


@pytest.mark.parametrize("name", sorted(BAD_ARGUMENTS))
def test_bad_arguments_leave_no_run_directory(tmp_path: Path, name: str) -> None:
    kwargs, words = BAD_ARGUMENTS[name]
    llm = ScriptedClient([reply(n) for n in BUGGY_THEN_FIXED])
    with pytest.raises(ValueError, match=words):
        synthesize(tmp_path / "run", llm, **kwargs)
    assert not (tmp_path / "run" / "config.json").exists() and not llm.calls
    # the corrected rerun in the same directory is a fresh run, not a ResumeError
    assert synthesize(tmp_path / "run", llm).solved


BAD_SETTINGS = {
    "c-negative": (lambda: TreeSettings(c=-1.0), "c must be >= 0"),
    "c-nan": (lambda: TreeSettings(c=float("nan")), "c must be >= 0"),
    "min-rate-above-1": (lambda: TreeSettings(min_rate=1.5), "min_rate must be in"),
    "min-gain-negative": (lambda: TreeSettings(min_gain=-0.1), "min_gain must be in"),
    "temperature-negative": (lambda: RequestSettings(temperature=-1.0), "temperature must be >= 0"),
    "max-output-tokens-0": (lambda: RequestSettings(max_output_tokens=0), "max_output_tokens must be >= 1"),
    "candidates-0": (lambda: RequestSettings(candidates_per_call=0), "candidates_per_call must be >= 1"),
}


@pytest.mark.parametrize("name", sorted(BAD_SETTINGS))
def test_settings_refuse_out_of_range_values(name: str) -> None:
    make, words = BAD_SETTINGS[name]
    with pytest.raises(ValueError, match=words):
        make()


@pytest.mark.parametrize("setting", ["num_test", "test_mcts_simulations", "test_trajectories"])
def test_resume_with_other_test_settings_is_refused(tmp_path: Path, small_test: list, setting: str) -> None:
    # the first session made no test set; a second one asking for another must not reuse test.jsonl
    change = {"num_test": 3, "test_mcts_simulations": 7, "test_trajectories": small_test}[setting]
    texts = [reply(n) for n in BUGGY_THEN_FIXED]
    synthesize(tmp_path / "run", ScriptedClient(texts), num_test=0)
    with pytest.raises(ResumeError, match="differ"):
        synthesize(tmp_path / "run", ScriptedClient(texts), **{setting: change})
