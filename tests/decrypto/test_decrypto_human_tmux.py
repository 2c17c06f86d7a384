"""Hot-seat play through a real terminal: tmux runs `cwm decrypto play`, keys are typed with send-keys and the
screen is read with capture-pane. Private views must be on screen only for their player."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
import time
import uuid

import pytest

from cwm.decrypto import Game


def _tmux(*args: str) -> str:
    return subprocess.run(["tmux", *args], capture_output=True, text=True, check=True).stdout


class Screen:
    def __init__(self, command: str) -> None:
        self.name = f"decrypto-{uuid.uuid4().hex[:8]}"
        _tmux("new-session", "-d", "-s", self.name, "-x", "200", "-y", "50", command)

    def text(self) -> str:
        return _tmux("capture-pane", "-p", "-t", self.name)

    def wait_for(self, needle: str, timeout: float = 60) -> str:
        end = time.monotonic() + timeout
        while time.monotonic() < end:
            text = self.text()
            if needle in text:
                return text
            time.sleep(0.1)
        raise AssertionError(f"{needle!r} never appeared; the screen shows:\n{self.text()}")

    def type(self, keys: str) -> None:
        _tmux("send-keys", "-t", self.name, "-l", keys)
        _tmux("send-keys", "-t", self.name, "Enter")

    def close(self) -> None:
        subprocess.run(["tmux", "kill-session", "-t", self.name], capture_output=True)


@pytest.fixture
def tmux_required():
    if shutil.which("tmux") is None:
        pytest.fail("tmux is not installed: apt-get install tmux (.ci/system-packages.sh installs it)")


def test_hot_seat_alice_with_hidden_views_and_validated_input(tmp_path, tmux_required):
    seed = 3
    keywords = Game.new(seed).keywords
    transcript = tmp_path / "games.jsonl"
    screen = Screen(f"{sys.executable} -m cwm.cli decrypto play --alice human --bob embed --eve embed "
                    f"--seed {seed} --out {transcript}; sleep 30")
    try:
        first = screen.wait_for("Pass the keyboard to ALICE")
        assert "secret keywords" not in first and f"1. {keywords[0]}" not in first
        screen.type("")
        private = screen.wait_for("Give one hint per digit")
        assert all(f"{i}. {w}" in private for i, w in enumerate(keywords, start=1))
        screen.type("alpha | beta")
        screen.wait_for("Not accepted: give exactly 3 hints")
        screen.type(f"{keywords[0]}s | beta | gamma")
        screen.wait_for(f"contains the keyword '{keywords[0]}'")
        screen.type("alpha | beta | gamma")
        after = screen.wait_for("Thank you. Press Enter")
        assert "secret keywords" not in after and f"1. {keywords[0]}" not in after  # the screen was cleared
        turns = _play_out(screen)
        assert turns >= 2
    finally:
        screen.close()
    [line] = transcript.read_text().splitlines()
    episode = json.loads(line)
    assert episode["keywords"] == list(keywords) and episode["players"]["alice"] == "human"
    assert episode["turns"][0]["hints"] == ["alpha", "beta", "gamma"]
    outcomes = [a["outcome"] for a in episode["attempts"] if a["turn"] == 1]
    assert outcomes == ["invalid", "invalid", "ok"]


def test_hot_seat_eve_never_sees_the_keywords(tmp_path, tmux_required):
    keywords = Game.new(5).keywords
    screen = Screen(f"{sys.executable} -m cwm.cli decrypto play --alice embed --bob embed --eve human --seed 5 "
                    f"--out {tmp_path / 'g.jsonl'}; sleep 30")
    try:
        screen.wait_for("Pass the keyboard to EVE")
        screen.type("")
        screen.wait_for("Your guess (like 3-1-4)")
        screen.type("1-1-2")
        screen.wait_for("Not accepted: a code's digits are distinct")
        _play_out(screen, forbidden=("secret keywords", *(f"{i}. {w}" for i, w in enumerate(keywords, 1))))
    finally:
        screen.close()
    episode = json.loads((tmp_path / "g.jsonl").read_text())
    assert episode["players"]["eve"] == "human" and episode["turns"][0]["eve_guess"] == [4, 3, 2]


def _play_out(screen: Screen, timeout: float = 120, forbidden: tuple[str, ...] = ()) -> int:
    """Answers every prompt until the game is over; returns the turns revealed. After each answer it waits
    for the screen to change, since two turns' hand-over screens look alike."""
    revealed, end = 0, time.monotonic() + timeout
    while time.monotonic() < end:
        text = screen.text()
        if "Game over" in text:
            screen.wait_for("transcript appended")
            return revealed
        assert not any(f in text for f in forbidden), text
        if "Give one hint per digit" in text:
            screen.type("alpha | beta | gamma")
        elif "Your guess" in text:
            screen.type("4-3-2")
        elif "revealed:" in text:
            revealed += 1
            screen.type("")
        elif "press enter" in text.lower():
            screen.type("")
        else:  # still drawing
            time.sleep(0.05)
            continue
        while screen.text() == text and time.monotonic() < end:
            time.sleep(0.05)
    raise AssertionError(f"the game did not end; the screen shows:\n{screen.text()}")
