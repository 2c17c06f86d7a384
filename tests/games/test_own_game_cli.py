"""A new user's game, brought to cwm with no Python of the user's: a module outside the registry (hidden
information, chance, observations written as JSON text) and its rules beside it, taken through collect, a
recorded session (hand-written replies, through experiments/real_session.py), synthesize (replaying that
recording), export, arena and ``cwm run``, from the command line alone."""

from __future__ import annotations

import json
import shutil
import sys
from pathlib import Path

from cwm.cli import EXIT_WAITING, main
from cwm.games import trajectories
from cwm.games.views import CHOSEN_VIEWS_ENV

ROOT = Path(__file__).resolve().parents[2]
if str(ROOT) not in sys.path:  # the experiments folder is not installed
    sys.path.append(str(ROOT))
from experiments import real_session  # noqa: E402

DATA = Path(__file__).resolve().parents[1] / "data" / "own_game"
ANSWERED_BY = "hand-written for a test"


def _user_folder(tmp_path: Path) -> tuple[Path, str]:
    """The game as a user keeps it: pocket_duel.py with pocket_duel.md beside it, in a folder of their own."""
    folder = tmp_path / "my_game"
    folder.mkdir()
    for name in ("pocket_duel.py", "pocket_duel.md"):
        shutil.copyfile(DATA / name, folder / name)
    return folder, f"{folder / 'pocket_duel.py'}:pocket_duel"


def _answer_waiting(work: Path, reply: str) -> None:
    (prompt,) = (work / "prompts").iterdir()  # one request waits at a time
    (work / "answers").mkdir(exist_ok=True)
    (work / "answers" / prompt.name).write_text((DATA / "replies" / reply).read_text(encoding="utf-8"))
    prompt.unlink()


def test_a_new_game_goes_through_every_command_from_the_command_line(tmp_path, capsys, caplog, monkeypatch):
    monkeypatch.delenv(CHOSEN_VIEWS_ENV, raising=False)  # no view chosen or detected before this test
    folder, game = _user_folder(tmp_path)
    traj = tmp_path / "games.jsonl"
    assert main(["collect", game, "--n", "3", "--out", str(traj)]) == 0
    said = [r for r in caplog.records if "observations are read as JSON" in r.getMessage()]
    assert len(said) == 1  # detected, and said once
    first = trajectories.load_open(traj, game=game)[0]
    seen = first.steps[2].observations[0]  # player 0 to call: a dict, not {"observation": "<JSON text>"}
    assert seen["calls"] == [] and seen["my_card"] in (1, 2, 3, 4)

    # a session recorded with the project's own tool: each prompt answered by a hand-written reply
    work = tmp_path / "session"
    argv = [game, "--work", str(work), "--answered-by", ANSWERED_BY]
    assert real_session.main(argv) == EXIT_WAITING
    prompt = next((work / "prompts").iterdir()).read_text()
    assert "Pocket Duel" in prompt and '"my_card"' in prompt  # GAME.md's rules, JSON observations (not a string)
    _answer_waiting(work, "world_model.md")
    assert real_session.main(argv) == EXIT_WAITING  # solved: the inference function is asked for next
    _answer_waiting(work, "inference.md")
    assert real_session.main(argv) == 0
    provenance = json.loads((work / "provenance.json").read_text())
    assert provenance["answered_by"] == ANSWERED_BY and provenance["solved"] and provenance["game"] == game
    recording = f"replay:{work / 'recording.jsonl'}"

    synth, inference, bundle = tmp_path / "synth", tmp_path / "inference", tmp_path / "bundle"
    assert main(["synthesize", game, "--llm", recording, "--out", str(synth), "--num-test", "0", "--quiet"]) == 0
    assert main(["synthesize", game, "--target", "inference", "--model", str(synth), "--llm", recording,
                 "--out", str(inference), "--num-test", "0", "--quiet"]) == 0
    assert "solved" in capsys.readouterr().out
    assert main(["export", str(synth), "--out", str(bundle), "--inference", str(inference), "--game", game]) == 0
    arena_out = tmp_path / "arena"  # played in a worker process: it imports the module, and inherits the view
    assert main(["arena", game, "--agents", f"cwm:{bundle},random", "--matches", "2", "--sims", "30",
                 "--executor", "local:1", "--out", str(arena_out), "--yes", "--no-progress"]) == 0
    results = [json.loads(line) for line in (arena_out / "matches.jsonl").read_text().splitlines()]
    assert len(results) == 4 and all(r["forfeit_seat"] is None for r in results)

    run = tmp_path / "run"
    assert main(["run", game, "--llm", recording, "--num-test", "0", "--matches", "1", "--sims", "30",
                 "--opponents", "random", "--executor", "inline", "--out", str(run), "--quiet", "--yes"]) == 0
    out = capsys.readouterr().out
    assert "world-model synthesis solved" in out and "inference synthesis solved" in out and "vs random" in out
    assert sorted(p.name for p in folder.iterdir()) == ["pocket_duel.md", "pocket_duel.py"]  # no __pycache__
