"""A tournament killed (SIGKILL) while a sleeper's worker spins: the matches already recorded are kept, the
resume plays the rest once each, and nothing of the killed run keeps running."""

from __future__ import annotations

import contextlib
import json
import os
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from cwm import bundle

from .harness import SEARCH_ARGS, SENTINELS, leaked_files, read_matches
from .programs import SLEEPERS, read
from .stages import GAME, TRAIN

MATCHES = 4  # per seat order: 8 matches, about 1 s each on two workers


def _processes_naming(text: str) -> list[int]:
    """Live processes whose command line holds ``text`` (zombies excluded)."""
    found = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            cmdline = (entry / "cmdline").read_bytes().replace(b"\0", b" ").decode(errors="replace")
            state = (entry / "stat").read_text().rsplit(")", 1)[1].split()[0]
        except OSError:
            continue
        if text in cmdline and state != "Z":
            found.append(int(entry.name))
    return found


@pytest.fixture(scope="module")
def killed(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[list[str], Path, list[str], list[int]]]:
    """A `cwm arena` on the process pool, killed once its first match is recorded: (its command, its out
    folder, the lines recorded before the kill, the processes of the run still alive 5 s after it)."""
    root = tmp_path_factory.mktemp("killed")
    program = read(SLEEPERS / "spin_apply_action.py")
    path = bundle.export_bundle(root / "bundle", game=GAME, model_source=program.source, train=TRAIN)
    out = root / "arena"
    args = [sys.executable, "-m", "cwm.cli", "arena", "tic_tac_toe", "--agents", f"random,sleeper=cwm:{path}",
            "--matches", str(MATCHES), *SEARCH_ARGS, "--executor", "local:2", "--out", str(out), "--no-progress"]
    env = dict(os.environ, **SENTINELS)
    run = subprocess.Popen(args, cwd=root, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline and not ((out / "matches.jsonl").is_file() and
                                               (out / "matches.jsonl").read_text().count("\n") >= 1):
        time.sleep(0.05)
    run.send_signal(signal.SIGKILL)
    run.wait()
    before = (out / "matches.jsonl").read_text(encoding="utf-8").splitlines()
    time.sleep(5)
    alive = _processes_naming(str(out))
    yield args, out, before, alive
    for pid in alive:  # the killed run's own pool workers (their zygotes die with them)
        with contextlib.suppress(ProcessLookupError):
            os.kill(pid, signal.SIGKILL)


def test_a_killed_tournament_resumes_without_losing_or_repeating_a_match(killed) -> None:
    args, out, before, _ = killed
    assert 1 <= len(before) < 2 * MATCHES, "the run was not killed in the middle"
    done = subprocess.run(args, cwd=out.parent, env=dict(os.environ, **SENTINELS), capture_output=True, text=True,
                          timeout=300)
    assert done.returncode == 0 and "Traceback" not in done.stderr, done.stderr[-3000:]
    rows = read_matches(out / "matches.jsonl")
    lines = (out / "matches.jsonl").read_text(encoding="utf-8").splitlines()
    assert lines[:len(before)] == before, "the resume rewrote matches recorded before the kill"
    assert len(rows) == 2 * MATCHES and len({r["key"] for r in rows}) == 2 * MATCHES
    assert all(r["forfeit_kind"] == "timeout" and r["seats"][r["forfeit_seat"]] == "sleeper" for r in rows)
    assert not leaked_files(out)
    assert json.loads((out / "results.json").read_text())["rows"]


def test_nothing_of_a_killed_tournament_keeps_running(killed) -> None:
    _, _, _, alive = killed
    assert alive == [], f"processes of the killed run still alive 5 s later: {alive}"
