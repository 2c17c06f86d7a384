"""``SynthesisSettings`` given whole or, deprecated, as the former keyword arguments of the entry points."""

from __future__ import annotations

import json
import warnings

import pytest

from cwm.llm import ReplayClient
from cwm.pipeline import recording_for
from cwm.synthesis import SynthesisSettings, synthesize_world_model
from cwm.synthesis.settings import settings_from
from cwm.types import UsageError


def test_former_keywords_build_the_targets_settings():
    with pytest.warns(DeprecationWarning, match=r"synthesize_values\(budget=, seed=...\) is deprecated"):
        settings = settings_from("value", None, {"budget": 3, "seed": 7}, "synthesize_values")
    assert settings == SynthesisSettings.of("value", budget=3, seed=7)
    assert settings.call_s == SynthesisSettings.of("value").call_s  # the target's own defaults stay


def test_a_former_keyword_given_as_none_keeps_the_default_unless_none_is_a_value():
    with pytest.warns(DeprecationWarning):
        settings = settings_from("world_model", None, {"budget": None, "num_test": None}, "who")
    assert settings.budget == SynthesisSettings.of("world_model").budget
    assert settings.num_test is None  # no held-out set: None is a setting here


@pytest.mark.parametrize("given,legacy,message", [
    (SynthesisSettings.of("world_model"), {"budget": 2}, "pass either settings= or"),
    (None, {"budgett": 2}, r"unknown synthesis setting\(s\) \['budgett'\]"),
    (None, {"budget": 0}, "who: .*budget must be an integer >= 1, got 0"),
    (SynthesisSettings.of("world_model", strategy="sideways"), {}, "unknown strategy 'sideways'"),
])
def test_bad_settings_are_refused_naming_the_problem(given, legacy, message):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DeprecationWarning)
        with pytest.raises(UsageError, match=message):
            settings_from("world_model", given, legacy, "who")


def test_an_entry_point_runs_the_same_with_former_keywords_as_with_settings(tmp_path):
    runs = {}
    settings = SynthesisSettings.of("world_model", num_test=0, isolate=False)
    runs["settings"] = synthesize_world_model("tic_tac_toe", ReplayClient(recording_for("tic_tac_toe")), settings,
                                              run_dir=tmp_path / "settings")
    with pytest.warns(DeprecationWarning, match="synthesize_world_model") as seen:
        runs["keywords"] = synthesize_world_model("tic_tac_toe", llm=ReplayClient(recording_for("tic_tac_toe")),
                                                  run_dir=tmp_path / "keywords", num_test=0, isolate=False)
    assert seen[0].filename == __file__  # the warning points at the code to change, not inside cwm
    assert runs["settings"].solved and runs["settings"].best_source == runs["keywords"].best_source
    written = {name: json.loads((tmp_path / name / "settings.json").read_text()) for name in runs}
    assert written["settings"] == written["keywords"] == settings.to_json()
