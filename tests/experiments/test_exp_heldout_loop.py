"""experiments/heldout_loop.py: the held-out game's two sessions replayed offline into one table.

The sessions here are recorded as the real ones are (``real_session.py --strategy S --ship-to DIR``) for the
small own game of tests/data/own_game, with HAND-WRITTEN replies (not a model's): under tree search a
correct world model (solved in one call), under conversation a world model that pays the wrong stake (not
solved in its budget of one call)."""

from __future__ import annotations

import json
import shutil
import sys
from pathlib import Path

import pytest

from cwm.cli import EXIT_WAITING

ROOT = Path(__file__).resolve().parents[2]
if str(ROOT) not in sys.path:  # the experiments folder is not installed
    sys.path.append(str(ROOT))
from experiments import heldout_loop, real_session  # noqa: E402

OWN = ROOT / "tests" / "data" / "own_game"
ANSWERED_BY = "hand-written for a test"


def _replies(folder: Path) -> dict[str, Path]:
    """The hand-written replies: the correct world model, one whose stake is a chip too high, and the
    inference function."""
    folder.mkdir()
    right = (OWN / "replies" / "world_model.md").read_text(encoding="utf-8")
    wrong = right.replace('stake = 1.0 + state["calls"].count("high")', 'stake = 2.0 + state["calls"].count("high")')
    assert wrong != right
    out = {"right": folder / "right.md", "wrong": folder / "wrong.md", "inference": OWN / "replies" / "inference.md"}
    out["right"].write_text(right, encoding="utf-8")
    out["wrong"].write_text(wrong, encoding="utf-8")
    return out


def _record(game: str, work: Path, strategy: str, budget: int, replies: list[Path], sessions: Path) -> None:
    argv = [game, "--work", str(work), "--answered-by", ANSWERED_BY, "--strategy", strategy,
            "--budget", str(budget), "--ship-to", str(sessions)]
    for reply in replies:
        assert real_session.main(argv) == EXIT_WAITING
        (prompt,) = (work / "prompts").iterdir()
        (work / "answers").mkdir(exist_ok=True)
        shutil.copyfile(reply, work / "answers" / prompt.name)
        prompt.unlink()
    assert real_session.main(argv) == 0


@pytest.fixture(scope="module")
def recorded(tmp_path_factory: pytest.TempPathFactory) -> tuple[str, Path]:
    """(the game, the sessions folder holding pocket_duel.tree.* and pocket_duel.conversation.*)."""
    tmp = tmp_path_factory.mktemp("heldout")
    folder = tmp / "game"
    folder.mkdir()
    for name in ("pocket_duel.py", "pocket_duel.md"):
        shutil.copyfile(OWN / name, folder / name)
    game, sessions = f"{folder / 'pocket_duel.py'}:pocket_duel", tmp / "sessions"
    replies = _replies(tmp / "replies")
    _record(game, tmp / "tree", "tree", 3, [replies["right"], replies["inference"]], sessions)
    _record(game, tmp / "conversation", "conversation", 1, [replies["wrong"], replies["inference"]], sessions)
    return game, sessions


def test_the_table_gives_calls_to_solve_accuracy_and_failures_by_branch(recorded, tmp_path, capsys):
    game, sessions = recorded
    out = tmp_path / "out"
    assert heldout_loop.main(["--game", game, "--sessions", str(sessions), "--num-test", "6", "--out", str(out)]) == 0
    printed = capsys.readouterr().out
    rows = {r["strategy"]: r for r in json.loads((out / "table.json").read_text())}
    tree, chat = rows["tree"], rows["conversation"]
    assert (tree["solved"], tree["calls_to_solve"], tree["budget"]) == (True, 1, 3)
    assert tree["train_accuracy"] == tree["test_accuracy"] == 1.0 and tree["test_games"] == 6
    assert tree["test_failures_by_branch"] == {}
    assert (chat["solved"], chat["calls_to_solve"], chat["llm_calls"]) == (False, None, 1)
    assert chat["train_accuracy"] < 1.0 and chat["test_accuracy"] < 1.0
    assert chat["test_failures_by_branch"] and all(b.startswith("rewards after ") for b in chat["test_failures_by_branch"])
    assert "| tree | 1 | 1.0000 | 1.0000 (0 of " in printed and "0 of 6 games wrong" in printed
    assert "| conversation | not solved in 1 | 0.7500 | 0.7500 | rewards after high: 3; rewards after low: 3 |" in printed
    assert f"answered by {ANSWERED_BY}" in printed
    assert "needs no more calls than conversation: yes (only it solved it)" in printed
    assert (out / "table.md").read_text() == printed and json.loads((out / "record.json").read_text())["results"]


def test_a_missing_session_is_a_row_saying_so(recorded, tmp_path, capsys):
    game, sessions = recorded
    only_tree = tmp_path / "sessions"
    only_tree.mkdir()
    for path in sessions.glob("pocket_duel.tree.*"):
        shutil.copyfile(path, only_tree / path.name)
    assert heldout_loop.main(["--game", game, "--sessions", str(only_tree), "--num-test", "2",
                              "--out", str(tmp_path / "out")]) == 0
    printed = capsys.readouterr().out
    assert f"| conversation | no session at {only_tree / 'pocket_duel.conversation.jsonl'} |" in printed
    assert "| tree | 1 |" in printed and "not known (a session is missing)" in printed


@pytest.mark.parametrize("damage", ["another strategy", "not JSON", "a budget of zero"])
def test_a_damaged_provenance_is_refused_in_one_line_naming_it(recorded, tmp_path, capsys, damage):
    game, sessions = recorded
    damaged = tmp_path / "sessions"
    shutil.copytree(sessions, damaged)
    path = damaged / "pocket_duel.tree.provenance.json"
    data = json.loads(path.read_text())
    if damage == "not JSON":
        path.write_bytes(b"\xff{")
    else:
        path.write_text(json.dumps({**data, **({"strategy": "conversation"} if damage == "another strategy"
                                               else {"budget": 0})}))
    assert heldout_loop.main(["--game", game, "--sessions", str(damaged), "--num-test", "2",
                              "--out", str(tmp_path / "out")]) == 2
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1 and str(path) in err
    assert not (tmp_path / "out" / "table.md").exists()


@pytest.mark.parametrize("name", ["cairn", "kestrel"])
def test_the_shipped_real_sessions_of_each_held_out_game_replay_offline(name, tmp_path, capsys):
    """The real sessions in experiments/heldout/sessions replay, for both strategies, to what
    docs/experiments.md reports: solved at the first call, every check passed on fresh held-out games."""
    game = f"{ROOT / 'experiments' / 'heldout' / name}.py:{name}"
    out = tmp_path / "out"
    assert heldout_loop.main(["--game", game, "--num-test", "2", "--out", str(out)]) == 0
    rows = {r["strategy"]: r for r in json.loads((out / "table.json").read_text())}
    for strategy in ("tree", "conversation"):
        row = rows[strategy]
        assert row["status"] == "" and row["solved"] and row["calls_to_solve"] == 1, row
        assert row["train_accuracy"] == 1.0 and row["test_accuracy"] == 1.0 and row["test_games"] == 2
        assert row["answered_by"] == "claude (Anthropic), version not exposed"
    assert "needs no more calls than conversation: yes (1 against 1)" in capsys.readouterr().out
