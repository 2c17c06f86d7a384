"""``cwm run``'s arena stage on a three-player game: the CWM agent (a bundle of a hand-written model of
three-player Pig, planned on in a hardened worker) against two copies of each opponent, in the table's
rotations, compared with each opponent by the paired pairwise edge."""

from __future__ import annotations

from pathlib import Path

from cwm import games
from cwm.bundle import export_bundle
from cwm.games import trajectories
from cwm.pipeline import stages

PIG3 = "pig(players=3,winscore=12)"
MODEL = Path(__file__).resolve().parents[1] / "data" / "reference" / "pig3_model.py"


def test_the_run_arena_seats_the_cwm_agent_against_copies_of_each_opponent(tmp_path):
    bundle = export_bundle(tmp_path / "bundle", game=PIG3, model_source=MODEL.read_text(),
                           train=trajectories.collect(PIG3, 2, seed=0))
    config = stages.RunConfig(PIG3, matches=2, simulations=10, rollouts=1, opponents=("random",), executor="inline")
    spec = games.resolve(PIG3)
    rows, results, _ = stages._arena(config, spec, bundle, tmp_path / "arena", (False, True))
    assert len(results) == 6 and {tuple(sorted(r.seats)) for r in results} == {("cwm", "random", "random")}
    assert sorted(r.seats.index("cwm") for r in results) == [0, 0, 1, 1, 2, 2]  # each rotation, each deal
    assert all(r.forfeit_seat is None for r in results)
    assert {row["opponent"] for row in rows} == {"random"} and {row["seat"] for row in rows} == {"0", "1", "2", "all"}
    compared, _ = stages._arena_findings(config, spec, results)
    assert len(compared) == 1 and {compared[0]["agent"], compared[0]["opponent"]} == {"cwm", "random"}
    assert compared[0]["pairs"] == 2 and compared[0]["matches"] == 6 and compared[0]["unpaired"] == 0
