"""experiments/direct_llm_figure.py on tic-tac-toe: a session recorded through the batch relay (answers written
as files by a hand-written answerer standing in for the model), shipped to a folder, and replayed offline to
the same matches; the figure's row counts the direct LLM's illegal answers and forfeits from the matches."""

from __future__ import annotations

import hashlib
import importlib
import json
import re
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
TINY = ["--games", "tic_tac_toe", "--matches", "1", "--sims", "20", "--rollouts", "1", "--num-test", "0",
        "--executor", "local:2", "--quiet"]


def script(name: str):
    if str(ROOT) not in sys.path:
        sys.path.append(str(ROOT))
    return importlib.import_module(f"experiments.{name}")


def answer(prompt: str, *, illegal_first: bool) -> str:
    """The first empty cell of the board in a tic-tac-toe move prompt; with ``illegal_first``, the first move
    of a game is answered with an occupied-or-nonsense cell instead, so the agent's rethink is exercised."""
    player = int(re.search(r"You are player (\d)", prompt).group(1))
    if "## This game so far" not in prompt:  # a rethink prompt (a conversation): answer its last user turn
        player = int(re.findall(r"You are player (\d)", prompt)[0])
    moves = prompt.split("## This game so far", 1)[1].split("## Your current observation", 1)[0]
    taken = set(re.findall(r"[xo]\((\d),(\d)\)", moves))
    if illegal_first and "rethink" not in prompt.lower() and "## assistant" not in prompt and not taken:
        return "ACTION: x(7,7)"
    free = next((r, c) for r in "012" for c in "012" if (r, c) not in taken)
    return f"I take a free cell.\nACTION: {'xo'[player]}({free[0]},{free[1]})"


def relay(work: Path, *, illegal_first: bool) -> int:
    """Writes an answer (and the relay's hash of the prompt it read) for every waiting prompt; how many."""
    answers = work / "answers"
    answers.mkdir(exist_ok=True)
    written = 0
    for prompt in sorted((work / "prompts").glob("*.md")):
        if (answers / prompt.name).exists():
            continue
        text = prompt.read_text(encoding="utf-8")
        (answers / prompt.name).write_text(answer(text, illegal_first=illegal_first), encoding="utf-8")
        (answers / f"{prompt.name[:-3]}.sha256").write_text(hashlib.sha256(text.encode()).hexdigest() + "\n")
        written += 1
    return written


def test_a_direct_llm_session_records_ships_and_replays_offline(tmp_path: Path) -> None:
    figure = script("direct_llm_figure")
    work, sessions = tmp_path / "work", tmp_path / "sessions"
    argv = [*TINY, "--work", str(work), "--answered-by", "first-free-cell (hand-written for a test)",
            "--sessions", str(sessions)]
    rounds = 0
    while (status := figure.main(argv)) == 3:
        assert relay(work, illegal_first=True) > 0
        rounds += 1
        assert rounds < 15
    assert status == 0 and rounds >= 3
    recorded = json.loads((work / "direct_llm.json").read_text())["rows"][0]
    assert recorded["matches"] == 2 and recorded["llm_moves_asked"] >= 4
    assert recorded["llm_illegal_per_move"] > 0 and recorded["llm_forfeit_rate"] == 0.0  # the rethink worked
    assert recorded["llm_calls_per_game"] > recorded["llm_moves_asked"] / 2  # retries are calls too
    assert recorded["cwm_calls_in_play"] == 0 and recorded["cwm_synthesis_calls"] >= 1

    assert figure.main([*argv, "--ship", "--relay-by", "person"]) == 0
    provenance = json.loads((sessions / "tic_tac_toe" / "provenance.json").read_text())
    assert provenance["answered_by"].startswith("first-free-cell") and provenance["relay"] == "relay-hashed"
    assert "may have answered several" in provenance["note"]
    assert figure.main([*argv, "--ship", "--fresh-instances"]) == 0  # the default relay: an agent
    provenance = json.loads((sessions / "tic_tac_toe" / "provenance.json").read_text())
    assert provenance["relay"] == "agent-relay-hashed" and "fresh instance" in provenance["note"]
    assert provenance["bundle_fingerprint"] == recorded["bundle_fingerprint"]

    out = tmp_path / "replay"
    assert figure.main([*TINY, "--sessions", str(sessions), "--out", str(out)]) == 0  # offline: no --work
    replayed = json.loads((out / "direct_llm.json").read_text())["rows"][0]
    same = ("matches", "win_rate", "draw_rate", "loss_rate", "llm_moves_asked", "llm_illegal_per_move",
            "llm_calls_per_game", "bundle_fingerprint")
    assert {k: replayed[k] for k in same} == {k: recorded[k] for k in same}
    assert "| tic_tac_toe | 2 |" in (out / "direct_llm.md").read_text()
    # a session recorded against another bundle is refused before anything is played, not left waiting
    provenance["bundle_fingerprint"] = "cwm bundle-sha256:" + "0" * 64
    (sessions / "tic_tac_toe" / "provenance.json").write_text(json.dumps(provenance))
    assert figure.main([*TINY, "--sessions", str(sessions), "--out", str(tmp_path / "other")]) == 2


def test_a_game_without_a_shipped_session_is_a_row_saying_so(tmp_path: Path) -> None:
    figure = script("direct_llm_figure")
    out = tmp_path / "replay"
    assert figure.main([*TINY, "--sessions", str(tmp_path / "none"), "--out", str(out)]) == 0
    row = json.loads((out / "direct_llm.json").read_text())["rows"][0]
    assert row["game"] == "tic_tac_toe" and "no recorded session" in row["status"]
