"""The layers behind the static gate, in planning workers: the ungated sleepers (tests/data/sleepers/ungated)
reach os and sys with the gate off and, at the game's third move, read the API keys, write files, connect
to 127.0.0.1, fork and exec, sleep in a blocking call, kill the zygote, kill themselves, close their answer
pipe, forge their own answer. Each plays in a WorkerAgent whose sandbox skips the gate, in both isolation
modes, from a process that holds the sentinel secrets in its environment since it started
(tests/security/ungated_match.py); the scrubbed environment, the audit hook, seccomp and (in bwrap) the
namespaces must hold, each match must end with the forfeit its header names within its time bound, and the
sandbox must then still play a clean match.
"""

from __future__ import annotations

import dataclasses
import json
import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from cwm.sandbox import bwrap_available

from .harness import CLI_START_S, MOVE_LIMIT, SENTINELS, Listener, leaked_into, markers, match_bound
from .programs import UNGATED, Program, programs

DRIVER = Path(__file__).resolve().parent / "ungated_match.py"
PROGRAMS = programs(UNGATED)
MODES = ("process", "bwrap")
BOUND_S = CLI_START_S + sum(match_bound(9) for _ in PROGRAMS)  # one driver's time, its matches one by one


def test_every_brief_route_has_an_ungated_sleeper() -> None:
    names = {p.name for p in PROGRAMS}
    assert {"env_secrets", "proc_environ", "write_outside", "socket_connect", "spawn", "sleep_blocking",
            "kill_parent"} <= names
    assert all({"sleeper", "trigger", "ungated"} <= set(p.header) for p in PROGRAMS)


@dataclasses.dataclass
class Drivers:
    """The driver processes of the isolation modes (mode -> its working directory, which holds its stdout and
    stderr files, and the process), and the marker files there were before they started."""

    before: set[str]
    started: dict[str, tuple[Path, subprocess.Popen[bytes]]]


@pytest.fixture(scope="module")
def drivers(tmp_path_factory: pytest.TempPathFactory, listener: Listener) -> Iterator[Drivers]:
    """One driver process per isolation mode playing every ungated sleeper, all started at once (each spends
    ten seconds on the sleeper the zygote's asleep rule ends, and they spend them side by side); the listener
    is up before any starts."""
    found = Drivers(markers(), {})
    for mode in MODES if bwrap_available() else ("process",):
        cwd = tmp_path_factory.mktemp(f"ungated-{mode}")
        with open(cwd / "stdout", "wb") as out, open(cwd / "stderr", "wb") as err:
            found.started[mode] = cwd, subprocess.Popen(
                [sys.executable, str(DRIVER), "--isolation", mode, "--move-limit", str(MOVE_LIMIT),
                 *[p.name for p in PROGRAMS]], cwd=cwd, env=dict(os.environ, **SENTINELS), stdout=out, stderr=err)
    try:
        yield found
    finally:
        for _, process in found.started.values():
            if process.poll() is None:
                process.kill()
                process.wait()


@pytest.fixture(scope="module", params=MODES)
def played(request: pytest.FixtureRequest, listener: Listener,
           drivers: Drivers) -> Iterator[tuple[str, dict[str, dict], subprocess.CompletedProcess[str]]]:
    """One isolation mode's driver once it has ended: (mode, rows by name, process)."""
    mode = request.param
    if mode not in drivers.started:
        pytest.fail("bubblewrap (bwrap) is not usable here; install it (`apt-get install bubblewrap`)")
    cwd, process = drivers.started[mode]
    code = process.wait(timeout=BOUND_S)
    done = subprocess.CompletedProcess(process.args, code, *(
        (cwd / name).read_text(encoding="utf-8", errors="replace") for name in ("stdout", "stderr")))
    assert done.returncode == 0, done.stderr[-3000:]
    rows = {row["name"]: row for row in map(json.loads, done.stdout.splitlines())}
    assert markers(cwd) - drivers.before == set(), "an ungated sleeper wrote outside its sandbox"
    assert not listener.peers, f"the listener on 127.0.0.1 was reached: {listener.peers}"
    yield mode, rows, done


def test_the_sandbox_still_plays_a_clean_match_afterwards(played) -> None:
    mode, rows, done = played
    control = rows["control"]
    assert control["mode"] == mode and control["forfeit_seat"] is None and control["moves"] >= 5, control
    assert control["restarts"] == 0, "a sleeper cost the sandbox its zygote"
    assert not leaked_into(done.stdout + done.stderr)


@pytest.mark.parametrize("program", PROGRAMS, ids=[p.name for p in PROGRAMS])
def test_an_ungated_sleeper_is_contained(played, program: Program) -> None:
    mode, rows, _ = played
    row = rows[program.name]
    kind, text = program.expect("ungated", mode)
    assert (row["forfeit_seat"], row["kind"]) == (0, kind), row
    assert text in row["reason"], row["reason"]
    assert row["moves"] == 2, "the sleeper attacks at its second move, the game's third"
    assert row["seconds"] <= match_bound(row["moves"]), row
    assert not leaked_into(row["reason"])
