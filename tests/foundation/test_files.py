"""cwm.files: crash-safe writes and the config.json comparison every resumable run directory makes."""

from __future__ import annotations

import json

from cwm.files import atomic_write, changed_settings, differing_keys


def test_atomic_write_creates_folders_and_leaves_no_temporary_file(tmp_path):
    path = tmp_path / "a" / "b" / "out.txt"
    atomic_write(path, "one")
    atomic_write(path, "two")
    assert path.read_text(encoding="utf-8") == "two"
    assert [p.name for p in path.parent.iterdir()] == ["out.txt"]


def test_no_stored_config_means_nothing_changed(tmp_path):
    assert changed_settings(tmp_path / "config.json", {"seed": 1}) == []


def test_changed_settings_names_every_differing_key_once_sorted(tmp_path):
    path = tmp_path / "config.json"
    path.write_text(json.dumps({"seed": 1, "game": "tic_tac_toe", "gone": 3, "same": [1, 2]}), encoding="utf-8")
    new = {"seed": 2, "game": "tic_tac_toe", "added": True, "same": (1, 2)}  # a tuple equals its stored list
    assert changed_settings(path, new) == ["added", "gone", "seed"]
    assert changed_settings(path, new, ignore={"seed", "gone", "added"}) == []


def test_differing_keys_compares_the_json_form_of_the_new_settings():
    class Where:
        def __str__(self) -> str:
            return "runs/x"

    assert differing_keys({"out": "runs/x", "n": 1.0}, {"out": Where(), "n": 1}) == []
    assert differing_keys({"n": 1}, {"n": 2}, ignore={"m"}) == ["n"]
