"""Saving trajectories writes exactly the bytes the ``dataclasses.asdict`` conversion wrote (it is kept here
as the reference), for open- and closed-deck records of games with and without chance and hidden state."""

from __future__ import annotations

import dataclasses
import json
from pathlib import Path

import pytest

from cwm.games import trajectories
from cwm.types import JSON, TRAJECTORY_SCHEMA, ClosedTrajectory, Trajectory

GAMES = {"tic_tac_toe": 3, "leduc_poker": 4, "backgammon": 3}


def asdict_to_json(item: Trajectory | ClosedTrajectory) -> dict[str, JSON]:
    """The conversion ``trajectories.to_json`` replaced: a deep copy through ``dataclasses.asdict``."""
    kind = "open" if isinstance(item, Trajectory) else "closed"
    return {"schema": TRAJECTORY_SCHEMA, "kind": kind, **dataclasses.asdict(item)}


def _records(game: str, n: int, tmp_path: Path) -> list[Trajectory | ClosedTrajectory]:
    recorded = trajectories.collect(game, n, seed=11)
    hidden = [trajectories.record(game, seed=50, open_deck=False)]  # no full states
    closed = [trajectories.closed_view(t, p) for t in recorded[:2] for p in range(t.num_players)]
    # records read back from a file hold lists and dicts from the JSON parser, not what recording built
    loaded = trajectories.load(trajectories.save(tmp_path / "first.jsonl", recorded[:1] + closed[:1]))
    return [*recorded, *hidden, *closed, *loaded]


@pytest.mark.parametrize("game", sorted(GAMES))
def test_saved_bytes_equal_the_asdict_conversion(game: str, tmp_path: Path, monkeypatch) -> None:
    items = _records(game, GAMES[game], tmp_path)
    assert {type(t) for t in items} == {Trajectory, ClosedTrajectory}
    new = trajectories.save(tmp_path / "new.jsonl", items).read_bytes()
    monkeypatch.setattr(trajectories, "to_json", asdict_to_json)  # the same save path, the old conversion
    old = trajectories.save(tmp_path / "old.jsonl", items).read_bytes()
    assert new.count(b"\n") == len(items) and new == old


def test_sorted_dumps_equal_the_asdict_conversion() -> None:
    # bundles and synthesis runs hash a sorted dump of to_json: a change would break their saved keys
    recorded = trajectories.collect("leduc_poker", 2, seed=5)
    for item in [*recorded, trajectories.closed_view(recorded[0], 1)]:
        dump = json.dumps(trajectories.to_json(item), sort_keys=True)
        assert dump == json.dumps(asdict_to_json(item), sort_keys=True)
