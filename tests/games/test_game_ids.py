"""Trajectories are matched to a game by canonical id: a module game recorded in one directory loads from
another, and a ground-truth string of a registered game is that game."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from cwm import games
from cwm.games import trajectories
from cwm.types import TrajectoryFormatError

NIM = Path(__file__).resolve().parents[1] / "data" / "foundation" / "tiny_nim.py"


@pytest.mark.parametrize(("name", "canonical"), [
    ("gen_tic_tac_toe", "gen_tic_tac_toe"),
    ("generalized_tic_tac_toe", "gen_tic_tac_toe"),
    ("mnk(m=6,n=6,k=4)", "gen_tic_tac_toe"),
    ("mnk(m=6, n=6, k=4)", "gen_tic_tac_toe"),
    ("mnk(m=4,n=4,k=3)", "mnk(m=4,n=4,k=3)"),
    ("leduc", "leduc_poker"),
    (f"{NIM}:tiny_nim", f"{NIM}:tiny_nim"),
], ids=["registry", "alias", "ground-truth", "ground-truth-spaces", "other-string", "leduc-alias", "module"])
def test_canonical_ids(name: str, canonical: str) -> None:
    assert games.canonical_id(name) == canonical


def test_module_game_recorded_in_one_directory_loads_from_another(tmp_path: Path,
                                                                  monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(NIM.parent)
    out = trajectories.save(tmp_path / "nim.jsonl", trajectories.collect("tiny_nim.py:tiny_nim", 2, seed=0))
    assert trajectories.load(out, game="tiny_nim.py:tiny_nim")[0].game == f"{NIM}:tiny_nim"
    (tmp_path / "elsewhere").mkdir()
    monkeypatch.chdir(tmp_path / "elsewhere")
    assert len(trajectories.load(out, game=f"{NIM}:tiny_nim")) == 2
    other = tmp_path / "other_nim.py"
    other.write_text(NIM.read_text(encoding="utf-8"), encoding="utf-8")
    with pytest.raises(TrajectoryFormatError, match="where .*other_nim.py:tiny_nim' was expected"):
        trajectories.load(out, game=f"{other}:tiny_nim")


def test_a_registered_ground_truth_string_is_the_registered_game(tmp_path: Path) -> None:
    spec = games.resolve("mnk(m=6,n=6,k=4)")
    assert spec == games.resolve("gen_tic_tac_toe")
    trajs = trajectories.collect("mnk(m=6,n=6,k=4)", 1, seed=0)
    assert trajs[0].game == "gen_tic_tac_toe"
    path = trajectories.save(tmp_path / "g.jsonl", trajs)
    assert len(trajectories.load(path, game="gen_tic_tac_toe")) == 1
    # a file written before the name was mapped stores the game string: still the same game
    path.write_text(path.read_text(encoding="utf-8").replace('"game":"gen_tic_tac_toe"',
                                                             '"game":"mnk(m=6,n=6,k=4)"'), encoding="utf-8")
    assert json.loads(path.read_text(encoding="utf-8"))["game"] == "mnk(m=6,n=6,k=4)"
    assert len(trajectories.load(path, game="gen_tic_tac_toe")) == 1
    assert len(trajectories.load(path, game="mnk(m=6,n=6,k=4)")) == 1
