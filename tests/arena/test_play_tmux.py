"""`cwm play` through a real terminal: tmux runs it, keys are typed with send-keys, the screen (with its
scrollback) is read with capture-pane; the finished game must be in the folder's results."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
import time
import uuid

import pytest

from cwm.arena import replay as arena_replay

PROMPT = "your move as seat"


class Terminal:
    """One tmux session running a command."""

    def __init__(self, command: str) -> None:
        if shutil.which("tmux") is None:
            pytest.fail("tmux is not installed: apt-get install tmux (.ci/system-packages.sh installs it)")
        self.name = f"cwm-play-{uuid.uuid4().hex[:8]}"
        self._run("new-session", "-d", "-s", self.name, "-x", "160", "-y", "40", command)

    def _run(self, *args: str) -> str:
        return subprocess.run(["tmux", *args], capture_output=True, text=True, check=True).stdout

    def screen(self) -> str:
        return self._run("capture-pane", "-p", "-S", "-", "-t", self.name)

    def wait(self, needle: str, count: int = 1, timeout: float = 60) -> str:
        """The screen once ``needle`` has appeared ``count`` times in it."""
        end = time.monotonic() + timeout
        while time.monotonic() < end:
            text = self.screen()
            if text.count(needle) >= count:
                return text
            time.sleep(0.1)
        raise AssertionError(f"{needle!r} x{count} never appeared; the screen shows:\n{self.screen()}")

    def type(self, keys: str) -> None:
        self._run("send-keys", "-t", self.name, "-l", keys)
        self._run("send-keys", "-t", self.name, "Enter")

    def close(self) -> None:
        subprocess.run(["tmux", "kill-session", "-t", self.name], capture_output=True)


def test_a_person_plays_a_whole_game_against_random_and_it_is_in_the_results(tmp_path):
    out = tmp_path / "play"
    term = Terminal(f"{sys.executable} -m cwm.cli play tic_tac_toe --against random --seat 1 --seed 4 "
                    f"--out {out}; sleep 60")
    try:
        term.wait(PROMPT)
        term.type("banana")
        term.wait("'banana' is not a legal move here; type ? to list them")
        term.type("")
        term.wait("type a move, or ?")
        prompts, moves = 3, []
        while "game over" not in term.screen():
            term.type("?")
            screen = term.wait("legal moves: ", count=len(moves) + 1)
            listed = screen.split("legal moves: ")[-1].splitlines()[0].split()
            moves.append(listed[-1].split(":", 1)[1])
            term.type(moves[-1] if len(moves) % 2 else listed[-1].split(":")[0])  # by name, then by number
            prompts += 2
            deadline = time.monotonic() + 60
            while term.screen().count(PROMPT) < prompts and "game over" not in term.screen():
                assert time.monotonic() < deadline, term.screen()
                time.sleep(0.1)
        final = term.wait("saved as random|human#0")
    finally:
        term.close()
    assert "Traceback" not in final
    (result,) = arena_replay.results_of(out)
    assert result.seats == ("random", "human") and result.forfeit_seat is None
    transcript = arena_replay.load(out, result)
    mine = [s["text"] for s in transcript["steps"] if s["player"] == 1]
    assert mine == moves
    board = {r["agent"]: r for r in json.loads((out / "results.json").read_text())["leaderboard"]}
    assert board["human"]["matches"] == 1 and board["human"]["wins"] + board["human"]["draws"] + \
        board["human"]["losses"] == 1
