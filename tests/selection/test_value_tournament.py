"""The value tournament: inside the world model the sign-flipped value loses and is rejected, the table is saved,
a rerun plays nothing again, rollouts keep their place when no value beats them, and no candidate runs here."""

from __future__ import annotations

import json

import pytest

from cwm.selection.play import GameRecord
from cwm.selection.value_tournament import (
    ROLLOUTS,
    TournamentError,
    TournamentSettings,
    run_tournament,
    score,
)
from planners.config import SearchConfig

from .conftest import DATA, FLIPPED, GOOD, TTT

# Weak enough that a value at the leaves matters, cheap enough for a fast suite (the selection tests' FAST
# is agent settings of their own).
FAST = SearchConfig(num_simulations=50, rollouts=2)
PER_PAIRING = 3


@pytest.fixture(scope="module")
def played(tmp_path_factory):
    out = tmp_path_factory.mktemp("tournament")
    return out, run_tournament("tic_tac_toe", TTT, [GOOD, FLIPPED], out, TournamentSettings(games_per_pairing=PER_PAIRING, search=FAST, executor="local:2", progress=False))


def test_the_flipped_value_is_rejected_by_play(played) -> None:
    _, result = played
    means = {s.label: s.mean for s in result.standings}
    assert result.winner != "value-2"
    assert means["value-2"] < means[ROLLOUTS] and means["value-2"] < means["value-1"]
    assert result.head_to_head["value-2"][ROLLOUTS] < 0 < result.head_to_head[ROLLOUTS]["value-2"]
    # every agent met each other one in both seats; nothing failed
    assert all(s.games == 2 * 2 * PER_PAIRING and s.failures == 0 for s in result.standings)
    assert result.winner is None or result.winner_index == result.labels.index(result.winner) - 1


def test_the_table_and_every_game_are_saved(played) -> None:
    out, result = played
    table = json.loads((out / "tournament.json").read_text())
    assert table == json.loads(json.dumps(result.to_json()))
    assert "| value-2 |" in (out / "tournament.md").read_text()
    records = [GameRecord.from_json(json.loads(line)) for line in (out / "games.jsonl").read_text().splitlines()]
    assert len(records) == 3 * 2 * PER_PAIRING and all(r.host == "model" for r in records)
    assert {r.seats for r in records} == {(a, b) for a in result.labels for b in result.labels if a != b}


def test_a_rerun_plays_nothing_again_and_other_candidates_are_refused(played) -> None:
    out, result = played
    before = (out / "games.jsonl").read_bytes()
    again = run_tournament("tic_tac_toe", TTT, [GOOD, FLIPPED], out, TournamentSettings(games_per_pairing=PER_PAIRING, search=FAST, executor="inline", progress=False))
    assert (out / "games.jsonl").read_bytes() == before and again == result
    with pytest.raises(TournamentError, match="candidates"):
        run_tournament("tic_tac_toe", TTT, [GOOD], out, TournamentSettings(games_per_pairing=PER_PAIRING, search=FAST, progress=False))


def test_no_candidate_code_runs_in_this_process(tmp_path, monkeypatch) -> None:
    import cwm.sandbox.load

    def refuse(*args, **kwargs):
        raise AssertionError("candidate code was loaded in the main process")

    # every in-process load of model source (cwm.sandbox.load_source, wherever it was imported) runs the module
    # body through this module's exec
    monkeypatch.setattr(cwm.sandbox.load, "exec", refuse, raising=False)
    result = run_tournament("tic_tac_toe", TTT, [FLIPPED], tmp_path, TournamentSettings(games_per_pairing=1, search=FAST, executor="inline", progress=False))
    assert sum(s.games for s in result.standings) == 4 and all(s.failures == 0 for s in result.standings)


def _record(key: str, seats: tuple[str, str], returns: tuple[float, float], failed: str = "") -> GameRecord:
    return GameRecord(key, "model", seats, 0, returns, failed, "exception" if failed else "")


def test_rollouts_keep_their_place_on_a_tie_and_a_failing_seat_is_counted() -> None:
    labels = [ROLLOUTS, "value-1"]
    tied = [_record("a", (ROLLOUTS, "value-1"), (1.0, -1.0)), _record("b", ("value-1", ROLLOUTS), (1.0, -1.0))]
    result = score("tic_tac_toe", labels, tied, games_per_pairing=1, search=FAST, seed=0)
    assert result.winner is None and result.standings[0].label == ROLLOUTS
    failing = [_record("a", (ROLLOUTS, "value-1"), (-1.0, -1.0), failed="seat 1"),
               _record("b", ("value-1", ROLLOUTS), (0.0, 0.0))]
    result = score("tic_tac_toe", labels, failing, games_per_pairing=1, search=FAST, seed=0)
    standing = {s.label: s for s in result.standings}
    assert standing["value-1"].failures == 1 and standing[ROLLOUTS].failures == 0
    assert result.winner is None  # both lose the failed game: equal means, rollouts first
    beaten = [_record("a", (ROLLOUTS, "value-1"), (-1.0, 1.0)), _record("b", ("value-1", ROLLOUTS), (0.0, 0.0))]
    assert score("tic_tac_toe", labels, beaten, games_per_pairing=1, search=FAST, seed=0).winner == "value-1"


def test_bad_settings_are_refused_before_anything_is_played(tmp_path) -> None:
    with pytest.raises(TournamentError, match="at least one candidate"):
        run_tournament("tic_tac_toe", TTT, [], tmp_path, TournamentSettings(progress=False))
    with pytest.raises(TournamentError, match="games per pairing"):
        run_tournament("tic_tac_toe", TTT, [GOOD], tmp_path, TournamentSettings(games_per_pairing=0, progress=False))
    with pytest.raises(TournamentError, match="3 players"):
        run_tournament("kuhn_poker(players=3)", TTT, [GOOD], tmp_path, TournamentSettings(progress=False))
    assert not any(tmp_path.iterdir())


def test_a_hidden_information_game_plays_through_the_models_inference(tmp_path) -> None:
    leduc = (DATA / "reference" / "leduc_poker_model.py").read_text()
    inference = (DATA / "selection" / "leduc_inference.py").read_text()
    zero = "def get_value(state, player_id):\n    return 0.0\n"
    with pytest.raises(TournamentError, match="hidden information"):
        run_tournament("leduc_poker", leduc, [zero], tmp_path, TournamentSettings(progress=False))
    result = run_tournament("leduc_poker", leduc, [zero], tmp_path, TournamentSettings(games_per_pairing=1, search=SearchConfig(num_simulations=20, rollouts=1), executor="inline", progress=False), inference=inference)
    assert all(s.games == 2 and s.failures == 0 for s in result.standings)
    records = [json.loads(line) for line in (tmp_path / "games.jsonl").read_text().splitlines()]
    assert [r["failed"] for r in records] == ["", ""]
