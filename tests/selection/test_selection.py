"""select_models: games played inside the synthesized models reject the weak agent and keep the good ones; a
host's failure costs both players; every game is saved as it ends, and a rerun replays none."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from cwm.selection import (
    GAMES_FILE,
    SelectionError,
    SelectionSettings,
    load_records,
    pick_hosts,
    select_models,
)
from cwm.selection.report import read_survivors

from .conftest import FAST, FAST_ISMCTS, CountingExecutor


def test_the_weak_agent_is_rejected_and_the_good_ones_survive(ttt_selection) -> None:
    selection, played = ttt_selection
    scores = {s.candidate.label: s for s in selection.scores}
    assert len(played.keys) == 2 * 9 * 2 and len(set(played.keys)) == len(played.keys)
    assert selection.survivors == ("good", "good2")
    assert scores["weak"].mean < selection.threshold <= min(scores["good"].mean, scores["good2"].mean)
    # the threshold is the best mean less 10% of tic-tac-toe's range [-1, 1]
    assert selection.utility == (-1.0, 1.0) and "ground truth" in selection.utility_source
    assert selection.threshold == pytest.approx(max(s.mean for s in selection.scores) - 0.2)
    # every agent took 2 seats in each of its 3 x 2 pairings per host: as seat 0 and seat 1, self-play twice
    assert {s.samples for s in selection.scores} == {2 * 2 * 3 * 2}
    assert all(not r.failed for r in selection.records)


def test_each_agents_score_is_its_mean_over_the_seats_it_took(ttt_selection) -> None:
    selection, _ = ttt_selection
    for s in selection.scores:
        mine = [v for r in selection.records for seat, v in zip(r.seats, r.returns) if seat == s.candidate.label]
        assert s.mean == pytest.approx(sum(mine) / len(mine)) and s.lo <= s.mean <= s.hi


def test_the_files_say_what_was_played_and_who_survived(ttt_selection) -> None:
    selection, _ = ttt_selection
    lines = (selection.out / GAMES_FILE).read_text().splitlines()
    assert sorted(json.loads(line)["key"] for line in lines) == sorted(r.key for r in selection.records)
    data = json.loads((selection.out / "selection.json").read_text())
    assert data["survivors"] == ["good", "good2"] and data["hosts"] == list(selection.hosts)
    assert data["games"]["played"] == 36 and data["utility"]["min"] == -1.0
    assert [a["label"] for a in data["agents"] if not a["survived"]] == ["weak"]
    report = (selection.out / "selection.md").read_text()
    assert "| weak |" in report and "Survivors: good, good2." in report
    assert [c.label for c in read_survivors(selection.out, "tic_tac_toe")] == ["good", "good2"]


def test_a_rerun_replays_no_finished_game(ttt_selection, bundles: dict[str, Path], tmp_path: Path) -> None:
    """A crash loses only what was being written: with three finished lines cut off and the last of them torn
    mid-write, exactly those three are played again, with the results they had (every game is seeded)."""
    selection, _ = ttt_selection
    out = tmp_path / "out"
    shutil.copytree(selection.out, out)
    lines = (out / GAMES_FILE).read_text().splitlines(keepends=True)
    (out / GAMES_FILE).write_text("".join(lines[:-3]) + lines[-1][: len(lines[-1]) // 2])
    again = CountingExecutor()
    rerun = select_models("tic_tac_toe", [bundles["good"], bundles["good2"], bundles["weak"]], out, SelectionSettings(hosts=2, games_per_pairing=2, agents=FAST, executor=again, progress=False))
    lost = [json.loads(line)["key"] for line in lines[-3:]]
    assert sorted(again.keys) == sorted(lost)
    assert {r.key: r.returns for r in rerun.records} == {r.key: r.returns for r in selection.records}
    assert len(load_records(out / GAMES_FILE)) == 36 and rerun.survivors == selection.survivors
    # and once every game is saved, a rerun plays none
    third = CountingExecutor()
    select_models("tic_tac_toe", [bundles["good"], bundles["good2"], bundles["weak"]], out, SelectionSettings(hosts=2, games_per_pairing=2, agents=FAST, executor=third, progress=False))
    assert third.keys == []


def test_a_folder_of_another_selection_is_refused_before_anything_runs(ttt_selection, bundles: dict[str, Path]) -> None:
    selection, _ = ttt_selection
    before = (selection.out / GAMES_FILE).read_bytes()
    with pytest.raises(SelectionError, match="seed"):
        select_models("tic_tac_toe", [bundles["good"], bundles["good2"], bundles["weak"]], selection.out, SelectionSettings(hosts=2, games_per_pairing=2, agents=FAST, seed=1, executor=CountingExecutor(), progress=False))
    with pytest.raises(SelectionError, match="agents"):
        select_models("tic_tac_toe", [bundles["good"], bundles["weak"], bundles["good2"], bundles["breaks"]], selection.out, SelectionSettings(hosts=2, games_per_pairing=2, agents=FAST, executor="inline", progress=False))
    assert (selection.out / GAMES_FILE).read_bytes() == before


def test_a_host_that_breaks_mid_game_makes_both_players_lose(bundles: dict[str, Path], tmp_path: Path) -> None:
    selection = select_models("tic_tac_toe", [bundles["good"], bundles["breaks"]], tmp_path / "out", SelectionSettings(hosts=2, games_per_pairing=2, agents=FAST, executor="inline", progress=False))
    by_host = [r for r in selection.records if r.failed == "host"]
    assert by_host and all(r.host == "breaks" for r in by_host)
    for r in by_host:
        assert r.returns == (-1.0, -1.0) and r.kind == "contract" and "third move" in r.reason
    # its agent breaks on the same move inside its own search: its seat fails, and both lose again
    by_seat = [r for r in selection.records if r.failed.startswith("seat")]
    assert by_seat and all(r.seats[int(r.failed.split()[1])] == "breaks" and r.returns == (-1.0, -1.0)
                           for r in by_seat)
    assert selection.survivors == ("good",)
    assert "breaks\\|good\\|good" in (tmp_path / "out" / "selection.md").read_text()  # a failed game's row


def test_hosts_are_drawn_with_the_seed(ttt_selection) -> None:
    selection, _ = ttt_selection
    candidates = [s.candidate for s in selection.scores]
    assert tuple(c.label for c in pick_hosts(candidates, 2, 0)) == selection.hosts
    drawn = {tuple(c.label for c in pick_hosts(candidates, 1, seed)) for seed in range(20)}
    assert drawn == {("good",), ("good2",), ("weak",)}


@pytest.mark.parametrize("kwargs, words", [
    ({"hosts": 0}, "hosts must be between 1"),
    ({"hosts": 3}, "hosts must be between 1"),
    ({"games_per_pairing": 0}, "games per pairing"),
    ({"margin": float("nan")}, "margin"),
    ({"move_time_limit": 0.0}, "move time limit"),
])
def test_bad_numbers_are_refused_and_nothing_is_written(kwargs: dict, words: str, bundles: dict[str, Path],
                                                         tmp_path: Path) -> None:
    with pytest.raises(SelectionError, match=words):
        select_models("tic_tac_toe", [bundles["good"], bundles["weak"]], tmp_path / "out", SelectionSettings(**kwargs))
    assert not (tmp_path / "out").exists()


def test_bundles_must_be_distinct_folders(bundles: dict[str, Path], tmp_path: Path) -> None:
    with pytest.raises(SelectionError, match="at least two bundles"):
        select_models("tic_tac_toe", [bundles["good"]], tmp_path / "out")
    with pytest.raises(SelectionError, match="more than once"):
        select_models("tic_tac_toe", [bundles["good"], bundles["good"]], tmp_path / "out")
    with pytest.raises(SelectionError, match="not a bundle folder"):
        select_models("tic_tac_toe", [bundles["good"], tmp_path], tmp_path / "out")
    assert not (tmp_path / "out").exists()


def test_hidden_information_needs_inference_in_every_bundle(leduc_bundles: dict[str, Path], tmp_path: Path) -> None:
    with pytest.raises(SelectionError, match="no inference.py"):
        select_models("leduc_poker", [leduc_bundles["p"], leduc_bundles["blind"]], tmp_path / "out")
    assert not (tmp_path / "out").exists()


def test_imperfect_information_agents_plan_through_their_inference(leduc_bundles: dict[str, Path],
                                                                   tmp_path: Path) -> None:
    """Leduc inside a Leduc model: each agent draws the hidden cards with its bundle's inference from the
    observations the host showed it, and none of those draws is rejected."""
    selection = select_models("leduc_poker", [leduc_bundles["p"], leduc_bundles["q"]], tmp_path / "out", SelectionSettings(hosts=1, games_per_pairing=1, agents=FAST_ISMCTS, executor="inline", progress=False))
    assert len(selection.records) == 4 and not any(r.failed for r in selection.records)
    assert selection.utility == (-13.0, 13.0)
    for r in selection.records:
        for stats in r.stats:
            assert stats["draws"] >= 20 * stats["moves"] > 0
            assert stats["rejected_draws"] == 0 and stats["fallback_moves"] == 0
    assert any(sum(r.returns) == 0 and r.returns[0] != 0 for r in selection.records)  # chips changed hands


def test_the_seat_swapped_games_of_two_agents_share_one_deal_and_every_pair_its_own(ttt_selection) -> None:
    selection, _ = ttt_selection
    pairs: dict[tuple, set[int]] = {}
    for r in selection.records:
        pairs.setdefault((r.host, frozenset(r.seats), r.index), set()).add(r.deal)
    assert all(len(deals) == 1 and None not in deals for deals in pairs.values())  # both seat orders: one deal
    assert len(pairs) == 2 * (3 + 3) * 2  # hosts x (pairings of two agents + self-play) x games
    for seats in {k[1] for k in pairs}:  # each of a pairing's pairs has a deal of its own, in every host
        mine = [next(iter(d)) for k, d in pairs.items() if k[1] == seats]
        assert len(set(mine)) == len(mine) == 2 * 2


def test_every_two_agents_are_compared_over_their_seat_swapped_pairs(ttt_selection) -> None:
    selection, _ = ttt_selection
    rows = {frozenset((r["agent"], r["opponent"])): r for r in selection.comparisons}
    assert set(rows) == {frozenset(p) for p in [("good", "good2"), ("good", "weak"), ("good2", "weak")]}
    assert all(r["pairs"] == 2 * 2 and r["matches"] == 8 and r["unpaired"] == 0 for r in rows.values())
    for row in rows.values():  # the pair means are the agents' edges over their games against each other
        first = row["agent"]
        games = [r for r in selection.records if set(r.seats) == {row["agent"], row["opponent"]}]
        score = sum(1.0 if v > min(r.returns) else 0.5 if max(r.returns) == min(r.returns) else 0.0
                    for r in games for seat, v in zip(r.seats, r.returns) if seat == first)
        assert 0.5 + row["mean"] == pytest.approx(score / len(games)) and row["lo"] <= row["mean"] <= row["hi"]
    data = json.loads((selection.out / "selection.json").read_text())
    assert [(c["agent"], c["opponent"], c["pairs"]) for c in data["comparisons"]] == [
        (r["agent"], r["opponent"], r["pairs"]) for r in selection.comparisons]
    report = (selection.out / "selection.md").read_text()
    assert "## Agent against agent" in report and "seat-swapped pairs on one deal" in report
    assert all(r["verdict"] in report for r in selection.comparisons)


def test_games_recorded_before_they_were_paired_still_load_and_are_left_unpaired(ttt_selection,
                                                                                 tmp_path: Path) -> None:
    selection, _ = ttt_selection
    out = shutil.copytree(selection.out, tmp_path / "old")
    rows = [json.loads(line) for line in (out / GAMES_FILE).read_text().splitlines()]
    (out / GAMES_FILE).write_text("".join(json.dumps({k: v for k, v in r.items() if k not in ("deal", "index")}) + "\n"
                                          for r in rows))
    bundles = [Path(s.candidate.path) for s in selection.scores]
    again = select_models("tic_tac_toe", bundles, out, SelectionSettings(
        hosts=2, games_per_pairing=2, agents=FAST, executor=CountingExecutor(), progress=False))
    assert again.survivors == selection.survivors and [s.mean for s in again.scores] == [s.mean for s in selection.scores]
    assert all(c["pairs"] == 0 and c["unpaired"] == 8 for c in again.comparisons)
    assert all(c["verdict"] == "no complete seat-swapped pair: nothing to compare" for c in again.comparisons)
