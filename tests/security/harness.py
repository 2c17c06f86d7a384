"""What the hostile-model suite watches around every stage: files a sleeper might write, secrets it might
leak, connections it might open, and time; and how it runs `cwm` (a real subprocess, or ``cwm.cli.main``
in this process).

Bounds (docs: tests/security/conftest.py): a stage's command ends within ``CLI_START_S`` plus, for each
match it plays, ``MATCH_START_S`` and ``(MOVE_LIMIT + MOVE_SLACK_S)`` per move of the sleeper's seat.
"""

from __future__ import annotations

import contextlib
import dataclasses
import glob
import json
import os
import secrets
import socket
import subprocess
import sys
import threading
from collections.abc import Iterator
from pathlib import Path

from cwm.sandbox.watch import tree_cpu

from .programs import LISTEN_PORT, MARKER_GLOB

REPO = Path(__file__).resolve().parents[2]
MOVE_LIMIT = 0.2  # CPU seconds per move (--move-time-limit) in every arena stage: a timeout sleeper spins this
# long (and the zygote's margin) at each forfeit, while the clean seats' 50-simulation moves stay far below it
MOVE_SLACK_S = 10.0  # what a move may take beyond the limit before the suite calls it a hang (the bound)
MATCH_START_S = 10.0  # a match's fixed cost: building the agents (a bundle's load check), the worker's start
CLI_START_S = 30.0  # a command's fixed cost: the interpreter, imports, zygotes, reports
SENTINELS = {name: f"cwm-test-sentinel-{name.lower()}-{secrets.token_hex(6)}"
             for name in ("GEMINI_API_KEY", "GOOGLE_API_KEY", "OPENAI_API_KEY", "AWS_SECRET_ACCESS_KEY")}
SEARCH_ARGS = ["--sims", "50", "--rollouts", "1", "--move-time-limit", str(MOVE_LIMIT)]


def match_bound(moves: int) -> float:
    """CPU seconds a match of ``moves`` moves may use: its start, and the limit and slack per move of the sleeper."""
    return MATCH_START_S + (moves // 2 + 1) * (MOVE_LIMIT + MOVE_SLACK_S)


def command_bound(matches: int, max_moves: int = 9) -> float:
    """CPU seconds a command that plays ``matches`` matches may use (they may run one after another)."""
    return CLI_START_S + matches * match_bound(max_moves)


# What the harness's own self-test sends on the connections it opens on purpose (test_harness.py): another
# test session on the machine, listening on the same shared port, may take one, and must not count it.
SELF_TEST_TAG = b"cwm-harness-self-test:"


def self_test_tag() -> bytes:
    """The tag of this session's self-test connections (its listener counts them; others ignore them)."""
    return SELF_TEST_TAG + str(os.getpid()).encode()


class Listener:
    """A TCP listener on 127.0.0.1:``LISTEN_PORT`` that records every connection it accepts (the port is
    shared, ``SO_REUSEPORT``, so two test sessions on one machine can both listen: a connection reaches one).
    A connection that announces another session's self-test (``SELF_TEST_TAG``) is not recorded; any other
    connection is, whatever it sends."""

    def __init__(self) -> None:
        self.peers: list[tuple[str, int]] = []
        self.sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        self.sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        self.sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEPORT, 1)
        self.sock.bind(("127.0.0.1", LISTEN_PORT))
        self.sock.listen(16)
        self.sock.settimeout(0.2)
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._accept, daemon=True)
        self._thread.start()

    def _accept(self) -> None:
        while not self._stop.is_set():
            try:
                conn, peer = self.sock.accept()
            except (TimeoutError, OSError):
                continue
            if not _another_sessions_self_test(conn):
                self.peers.append(peer)
            conn.close()

    def close(self) -> None:
        self._stop.set()
        self._thread.join(2)
        self.sock.close()


def _another_sessions_self_test(conn: socket.socket) -> bool:
    conn.settimeout(0.5)
    try:
        data = conn.recv(64)
    except OSError:  # sent nothing (a sleeper need not): counted
        return False
    return data.startswith(SELF_TEST_TAG) and data != self_test_tag()


def markers(*run_dirs: Path) -> set[str]:
    """Every marker file (``cwm-sleeper-*``) a sleeper may have written: in /tmp, the repository's top, the
    home directory, the current directory, and anywhere under ``run_dirs``."""
    found: set[str] = set()
    for place in (Path("/tmp"), REPO, Path.home(), Path.cwd()):
        found |= set(glob.glob(os.path.join(place, MARKER_GLOB)))
    for folder in run_dirs:
        found |= {str(p) for p in folder.rglob(MARKER_GLOB)}
    return found


def leaked_into(text: str) -> list[str]:
    """The sentinel secrets that appear in ``text``."""
    return [name for name, value in SENTINELS.items() if value in text]


def leaked_files(folder: Path) -> list[str]:
    """Files under ``folder`` that hold a sentinel secret."""
    values = [v.encode() for v in SENTINELS.values()]
    return [str(p) for p in folder.rglob("*") if p.is_file() and any(v in p.read_bytes() for v in values)]


@dataclasses.dataclass(frozen=True)
class Ran:
    """One command's exit status, output and CPU time (``seconds``: of the command's process and every
    process it waited for, so the same on an idle and a loaded machine)."""

    args: tuple[str, ...]
    rc: int
    out: str
    err: str
    seconds: float


def cpu_seconds() -> float:
    """CPU seconds (user and system) of this process and its descendants: the live ones and the ended ones
    reaped (``cwm.sandbox.watch.tree_cpu``). Unlike this process's rusage alone, the difference of two
    readings is unmoved by a child of earlier work that is reaped in between (an idle sandbox's zygote
    holding the CPU of every job it ran, reaped when its pool closes or when the next ``subprocess.Popen``
    collects abandoned children, at a moment that depends on the machine's load): it was counted while it
    lived, and is counted the same once reaped."""
    return tree_cpu()


class Cli:
    """Runs `cwm` with the sentinel secrets in its environment.

    Args:
      subprocess_: a real `python -m cwm.cli` process (its environment holds the secrets from its start),
        else ``cwm.cli.main`` in this process (the secrets set with ``monkeypatch``, output read with
        ``capfd``, the working directory changed for the call).
      capfd: pytest's fd-level capture (in-process runs).
    """

    def __init__(self, *, subprocess_: bool, capfd: object | None = None):
        self.subprocess_ = subprocess_
        self.capfd = capfd

    def __call__(self, args: list[str], *, cwd: Path, timeout_s: float) -> Ran:
        """Runs one command; ``timeout_s`` is only a wall-clock backstop (the bound is on CPU time)."""
        start = cpu_seconds()
        if self.subprocess_:
            env = dict(os.environ, **SENTINELS)
            done = subprocess.run([sys.executable, "-m", "cwm.cli", *args], cwd=cwd, env=env, capture_output=True,
                                  text=True, errors="replace", timeout=timeout_s)
            return Ran(tuple(args), done.returncode, done.stdout, done.stderr, cpu_seconds() - start)
        from cwm.cli import main

        self.capfd.readouterr()  # type: ignore[attr-defined]
        with _chdir(cwd):
            rc = main(args)
        captured = self.capfd.readouterr()  # type: ignore[attr-defined]
        return Ran(tuple(args), rc, captured.out, captured.err, cpu_seconds() - start)


@contextlib.contextmanager
def _chdir(path: Path) -> Iterator[None]:
    before = os.getcwd()
    os.chdir(path)
    try:
        yield
    finally:
        os.chdir(before)


def read_matches(path: Path) -> list[dict]:
    """The rows of a ``matches.jsonl``."""
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]
