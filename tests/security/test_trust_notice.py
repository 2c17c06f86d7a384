"""In-process means trusted: each way of running model code in the caller's process (`--trust`,
`--no-sandbox`, ``load_bundle(trusted=True)``) says so in one line on stderr, exactly once per command (also
when pool workers load the model again), and the sandboxed commands never say it. (`--trust-game-module`
says it too: tests/bundle/test_bundle_game.py.)"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from cwm import bundle
from cwm.games import trajectories
from cwm.sandbox.load import TRUST_NOTICE

from .harness import REPO
from .programs import REFERENCE
from .stages import FIXTURE_MODEL, GAME, TRAIN

ARENA = ["arena", GAME, "--matches", "2", "--sims", "10", "--rollouts", "1", "--no-progress"]


def run(args: list[str], cwd: Path) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "PYTHONPATH": str(REPO)}
    return subprocess.run([sys.executable, *args], cwd=cwd, env=env, capture_output=True, text=True, timeout=600)


def notices(ran: subprocess.CompletedProcess[str]) -> int:
    """How many lines of stderr are the notice (each a whole line)."""
    assert ran.returncode == 0, ran.stderr[-3000:]
    return sum(line == TRUST_NOTICE for line in ran.stderr.splitlines())


@pytest.fixture
def folder(tmp_path: Path) -> Path:
    (tmp_path / "model.py").write_text(REFERENCE, encoding="utf-8")
    trajectories.save(tmp_path / "train.jsonl", TRAIN)
    return tmp_path


def test_the_notice_says_what_it_must() -> None:
    assert "\n" not in TRUST_NOTICE and "privileges" in TRUST_NOTICE and "not a sandbox" in TRUST_NOTICE
    assert all(flag in TRUST_NOTICE for flag in ("--trust", "--no-sandbox", "--trust-game-module", "trusted=True"))


@pytest.mark.parametrize(("args", "expected"), [
    (["check", "model.py", "--game", GAME, "--trajectories", "train.jsonl", "--no-sandbox"], 1),
    (["check", "model.py", "--game", GAME, "--trajectories", "train.jsonl"], 0),
    ([*ARENA, "--agents", "m=cwm:model.py,random", "--trust", "--out", "trusted"], 1),
    ([*ARENA, "--agents", "m=cwm:model.py,random", "--out", "contained"], 0),
], ids=["check-no-sandbox", "check-sandboxed", "arena-trust", "arena-contained"])
def test_each_command_says_it_once_when_trusted(args: list[str], expected: int, folder: Path) -> None:
    assert notices(run(["-m", "cwm.cli", *args], folder)) == expected


def test_load_bundle_trusted_says_it_once(folder: Path) -> None:
    path = bundle.export_bundle(folder / "bundle", game=GAME, model_source=REFERENCE, train=TRAIN,
                                provenance={"llm": FIXTURE_MODEL})
    code = ("import sys\nfrom cwm.bundle import load_bundle\n"
            "for trusted in (False, True, True):\n    load_bundle(sys.argv[1], trusted=trusted)\n")
    assert notices(run(["-c", code, str(path)], folder)) == 1
    contained = "import sys\nfrom cwm.bundle import load_bundle\nload_bundle(sys.argv[1])\n"
    assert notices(run(["-c", contained, str(path)], folder)) == 0
