"""The paired comparisons of a selection (``cwm.selection.report.pair_comparisons``) on made-up game records
with a known truth: pairs pooled over hosts, a failed game an even pair, void games and games without a
shared deal left out."""

from __future__ import annotations

import numpy as np

from cwm.selection.play import GameRecord
from cwm.selection.report import pair_comparisons

UTILITY = (-1.0, 1.0)


def _pair(host: str, i: int, a_wins: tuple[bool, bool], *, deal: int | None = 7, kind: str = "") -> list[GameRecord]:
    """Game ``i`` of ``a`` against ``b`` in both seat orders on one host; ``a_wins``: whether ``a`` won each."""
    out = []
    for seats, won in ((("a", "b"), a_wins[0]), (("b", "a"), a_wins[1])):
        returns = (1.0, -1.0) if (seats[0] == "a") == won else (-1.0, 1.0)
        out.append(GameRecord(f"{host}|{'|'.join(seats)}#{i}", host, seats, i, returns, kind=kind, index=i,
                              deal=None if deal is None else deal + i))
    return out


def _compare(records: list[GameRecord], hosts=("h1", "h2"), per_pairing: int = 15) -> dict:
    (row,) = pair_comparisons(records, hosts=hosts, games_per_pairing=per_pairing, utility=UTILITY,
                              outcome="win/draw/loss")
    return row


def test_pairs_of_two_hosts_with_the_same_numbers_are_pooled_not_confused():
    records = [g for host in ("h1", "h2") for i in range(15) for g in _pair(host, i, (True, True))]
    row = _compare(records)
    assert row["agent"] == "a" and row["pairs"] == 30 and row["unpaired"] == 0
    assert row["mean"] == 0.5 and row["significant"] and row["verdict"].startswith("a ahead")


def test_a_stronger_agent_is_found_ahead_and_equal_agents_are_not_often():
    """On simulated pairs with a known truth: ``a`` wins each game with probability 0.8 (found ahead in most
    of 40 selections of 30 pairs), and against an equal agent (0.5) rarely at the 5% level."""
    rng = np.random.default_rng(0)

    def ahead(p: float) -> int:
        found = 0
        for _ in range(40):
            records = [g for host in ("h1", "h2") for i in range(15)
                       for g in _pair(host, i, tuple(bool(x) for x in rng.random(2) < p))]
            found += _compare(records)["verdict"].startswith("a ahead")
        return found

    assert ahead(0.8) >= 36 and ahead(0.5) <= 4


def test_failed_void_and_unpaired_games():
    failed = _pair("h1", 0, (True, True))
    failed[0] = GameRecord(failed[0].key, "h1", ("a", "b"), 0, (-1.0, -1.0), failed="host", kind="contract", index=0,
                           deal=failed[0].deal)  # both players lose: this pair is even in that game
    void = _pair("h1", 1, (True, True), kind="void")
    old = _pair("h1", 2, (True, True), deal=None)  # recorded before games were paired
    row = _compare([*failed, *void, *old, *_pair("h2", 0, (False, False))])
    assert row["pairs"] == 2 and row["unpaired"] == 4
    assert row["mean"] == (0.25 - 0.5) / 2  # a failed game scores as a draw; then a pair a lost twice
