"""One hosted game: the host's legal actions decide what is legal, and a move outside them costs both players."""

from __future__ import annotations

import pytest

from cwm.selection.play import GameJob, GameRecord, play_game

from .conftest import FAST, TTT

# A host that never offers the centre square: a correct agent that takes it plays an illegal move there.
NO_CENTRE = TTT.replace('if state["board"][i] == "."]', 'if state["board"][i] == "." and i != 4]')
assert NO_CENTRE != TTT


def play(host: str, seed: int) -> GameRecord:
    job = GameJob("tic_tac_toe", f"host|a|b#{seed}", "host", host, ("a", "b"), ({"model.py": TTT},) * 2, seed, FAST,
                  10.0)
    return GameRecord.from_json(play_game(job))


def test_a_move_the_host_does_not_allow_makes_both_players_lose() -> None:
    record = play(NO_CENTRE, 0)
    assert record.returns == (-1.0, -1.0) and record.kind == "illegal" and record.failed == "seat 0"
    assert "'x(1,1)'" in record.reason and "host's legal actions" in record.reason


@pytest.mark.parametrize("seed", [0, 1])
def test_a_game_in_a_correct_host_ends_as_the_rules_say(seed: int) -> None:
    record = play(TTT, seed)
    assert not record.failed and record.returns in {(1.0, -1.0), (0.0, 0.0), (-1.0, 1.0)}
    assert 5 <= record.moves <= 9 and record.seed == seed
    assert GameRecord.from_json(record.to_json()) == record


@pytest.mark.parametrize("field, value", [("returns", "x"), ("seats", 3), ("seed", "1"), ("returns", [float("nan")])])
def test_a_record_read_back_is_checked(field: str, value: object) -> None:
    data = play(TTT, 0).to_json() | {field: value}
    with pytest.raises(ValueError, match=field if field != "returns" or value == "x" else "finite"):
        GameRecord.from_json(data)


def test_a_jobs_deal_seeds_chance_and_without_one_its_own_seed_does(monkeypatch) -> None:
    from cwm.selection import play as module

    seen: list[int] = []
    real = module.play_hosted

    def spy(host, agents, *, seed, **kw):  # noqa: ANN001, ANN202
        seen.append(seed)
        return real(host, agents, seed=seed, **kw)

    monkeypatch.setattr(module, "play_hosted", spy)
    for seed, seats, deal in [(1, ("a", "b"), 42), (2, ("b", "a"), 42), (1, ("a", "b"), None), (2, ("a", "b"), None)]:
        job = GameJob("tic_tac_toe", f"host|{'|'.join(seats)}#0", "host", TTT, seats, ({"model.py": TTT},) * 2, seed,
                      FAST, 10.0, deal=deal)
        record = GameRecord.from_json(play_game(job))
        assert record.deal == deal and GameRecord.from_json(record.to_json()) == record
    assert seen[:2] == [42, 42] and len({*seen[2:], 42}) == 3  # the pair's deal; else one per game seed
