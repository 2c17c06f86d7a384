"""Trajectories: recorded faithfully, JSONL round-trip exact, versioned, and the closed-deck view keeps only
one player's observations and own actions."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from cwm import games
from cwm.games import trajectories
from cwm.types import TRAJECTORY_SCHEMA, ClosedTrajectory, Trajectory, TrajectoryFormatError

ROUND_TRIP_GAMES = ["tic_tac_toe", "leduc_poker", "bargaining", "gin_rummy", "backgammon", "rock_paper_scissors"]


@pytest.mark.parametrize("game", ROUND_TRIP_GAMES)
def test_jsonl_round_trip_is_exact(game: str, tmp_path: Path) -> None:
    recorded = trajectories.collect(game, 2, seed=3)
    closed = [trajectories.closed_view(t, 1) for t in recorded]
    path = trajectories.save(tmp_path / f"{game}.jsonl", recorded + closed)
    loaded = trajectories.load(path, game=game)
    assert loaded == recorded + closed
    assert trajectories.save(tmp_path / "again.jsonl", loaded).read_bytes() == path.read_bytes()


@pytest.mark.parametrize("game", ROUND_TRIP_GAMES)
def test_shared_tables_round_trip_exactly_and_leave_short_chance_nodes_inline(game: str, tmp_path: Path) -> None:
    recorded = trajectories.collect(game, 3, seed=3)
    closed = [trajectories.closed_view(t, 1) for t in recorded]
    path = trajectories.save(tmp_path / f"{game}.jsonl", recorded + closed, shared=True)
    assert trajectories.load(path, game=game) == recorded + closed
    lines = [json.loads(line) for line in path.read_text().splitlines()]
    tables = [r for r in lines if r["kind"] == trajectories.TABLE_KIND]
    long_nodes = {s.chance_outcomes for t in recorded for s in t.steps
                  if len(s.chance_outcomes) >= trajectories.SHARED_TABLE_MIN}
    assert len(tables) == len(long_nodes)  # each distinct long table once, however many games meet it
    if not tables:  # nothing long to share: the same bytes as the plain form
        assert path.read_bytes() == trajectories.save(tmp_path / "plain.jsonl", recorded + closed).read_bytes()


def _bargaining_shared(tmp_path: Path) -> list[dict]:
    path = trajectories.save(tmp_path / "b.jsonl", trajectories.collect("bargaining", 2, seed=0), shared=True)
    return [json.loads(line) for line in path.read_text().splitlines()]


@pytest.mark.parametrize("edit, message", [
    (lambda lines: lines[1:], "refers to chance table 0, which no earlier line defines"),
    (lambda lines: [lines[0], lines[0], *lines[1:]], "id must be a new integer"),
    (lambda lines: [{**lines[0], "id": "0"}, *lines[1:]], "id must be a new integer"),
    (lambda lines: [{**lines[0], "chance_outcomes": 7}, *lines[1:]], "must be a list of objects"),
    (lambda lines: [{**lines[0], "chance_outcomes": [{**lines[0]["chance_outcomes"][0], "extra": 1}]}, *lines[1:]],
     "outcome is malformed"),
    (lambda lines: [{**lines[0], "chance_outcomes": [{"action": 1, "action_string": "a"}]}, *lines[1:]],
     "outcome is malformed"),
    (lambda lines: [lines[0], {**lines[1], "steps": [{**lines[1]["steps"][0], "chance_outcomes": {"table": 0,
                                                                                                "x": 1}}]}],
     "refers to chance table 0"),
])
def test_a_bad_chance_table_reference_is_refused_with_its_line(edit, message, tmp_path: Path) -> None:
    lines = edit(_bargaining_shared(tmp_path))
    path = tmp_path / "bad.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in lines))
    with pytest.raises(TrajectoryFormatError, match=message) as e:
        trajectories.load(path)
    assert "bad.jsonl:" in str(e.value) and "\n" not in str(e.value)


def test_references_may_not_stand_for_much_more_than_the_read_bound(tmp_path: Path) -> None:
    lines = _bargaining_shared(tmp_path)  # one 1,000-outcome table line, then games that refer to it
    path = tmp_path / "many.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in [lines[0], *lines[1:] * 20]))
    table = len(json.dumps(lines[0]))
    size = path.stat().st_size
    assert len(trajectories.load(path)) == 40  # 40 references: well within 4x the default bound
    assert 40 * table > trajectories.EXPANSION_BOUND * size  # ... but over 4x this file's own size
    with pytest.raises(TrajectoryFormatError, match="stand for over") as e:
        trajectories.load(path, limit=size)
    assert "many.jsonl:" in str(e.value)


@pytest.mark.parametrize("text, refs", [("deal" * 20, 2), ("\U0001F600" * 40, 1)], ids=["ascii", "astral"])
def test_references_are_bounded_at_what_they_cost_written_out(text: str, refs: int, tmp_path: Path) -> None:
    # A table line counts each outcome once, in raw UTF-8; written out, a reference repeats every string
    # (outcomes and legal-action strings) with non-ASCII as 12-byte escapes: that is what must be bounded.
    lines = _bargaining_shared(tmp_path)
    table = {**lines[0], "chance_outcomes": [{**o, "action_string": f"{text} {k}"}
                                             for k, o in enumerate(lines[0]["chance_outcomes"])]}
    path = tmp_path / "costly.jsonl"
    path.write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in [table, *lines[1:] * refs]),
                    encoding="utf-8")
    size = path.stat().st_size
    written = trajectories.save(tmp_path / "out.jsonl", trajectories.load(path)).stat().st_size
    line_length = len(json.dumps(table, ensure_ascii=False))  # each game refers to the table once
    assert size + 2 * refs * line_length <= trajectories.EXPANSION_BOUND * size < written
    with pytest.raises(TrajectoryFormatError, match="stand for over") as e:
        trajectories.load(path, limit=size)
    assert "costly.jsonl:" in str(e.value) and "\n" not in str(e.value)


def test_every_line_carries_the_schema_version_and_kind(tmp_path: Path) -> None:
    recorded = trajectories.collect("leduc_poker", 2, seed=0)
    path = trajectories.save(tmp_path / "t.jsonl", [recorded[0], trajectories.closed_view(recorded[1], 0)])
    lines = [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]
    assert [(d["schema"], d["kind"]) for d in lines] == [(TRAJECTORY_SCHEMA, "open"), (TRAJECTORY_SCHEMA, "closed")]


def test_other_schema_version_is_rejected(tmp_path: Path) -> None:
    path = trajectories.save(tmp_path / "t.jsonl", trajectories.collect("tic_tac_toe", 1, seed=0))
    data = json.loads(path.read_text(encoding="utf-8"))
    data["schema"] = "cwm.trajectory/999"
    path.write_text(json.dumps(data) + "\n", encoding="utf-8")
    with pytest.raises(TrajectoryFormatError, match=r"t.jsonl:1: schema 'cwm.trajectory/999' is not"):
        trajectories.load(path)


def test_recording_is_seeded_and_game_i_uses_seed_plus_i() -> None:
    first = trajectories.collect("leduc_poker", 3, seed=10)
    assert first == trajectories.collect("leduc_poker", 3, seed=10)
    assert first[2] == trajectories.record("leduc_poker", seed=12)
    assert len({tuple(t.action_strings) for t in first}) > 1


@pytest.mark.parametrize("game", ["tic_tac_toe", "leduc_poker", "gin_rummy", "iterated_prisoners_dilemma"])
def test_steps_are_consistent_with_the_ground_truth(game: str) -> None:
    traj = trajectories.record(game, seed=0)
    state = games.load_game(game).new_initial_state()
    for step in traj.steps:
        assert step.player == state.current_player()
        assert step.action in step.legal_actions
        assert step.action_string == step.legal_action_strings[step.legal_actions.index(step.action)]
        if step.chance_outcomes:
            assert abs(sum(c.probability for c in step.chance_outcomes) - 1.0) < 1e-9
        assert step.state is not None and len(step.observations) == traj.num_players
        state.apply_action(step.action)
        assert list(step.rewards) == state.rewards()
    assert state.is_terminal() and list(traj.returns) == state.returns()
    totals = [sum(s.rewards[p] for s in traj.steps) for p in range(traj.num_players)]
    assert totals == pytest.approx(list(traj.returns))


def test_closed_deck_recording_has_no_full_state() -> None:
    traj = trajectories.record("leduc_poker", seed=0, open_deck=False)
    assert traj.final_state is None and all(s.state is None for s in traj.steps)


@pytest.mark.parametrize("player", [0, 1])
def test_closed_view_keeps_one_players_observations_and_own_actions(player: int) -> None:
    traj = trajectories.record("leduc_poker", seed=4)
    closed = trajectories.closed_view(traj, player)
    assert isinstance(closed, ClosedTrajectory) and closed.player == player
    assert len(closed.events) == len(traj.steps) + 1
    for event, step in zip(closed.events, traj.steps):
        assert event.observation == step.observations[player]
        assert event.action == (step.action_string if step.player == player else None)
    assert closed.events[-1] == trajectories.ClosedEvent(traj.final_observations[player], None)
    assert closed.player_return == traj.returns[player]
    text = json.dumps(trajectories.to_json(closed))
    assert {e.observation["private"] for e in closed.events} <= {_own_card(traj, player), -10000}
    assert '"state"' not in text and "Chance outcome" not in text  # no hidden state, no chance actions


def _own_card(traj: Trajectory, player: int) -> int:
    return int(traj.steps[player].action_string.split(":")[1])


def test_players_see_only_their_own_private_information() -> None:
    traj = trajectories.record("leduc_poker", seed=1)
    cards = [_own_card(traj, 0), _own_card(traj, 1)]
    for step in traj.steps[2:]:
        assert [step.observations[p]["private"] for p in (0, 1)] == cards
    gin = trajectories.record("gin_rummy", seed=0)
    middle = gin.steps[30].observations
    assert set(middle[0]["hands"][1]) == {"XX"} and set(middle[1]["hands"][0]) == {"XX"}
    assert "XX" not in middle[0]["hands"][0]


def test_closed_view_rejects_a_player_out_of_range() -> None:
    with pytest.raises(ValueError, match="player 2 out of range for a 2-player game"):
        trajectories.closed_view(trajectories.record("tic_tac_toe", seed=0), 2)
