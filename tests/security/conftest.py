"""Fixtures of the hostile-model suite: the sentinel secrets in the environment, the 127.0.0.1 listener, and
a pipeline folder per sleeper.

What the suite promises for every sleeper (tests/data/sleepers, its value/ and ungated/ folders) and every
stage it goes through (`cwm check`, ``export_bundle`` and `cwm export`, ``load_bundle``, ``bundle_move`` and
`cwm inspect`, `cwm arena` on the process pool and ``--executor inline``, `cwm run` on a recorded session
whose reply is the sleeper; planning workers with the gate off for ungated/), and for every resume of those
commands:

- no file named ``cwm-sleeper-*`` (every file a sleeper tries to write) appears in /tmp, the repository, the
  home directory, the working directory or the run directory;
- no sentinel secret (``GEMINI_API_KEY=cwm-test-sentinel-...``, and the same for ``GOOGLE_API_KEY``,
  ``OPENAI_API_KEY``, ``AWS_SECRET_ACCESS_KEY``, all set in the environment of every command) appears in its
  output or in any file of the run directory;
- the listener on 127.0.0.1:47613 (the port the sleepers that open sockets use) receives no connection;
- each match ends within ``MATCH_START_S`` (10 s) plus ``MOVE_LIMIT + MOVE_SLACK_S`` (0.2 s + 10 s) per move
  of the sleeper's seat, and each command within ``CLI_START_S`` (30 s) plus that bound for each of its
  matches (tests/security/harness.py);
- every tournament ends with exit status 0 and every match recorded, the sleeper's forfeits naming their
  kind and reason as its header says; a resume of the same command replays nothing;
- every refusal is exit status 2 with one line naming the reason, and nothing crashes (no traceback).

The full matrix runs for a few representative sleepers (``REPRESENTATIVE``) through real `cwm` processes by
default; the others run it through ``cwm.cli.main`` in this process and are marked slow (``-m "not slow"``
leaves them out of a quick run). A stage a sleeper's header marks ``xfail: STAGE: why`` is an expected
failure naming a library bug.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from cwm.agents.specs import load_cwm_sources

from .harness import SENTINELS, Cli, Listener
from .programs import LISTEN_PORT, SLEEPERS, Program, read
from .stages import Pipeline


@pytest.fixture(scope="session")
def listener() -> Iterator[Listener]:
    try:
        server = Listener()
    except OSError as e:
        pytest.fail(f"the suite listens on 127.0.0.1:{LISTEN_PORT}, where the sleepers try to connect, and cannot "
                    f"bind it ({e}); free the port")
    yield server
    server.close()


@pytest.fixture(autouse=True)
def sentinel_secrets(monkeypatch: pytest.MonkeyPatch) -> None:
    """The sentinel secrets in this process's environment (what in-process stages and pool workers see)."""
    for name, value in SENTINELS.items():
        monkeypatch.setenv(name, value)


# The sleepers whose whole matrix runs by default, through real `cwm` processes: a spin (timeout), a C stack
# overflow (crash), an error text with escapes (exception), a move the real game refuses (illegal), a sleeper
# that wakes in the load check, and one the gate refuses.
REPRESENTATIVE = frozenset({"spin_apply_action", "c_stack_overflow", "exception_escapes", "occupied_squares",
                            "spin_initial_state", "env_random_os"})


@pytest.fixture(scope="session")
def bundles(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return tmp_path_factory.mktemp("sleeper-bundles")


@pytest.fixture
def pipeline_of(tmp_path: Path, listener: Listener, bundles: Path,
                capfd: pytest.CaptureFixture[str]) -> Callable[[str], Pipeline]:
    """``pipeline_of(name)``: the pipeline folder of the model sleeper ``name`` (commands in this process)."""

    def make(name: str) -> Pipeline:
        return Pipeline(read(SLEEPERS / f"{name}.py"), tmp_path, Cli(subprocess_=False, capfd=capfd), listener,
                        bundles)

    return make


@pytest.fixture
def pipeline(program: Program, tmp_path: Path, listener: Listener, bundles: Path,
             capfd: pytest.CaptureFixture[str]) -> Pipeline:
    """The sleeper's pipeline folder; its commands run as real processes for the representative sleepers."""
    load_cwm_sources.cache_clear()  # every stage verifies the bundle itself (a pool worker forks this cache)
    return Pipeline(program, tmp_path, Cli(subprocess_=program.name in REPRESENTATIVE, capfd=capfd), listener,
                    bundles)
