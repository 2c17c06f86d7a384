"""A tournament folder is data: `cwm replay`, `cwm view` and a resume never import a module its files name,
never change a file they read, and refuse a damaged row or transcript in one line naming the file and field."""

from __future__ import annotations

import json
import logging
import shutil
from pathlib import Path

import pytest

from cwm import cli
from cwm.agents import Settings
from cwm.arena import ArenaError, tournament
from cwm.arena import human as arena_human
from cwm.arena import replay as arena_replay
from cwm.arena import transcript as arena_transcript
from cwm.arena.plan import TournamentPlan
from planners.config import SearchConfig

FAST = Settings(search=SearchConfig(num_simulations=5, rollouts=1))
NIM = Path(__file__).resolve().parents[1] / "data" / "foundation" / "tiny_nim.py"


def _play(game: str, out: Path) -> list:
    return tournament(game, ["random", "gt-mcts"], TournamentPlan(matches=1, settings=FAST), out_dir=out,
                      executor="inline", progress=False)


@pytest.fixture(scope="module")
def ttt(tmp_path_factory):
    out = tmp_path_factory.mktemp("ttt") / "t"
    _play("tic_tac_toe", out)
    return out


@pytest.fixture(scope="module")
def nim(tmp_path_factory):
    out = tmp_path_factory.mktemp("nim") / "t"
    _play(f"{NIM}:tiny_nim", out)
    return out


def _hostile_copy(folder: Path, tmp_path: Path, short_name: str) -> tuple[Path, Path]:
    """A copy of ``folder`` whose config.json names a game module that would write a marker file when
    imported, with its transcripts gone (so a reader needs the game to rebuild them); and the marker."""
    marker = tmp_path / "MARKER"
    evil = tmp_path / "shared" / "game.py"
    evil.parent.mkdir()
    evil.write_text(f"import pathlib\npathlib.Path({str(marker)!r}).write_text('imported')\n")
    copy = tmp_path / "shared" / "results"
    shutil.copytree(folder, copy)
    shutil.rmtree(copy / "transcripts")
    config = json.loads((copy / "config.json").read_text())
    (copy / "config.json").write_text(json.dumps(config | {"game": f"{evil}:{short_name}"}))
    return copy, marker


def _run(argv: list[str], capsys) -> tuple[int, str, str]:
    code = cli.main(argv)
    captured = capsys.readouterr()
    return code, captured.out, captured.err


@pytest.mark.parametrize("argv", [["replay", "{dir}/1"], ["view", "{dir}"], ["view", "{dir}", "--out", "{page}"]])
def test_a_folder_naming_a_game_module_is_refused_and_nothing_is_imported(ttt, tmp_path, capsys, argv):
    folder, marker = _hostile_copy(ttt, tmp_path, "tic_tac_toe")
    code, out, err = _run([a.format(dir=folder, page=tmp_path / "p.html") for a in argv], capsys)
    assert code == 2 and out == "" and err.count("\n") == 1
    assert "config.json: field 'game' names a game module" in err and "--game path/to/module.py:tic_tac_toe" in err
    assert not marker.exists() and not (tmp_path / "p.html").exists()


def test_with_the_users_own_game_the_folder_is_read(ttt, tmp_path, capsys):
    folder, marker = _hostile_copy(ttt, tmp_path, "tic_tac_toe")
    code, listing, _ = _run(["replay", str(folder)], capsys)  # listing needs no game
    assert code == 0 and listing.count("\n") == 2
    code, text, _ = _run(["replay", f"{folder}/1", "--game", "tic_tac_toe"], capsys)
    assert code == 0 and text.startswith("tic_tac_toe ") and text.count("seat ") >= 5
    code, _, _ = _run(["view", str(folder), "--out", str(tmp_path / "p.html"), "--game", "tic_tac_toe"], capsys)
    assert code == 0 and (tmp_path / "p.html").read_text().count('class="match"') == 2
    assert not marker.exists()


def test_a_module_game_is_rebuilt_with_the_module_the_user_names(nim, tmp_path, capsys):
    folder, marker = _hostile_copy(nim, tmp_path, "tiny_nim")
    code, _, err = _run(["replay", f"{folder}/2"], capsys)
    assert code == 2 and "--game path/to/module.py:tiny_nim" in err
    code, text, _ = _run(["replay", f"{folder}/2", "--game", f"{NIM}:tiny_nim"], capsys)
    assert code == 0 and text.startswith("tiny_nim ") and "returns " in text.splitlines()[-1]
    code, _, err = _run(["replay", f"{folder}/2", "--game", "tic_tac_toe"], capsys)
    assert code == 2 and "its matches are of" in err and "not 'tic_tac_toe'" in err
    assert not marker.exists()


def test_a_folder_with_its_transcripts_is_read_without_any_game(ttt, tmp_path, capsys):
    folder, marker = _hostile_copy(ttt, tmp_path, "tic_tac_toe")
    shutil.copytree(ttt / "transcripts", folder / "transcripts")
    code, text, _ = _run(["replay", f"{folder}/1"], capsys)
    assert code == 0 and "seats: 0 = random, 1 = gt-mcts" in text
    code, _, _ = _run(["view", str(folder), "--out", str(tmp_path / "p.html")], capsys)
    assert code == 0 and not marker.exists()


def test_resuming_or_playing_into_such_a_folder_imports_nothing(ttt, tmp_path, capsys):
    folder, marker = _hostile_copy(ttt, tmp_path, "tic_tac_toe")
    code, _, err = _run(["arena", "tic_tac_toe", "--agents", "random,gt-mcts", "--matches", "1", "--sims", "5",
                         "--rollouts", "1", "--executor", "inline", "--out", str(folder), "--no-progress"], capsys)
    assert code == 2 and "other settings (game differ)" in err
    with pytest.raises(ArenaError, match="holds matches of"):
        arena_human.play("tic_tac_toe", "random", out_dir=folder, read=lambda _: pytest.fail("asked a move"))
    assert not marker.exists()


def _snapshot(folder: Path) -> dict[str, tuple[bytes, int]]:
    return {str(p.relative_to(folder)): (p.read_bytes(), p.stat().st_mtime_ns) for p in folder.rglob("*")
            if p.is_file()}


def test_readers_change_nothing_they_read_and_skip_a_torn_last_line(ttt, tmp_path, capsys, caplog):
    folder = tmp_path / "t"
    shutil.copytree(ttt, folder)
    with (folder / "matches.jsonl").open("a") as f:
        f.write('{"key": "torn')  # a tournament killed (or still running) mid-line
    before = _snapshot(folder)
    with caplog.at_level(logging.WARNING, logger="cwm.arena"):
        for argv in (["replay", str(folder)], ["replay", f"{folder}/2"], ["view", str(folder)],
                     ["view", str(folder), "--out", str(tmp_path / "p.html")]):
            assert _run(argv, capsys)[0] == 0, argv
    after = _snapshot(folder)
    assert set(after) == set(before) | {"view.html"}  # `cwm view DIR` adds its page, nothing else
    assert all(after[name] == before[name] for name in before)
    notices = [r.getMessage() for r in caplog.records if "cut short" in r.getMessage()]
    assert notices and all("\n" not in n and "matches.jsonl:3" in n and "left as it is" in n for n in notices)


@pytest.mark.parametrize("field,value,message", [
    ("seed", "7", "'seed' of a match result must be an integer"),
    ("returns", [float("nan"), 1.0], "'returns' of a match result must be a list of finite numbers"),
    ("returns", ["1", "-1"], "'returns' of a match result must be a list of finite numbers"),
    ("seats", [{"x": 1}, "b"], "'seats' of a match result must be a list of strings"),
    ("forfeit_seat", "0", "'forfeit_seat' of a match result must be an integer or null"),
    ("duration_s", "fast", "'duration_s' of a match result must be a number"),
])
def test_a_row_of_another_type_is_refused_naming_the_file_line_and_field(ttt, tmp_path, capsys, field, value,
                                                                         message):
    folder = tmp_path / "t"
    shutil.copytree(ttt, folder)
    first, second = (folder / "matches.jsonl").read_text().splitlines()
    (folder / "matches.jsonl").write_text(json.dumps(json.loads(first) | {field: value}) + "\n" + second + "\n")
    code, _, err = _run(["replay", str(folder)], capsys)
    assert code == 2 and err.count("\n") == 1 and "matches.jsonl:1: not a match result" in err and message in err


@pytest.mark.parametrize("change,message", [
    (lambda t: t["steps"][1].update(player="0"), "'steps[1].player' must be an integer"),
    (lambda t: t["steps"][0].update(state=["x"]), "'steps[0].state' must be a string"),
    (lambda t: t["steps"][2].update(seconds="1.5"), "'steps[2].seconds' must be a number or null"),
    (lambda t: t.update(returns=["+1", "-1"]), "'returns' must be a list of numbers"),
    (lambda t: t.update(forfeit={"seat": "1", "kind": "illegal", "reason": ""}),
     "'forfeit.seat' must be an integer or null"),
    (lambda t: t["seats"][0].update(log="not a list"), "'seats[0].log' must be a list or null"),
    (lambda t: t.update(initial=None), "'initial' must be a string"),
])
def test_a_transcript_of_another_type_is_refused_naming_the_file_and_field(ttt, tmp_path, capsys, change, message):
    folder = tmp_path / "t"
    shutil.copytree(ttt, folder)
    result = arena_replay.results_of(folder)[0]
    path = arena_transcript.path_of(folder, result.key)
    data = json.loads(path.read_text())
    change(data)
    path.write_text(json.dumps(data))
    code, _, err = _run(["replay", f"{folder}/1"], capsys)
    assert code == 2 and err.count("\n") == 1 and f"{path}: field {message}" in err
    assert _run(["view", str(folder), "--out", str(tmp_path / "p.html")], capsys)[0] == 2


def test_a_planted_view_html_link_is_replaced_not_written_through(ttt, tmp_path, capsys):
    folder = tmp_path / "t"
    shutil.copytree(ttt, folder)
    victim = tmp_path / "victim.txt"
    victim.write_text("keep me")
    (folder / "view.html").symlink_to(victim)  # a shared folder may carry a link to a file of the reader's
    assert _run(["view", str(folder)], capsys)[0] == 0
    assert victim.read_text() == "keep me"
    assert not (folder / "view.html").is_symlink() and "<!DOCTYPE html>" in (folder / "view.html").read_text()
