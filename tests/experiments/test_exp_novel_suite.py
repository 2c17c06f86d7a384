"""experiments/novel_suite.py: generated games checked against the generator, their shipped real sessions
replayed through the main job, and the known games measured the same way.

The sessions replayed here are the REAL ones shipped in experiments/novel/sessions (answered by a model
through the hashed relay, as their provenance says); the settings are cut to a few games so the test is quick."""

from __future__ import annotations

import json
import shutil
import sys
from pathlib import Path

import pytest

from cwm.games.generated import make

ROOT = Path(__file__).resolve().parents[2]
if str(ROOT) not in sys.path:  # the experiments folder is not installed
    sys.path.append(str(ROOT))
from experiments import novel_suite  # noqa: E402

GAMES = ROOT / "experiments" / "novel" / "games"
SMALL = ["--num-test", "2", "--matches", "1", "--sims", "10", "--quiet"]


def test_every_shipped_game_folder_is_what_the_generator_writes_and_has_a_real_session():
    folders = sorted(p for p in GAMES.iterdir() if p.is_dir())
    families = {json.loads((f / "facts.json").read_text())["family"] for f in folders}
    assert len(folders) >= 12 and families == {"placement", "dice_race", "trick_taking", "melding"}
    config = novel_suite.parser().parse_args([])
    for folder in folders:
        game = novel_suite.generated_game(folder, novel_suite.SuiteConfig(
            games=str(GAMES), sessions=config.sessions, strategy="tree", known=(), num_test=1, matches=1, sims=1,
            rollouts=1, out=""))
        assert game.session.is_file(), game.session
        provenance = json.loads(game.session.with_name(game.session.stem + ".provenance.json").read_text())
        assert provenance["answered_by"] == "claude (Anthropic), version not exposed"
        assert provenance["game"] == f"experiments/novel/games/{folder.name}/{game.name}.py:{game.name}"


def test_the_table_replays_two_shipped_games_and_a_known_one(tmp_path, capsys):
    """Two perfect-information games (a hidden-information game's run adds the inference stage and the
    posterior measurement, minutes of CPU: the first test checks those sessions' files)."""
    games = tmp_path / "games"
    for name in ("placement-1", "dice_race-1"):
        shutil.copytree(GAMES / name, games / name)
    out = tmp_path / "out"
    assert novel_suite.main(["--games", str(games), "--known", "tic_tac_toe", "--out", str(out), *SMALL]) == 0
    rows = {r["game"]: r for r in json.loads((out / "table.json").read_text())}
    assert set(rows) == {"nuziku_1", "nelopi_1", "tic_tac_toe"}
    assert rows["nuziku_1"]["inference"] is None and rows["nelopi_1"]["group"] == "dice_race"
    for row in rows.values():
        assert row["status"] == "" and row["world_model"]["solved"] and row["world_model"]["llm_calls"] == 1
        assert {c["opponent"] for c in row["arena"]} >= {"random"}
    assert rows["nuziku_1"]["rules_on"] == len(json.loads((games / "placement-1" / "facts.json").read_text())["rules_on"])
    text = capsys.readouterr().out
    assert "| all generated | 2 | 2 of 2 |" in text and "| known | 1 | 1 of 1 |" in text


def test_a_game_without_a_session_is_a_row_saying_so(tmp_path):
    games = tmp_path / "games"
    make_folder = games / "placement-40"
    from cwm.games.generated import generate

    generate("placement", 40, make_folder)
    out = tmp_path / "out"
    assert novel_suite.main(["--games", str(games), "--known", "", "--out", str(out), *SMALL]) == 0
    (row,) = json.loads((out / "table.json").read_text())
    assert row["status"].startswith("no session at") and row["group"] == "placement"


@pytest.mark.parametrize("damage", ["rulebook", "facts", "extra", "deep"])
def test_a_folder_that_is_not_what_the_generator_writes_is_refused_in_one_line(damage, tmp_path, capsys):
    folder = tmp_path / "games" / "dice_race-1"
    shutil.copytree(GAMES / "dice_race-1", folder)
    name = make("dice_race", 1).name
    if damage == "rulebook":  # a rules text edited by hand: the session answered other rules
        path = folder / f"{name}.md"
        path.write_text(path.read_text().replace("two players", "three players"))
    elif damage == "facts":
        (folder / "facts.json").write_text('{"family": "chess", "seed": 1}')
    elif damage == "deep":  # nested past any JSON reader's recursion: a one-line error, not a traceback
        (folder / "facts.json").write_text("[" * 30_000 + "]" * 30_000)
    else:
        (folder / "notes.txt").write_text("x")
    assert novel_suite.main(["--games", str(folder.parent), "--known", "", "--out", str(tmp_path / "o"), *SMALL]) == 2
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1 and str(folder) in err, err
    assert not (tmp_path / "o" / "table.json").exists()
