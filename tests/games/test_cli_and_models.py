"""The novel games through the command line, and a world model written from a rules file alone."""

from __future__ import annotations

from pathlib import Path

import pytest

from cwm import checks, cli, games, model
from cwm.games import trajectories
from cwm.sandbox import load_source

DATA = Path(__file__).parents[1] / "data" / "games"


def test_cwm_games_lists_the_novel_games(capsys):
    assert cli.main(["games"]) == 0
    out = capsys.readouterr().out
    for name in ("quadranto", "hand_of_war", "gen_chess", "gen_tic_tac_toe"):
        line = next(row for row in out.splitlines() if row.startswith(name + " "))
        assert " yes   " in line  # the novel column


@pytest.mark.parametrize("name", ["quadranto", "hand_of_war", "gen_chess"])
def test_cwm_collect_writes_loadable_trajectories(name, tmp_path, capsys):
    out = tmp_path / f"{name}.jsonl"
    assert cli.main(["collect", name, "--n", "2", "--out", str(out)]) == 0
    loaded = trajectories.load_open(out, game=name)
    assert len(loaded) == 2 and all(isinstance(t.steps[-1].observations[0], dict) for t in loaded)
    closed = tmp_path / f"{name}_closed.jsonl"
    assert cli.main(["collect", name, "--n", "1", "--deck", "closed", "--player", "1", "--out", str(closed)]) == 0


def test_cwm_check_passes_a_model_written_from_the_quadranto_rules(tmp_path, capsys):
    traj = tmp_path / "q.jsonl"
    assert cli.main(["collect", "quadranto", "--n", "5", "--seed", "3", "--out", str(traj)]) == 0
    code = cli.main(["check", str(DATA / "quadranto_cwm.py"), "--game", "quadranto", "--trajectories", str(traj)])
    assert code == 0, capsys.readouterr().out


@pytest.mark.parametrize("name, seed", [("quadranto", 0), ("quadranto", 100), ("hand_of_war", 0),
                                        ("gen_chess", 0)])
def test_model_written_from_the_rules_file_matches_ground_truth(name, seed):
    """Each model in tests/data/games was written from game_rules/<name>.md alone, so the rules suffice."""
    module = load_source((DATA / f"{name}_cwm.py").read_text(), name=f"{name}_cwm")
    wm = model.WorldModel(module, codec=model.ActionCodec.from_game(games.load_game(name)), name=name)
    report = checks.run_checks(wm, trajectories.collect(name, 10, seed=seed))
    assert report.all_passed, report.summary()
    assert checks.random_play_checks(wm, num_games=5, seed=seed).all_passed
