"""experiments/real_session.py: a session advanced by answer files, then recorded and checked to replay.

The answers here are the hand-written tic-tac-toe candidates of tests/data/synthesis/ (a first program
with bugs, then a correct one), standing in for the answering model's replies."""

from __future__ import annotations

import json
import sys
from pathlib import Path

from cwm.cli import EXIT_WAITING

ROOT = Path(__file__).resolve().parents[2]
if str(ROOT) not in sys.path:  # the experiments folder is not installed: the checkout's (cwm stays the installed one)
    sys.path.append(str(ROOT))
from experiments import real_session  # noqa: E402

REPLIES = Path(__file__).resolve().parents[1] / "data" / "synthesis" / "tic_tac_toe"


def _answer(work: Path, reply: str) -> None:
    (prompt,) = (work / "prompts").iterdir()  # exactly one request waits at a time (concurrency 1)
    (work / "answers").mkdir(exist_ok=True)
    (work / "answers" / prompt.name).write_text((REPLIES / f"{reply}.md").read_text(encoding="utf-8"))
    prompt.unlink()


def test_a_session_waits_for_each_answer_then_records_a_replay_that_reproduces_it(tmp_path, capsys):
    work = tmp_path / "session"
    argv = ["tic_tac_toe", "--work", str(work), "--answered-by", "hand-written test replies"]
    assert real_session.main(argv) == EXIT_WAITING
    first_prompt = next((work / "prompts").iterdir()).read_text()
    assert first_prompt.startswith("## system") and "Tic-tac-toe" in first_prompt
    _answer(work, "01_initial_buggy")
    assert real_session.main(argv) == EXIT_WAITING  # the buggy program fails its checks: a refinement waits
    refine = next((work / "prompts").iterdir()).read_text()
    assert "## Failing tests" in refine and "## The current code" in refine
    _answer(work, "03_refine_correct")
    assert real_session.main(argv) == 0
    assert "recorded and verified" in capsys.readouterr().out
    provenance = json.loads((work / "provenance.json").read_text())
    assert provenance["answered_by"] == "hand-written test replies" and provenance["solved"]
    assert provenance["strategy"] == "tree"  # the library's default
    # carried by an agent (the default) with no prompt hash beside the answers: the copies were not checked
    assert provenance["relay"] == "agent-relay-unchecked" and (provenance["replies"], provenance["prompts_hashed"]) == (2, 0)
    assert provenance["llm_calls"] == 2 and provenance["prompt_hashes"]
    lines = [json.loads(line) for line in (work / "recording.jsonl").read_text().splitlines()]
    assert [line["response"]["model"] for line in lines] == ["hand-written test replies"] * 2
    recorded, replayed = ((work / d / "synthesis" / "best_program.py").read_text() for d in ("recorded", "replayed"))
    assert recorded == replayed == (REPLIES / "03_refine_correct.md").read_text().split("```python\n")[1].split("```")[0]


def test_answers_written_before_their_request_was_made_are_read_on_the_same_call(tmp_path):
    """A session started afresh (another --work, the answers copied over) goes as far as its answers allow
    in one call: the first request is made, its answer found and read, and the next request waits."""
    first = tmp_path / "first"
    argv = ["tic_tac_toe", "--answered-by", "hand-written test replies"]
    assert real_session.main([*argv, "--work", str(first)]) == EXIT_WAITING
    _answer(first, "01_initial_buggy")
    fresh = tmp_path / "fresh"
    (fresh / "answers").mkdir(parents=True)
    for answer in (first / "answers").iterdir():
        (fresh / "answers" / answer.name).write_bytes(answer.read_bytes())
    assert real_session.main([*argv, "--work", str(fresh)]) == EXIT_WAITING
    waiting = [p.read_text() for p in (fresh / "prompts").iterdir() if not (fresh / "answers" / p.name).exists()]
    assert len(waiting) == 1 and "## Failing tests" in waiting[0]  # the refinement, not the first request again


def test_a_closed_deck_session_runs_the_joint_synthesis_and_records_it(tmp_path):
    """``--deck closed``: one joint synthesis (world model and inference from what the players saw), its
    recording replaying to the same program; refused for a game without hidden information."""
    work = tmp_path / "closed"
    argv = ["leduc_poker", "--deck", "closed", "--work", str(work), "--answered-by", "hand-written test replies",
            "--ship-to", str(tmp_path / "sessions")]
    assert real_session.main(argv) == EXIT_WAITING
    replies = REPLIES.parent / "leduc_poker"
    (first,) = (work / "prompts").iterdir()
    assert "What the players saw" in first.read_text() and "def get_initial_state" in first.read_text()
    for reply in ("joint_1_initial", "joint_2_fixed", "joint_3_own_fold"):
        (prompt,) = (work / "prompts").iterdir()
        (work / "answers").mkdir(exist_ok=True)
        (work / "answers" / prompt.name).write_text((replies / f"{reply}.md").read_text(encoding="utf-8"))
        prompt.unlink()
        status = real_session.main(argv)
    assert status == 0
    provenance = json.loads((work / "provenance.json").read_text())
    assert provenance["deck"] == "closed" and list(provenance["stages"]) == ["joint"]
    assert provenance["stages"]["joint"] == {"llm_calls": 3, "solved": True}
    recorded, replayed = ((work / d / "joint" / "best_program.py").read_text() for d in ("recorded", "replayed"))
    assert recorded == replayed and "def resample_history" in recorded
    shipped = tmp_path / "sessions" / "closed" / "leduc_poker.tree.jsonl"  # apart from an open-deck session
    assert shipped.read_bytes() == (work / "recording.jsonl").read_bytes()
    assert real_session.main(["tic_tac_toe", "--deck", "closed", "--work", str(tmp_path / "t"),
                              "--answered-by", "x"]) == 2


def test_strategy_is_recorded_refuses_another_strategys_folder_and_ships_to_a_folder(tmp_path, capsys):
    """``--strategy conversation`` runs every stage as one chat, says so in the provenance, and ``--ship-to``
    copies the verified session under the game and strategy's name; the same --work resumed with the default
    strategy (tree) is refused in one line, with nothing lost."""
    work, shipped = tmp_path / "session", tmp_path / "sessions"
    argv = ["tic_tac_toe", "--work", str(work), "--answered-by", "hand-written test replies",
            "--strategy", "conversation", "--ship-to", str(shipped)]
    assert real_session.main(argv) == EXIT_WAITING
    _answer(work, "01_initial_buggy")
    assert real_session.main(argv) == EXIT_WAITING
    refine = next((work / "prompts").iterdir()).read_text()
    assert "## Failing tests" in refine and "## The current code" not in refine  # a chat: the code is in its history
    capsys.readouterr()
    before = sorted(p.name for p in (work / "run" / "synthesis").iterdir())
    assert real_session.main([*argv[:5]]) == 2  # the default strategy, tree, on the conversation's folder
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1 and "strategy" in err
    assert sorted(p.name for p in (work / "run" / "synthesis").iterdir()) == before
    _answer(work, "03_refine_correct")
    assert real_session.main(argv) == 0
    provenance = json.loads((work / "provenance.json").read_text())
    assert provenance["strategy"] == "conversation" and provenance["llm_calls"] == 2
    assert (shipped / "tic_tac_toe.conversation.jsonl").read_bytes() == (work / "recording.jsonl").read_bytes()
    assert json.loads((shipped / "tic_tac_toe.conversation.provenance.json").read_text()) == provenance


def test_ship_refuses_a_module_game_and_names_ship_to(tmp_path, capsys):
    module = Path(__file__).resolve().parents[1] / "data" / "own_game" / "pocket_duel.py"
    assert real_session.main([f"{module}:pocket_duel", "--work", str(tmp_path / "w"), "--answered-by", "x",
                              "--ship"]) == 2
    assert "--ship-to DIR" in capsys.readouterr().err
    assert not (tmp_path / "w").exists()


def test_a_module_game_inside_the_repository_is_recorded_by_its_path_from_the_root(tmp_path):
    """The provenance's ``game`` of a module game: relative to the repository root when the module lies
    inside it (the resolved name is absolute, and so differs per checkout), else the name as resolved."""
    cairn = ROOT / "experiments" / "heldout" / "cairn.py"
    assert real_session.recorded_game(f"{cairn}:cairn") == "experiments/heldout/cairn.py:cairn"
    elsewhere = f"{tmp_path / 'own.py'}:own"
    assert real_session.recorded_game(elsewhere) == elsewhere
    assert real_session.recorded_game(f"{cairn}:cairn", root=tmp_path) == f"{cairn}:cairn"
    outside = f"{ROOT}/../elsewhere/game.py:game"  # inside by text, outside once ".." is resolved
    assert real_session.recorded_game(outside) == outside
    assert real_session.recorded_game("tic_tac_toe") == "tic_tac_toe"
