"""Mistyped fields in a trajectory file are rejected with the record, step and field named, instead of loading
silently and failing later inside the checks."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from cwm.games import trajectories
from cwm.types import TrajectoryFormatError


def _edit_step(record: dict[str, Any], field: str, value: Any) -> None:
    record["steps"][1][field] = value


def _edit_chance(record: dict[str, Any], field: str, value: Any) -> None:
    record["steps"][0]["chance_outcomes"][0][field] = value


CASES = [
    ("player-string", _edit_step, "player", "zero", r"t\.jsonl:1: step 1: field 'player' must be an integer"),
    ("player-bool", _edit_step, "player", True, r"step 1: field 'player' must be an integer, got True"),
    ("action-string-int", _edit_step, "action_string", 3, r"step 1: field 'action_string' must be a string, got 3"),
    ("action-float", _edit_step, "action", 1.5, r"step 1: field 'action' must be an integer"),
    ("legal-ids-strings", _edit_step, "legal_actions", ["0"], r"field 'legal_actions' must be a list of integers"),
    ("legal-strings-ints", _edit_step, "legal_action_strings", [0],
     r"field 'legal_action_strings' must be a list of strings"),
    ("rewards-strings", _edit_step, "rewards", ["1", "0"], r"field 'rewards' must be a list of numbers"),
    ("observations-dict", _edit_step, "observations", {}, r"field 'observations' must be a list"),
    ("chance-probability", _edit_chance, "probability", "half",
     r"step 0: chance_outcomes\[0\]: field 'probability' must be a number"),
]


@pytest.mark.parametrize(("edit", "field", "value", "message"), [c[1:] for c in CASES], ids=[c[0] for c in CASES])
def test_mistyped_step_field_is_named(edit: Any, field: str, value: Any, message: str, tmp_path: Path) -> None:
    path = trajectories.save(tmp_path / "t.jsonl", trajectories.collect("leduc_poker", 1, seed=0))
    record = json.loads(path.read_text(encoding="utf-8"))
    edit(record, field, value)
    path.write_text(json.dumps(record) + "\n", encoding="utf-8")
    with pytest.raises(TrajectoryFormatError, match=message):
        trajectories.load(path)


@pytest.mark.parametrize(("field", "value", "message"), [
    ("seed", "0", "field 'seed' must be an integer"),
    ("returns", [1, "x"], "field 'returns' must be a list of numbers"),
    ("game", 7, "field 'game' must be a string"),
], ids=["seed", "returns", "game"])
def test_mistyped_record_field_is_named(field: str, value: Any, message: str, tmp_path: Path) -> None:
    path = trajectories.save(tmp_path / "t.jsonl", trajectories.collect("tic_tac_toe", 1, seed=0))
    record = json.loads(path.read_text(encoding="utf-8"))
    record[field] = value
    path.write_text(json.dumps(record) + "\n", encoding="utf-8")
    with pytest.raises(TrajectoryFormatError, match=rf"t\.jsonl:1: {message}"):
        trajectories.load(path)


def test_well_typed_files_still_load(tmp_path: Path) -> None:
    items = trajectories.collect("leduc_poker", 2, seed=0)
    closed = trajectories.closed_view(items[0], 1)
    path = trajectories.save(tmp_path / "t.jsonl", [*items, closed])
    assert trajectories.load(path) == [*items, closed]
