"""The suite's own watch can fail: each promise it checks around a stage (no marker file, no secret in the
output or the run directory, no connection, the time bound, no traceback) is broken here on purpose."""

from __future__ import annotations

import socket
import time
from collections.abc import Callable
from pathlib import Path

import pytest

from .harness import SENTINELS, Ran, self_test_tag
from .programs import LISTEN_PORT
from .stages import Pipeline

QUIET = Ran(("check",), 0, "235/235 checks passed", "", 0.1)


def _connect(peers: list) -> None:
    for _ in range(20):  # another session listening on the shared port may take a connection
        with socket.create_connection(("127.0.0.1", LISTEN_PORT), timeout=2) as conn:
            conn.sendall(self_test_tag())
        time.sleep(0.3)  # the listener's thread accepts it
        if peers:
            return


BREACHES: dict[str, tuple[Callable[[Pipeline], Ran], str]] = {
    "marker": (lambda p: (Path("/tmp/cwm-sleeper-harness-probe").write_text("x"), QUIET)[1], "wrote outside"),
    "marker-in-run": (lambda p: ((p.root / "sub").mkdir(), (p.root / "sub" / "cwm-sleeper-x").write_text("x"),
                                 QUIET)[2], "wrote outside"),
    "connection": (lambda p: (_connect(p.listener.peers), QUIET)[1], "listener on 127.0.0.1 was reached"),
    "secret-out": (lambda p: Ran(("arena",), 0, SENTINELS["OPENAI_API_KEY"], "", 0.1), "a secret reached the output"),
    "secret-file": (lambda p: ((p.root / "leak.txt").write_text(SENTINELS["GEMINI_API_KEY"]), QUIET)[1],
                    "a secret reached a file"),
    "slow": (lambda p: Ran(("run",), 0, "", "", 999.0), "over its bound"),
    "traceback": (lambda p: Ran(("run",), 1, "", "Traceback (most recent call last):", 0.1), "crashed"),
}


@pytest.mark.parametrize("breach", sorted(BREACHES))
def test_a_broken_promise_fails_the_stage(breach: str, pipeline_of, listener) -> None:
    pipeline = pipeline_of("spin_apply_action")
    make, message = BREACHES[breach]
    try:
        with pytest.raises(AssertionError, match=message):
            pipeline.contained(make(pipeline), bound_s=30.0)
    finally:
        Path("/tmp/cwm-sleeper-harness-probe").unlink(missing_ok=True)
        listener.peers.clear()


def test_another_sessions_self_test_connection_is_not_a_breach(listener):
    """Test sessions running at once share the port: one's self-test connections reach the others'."""
    before = list(listener.peers)
    for _ in range(5):
        with socket.create_connection(("127.0.0.1", LISTEN_PORT), timeout=2) as conn:
            conn.sendall(b"cwm-harness-self-test:1")  # pid 1 runs no test session
    time.sleep(3)  # each accepted connection is read for up to 0.5 s
    assert listener.peers == before
