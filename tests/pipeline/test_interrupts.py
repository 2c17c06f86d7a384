"""`cwm run` interrupted, repeated and oversized: Ctrl-C in the arena ends the run in one line with every
finished match kept (and the same command resumes), a second writer of the run directory is refused with
the holder's pid, and a run projected over the threshold needs --yes also from a script.

The commands run as subprocesses in their own process group, as a terminal's Ctrl-C reaches a command and
its workers. Waits are bounded only by generous backstops (the machine may be busy), never timed.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from cwm.arena.lock import writer_lock
from cwm.pipeline import stages as pipeline

BACKSTOP_S = 300.0  # a wall-clock guard against a hang, far above what any step takes even under load
INTERRUPTED = "cwm run: interrupted; finished work is saved where the command writes it"
RUN = ["run", "tic_tac_toe", "--num-test", "4", "--matches", "10", "--sims", "300", "--executor", "local:2",
       "--quiet", "--no-twins", "--ppo-steps", "0"]  # the twin and PPO stages: tests/pipeline/test_run_twins.py


def _env() -> dict[str, str]:
    """This environment without LLM keys (a developer's key must not make a paid run), importing this cwm."""
    env = {k: v for k, v in os.environ.items() if k not in pipeline.API_KEY_VARS}
    env["PYTHONPATH"] = os.pathsep.join(p for p in [str(Path(__file__).resolve().parents[2]),
                                                    env.get("PYTHONPATH", "")] if p)
    return env


def _interruptible() -> None:
    """In the child before it runs cwm: Ctrl-C's default action, as a terminal gives it. A test run started in
    the background by a non-interactive shell (``pytest &``, some CI runners) ignores SIGINT, every child
    inherits that, and Python then installs no KeyboardInterrupt handler."""
    signal.signal(signal.SIGINT, signal.SIG_DFL)


def _start(args: list[str], out: Path) -> subprocess.Popen[str]:
    return subprocess.Popen([sys.executable, "-m", "cwm.cli", *args, "--out", str(out)], env=_env(), text=True,
                            stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                            start_new_session=True,  # its own group: the SIGINT below reaches it and its workers
                            preexec_fn=_interruptible)


def _rows(path: Path) -> list[str]:
    """The whole lines of a matches.jsonl (a line being written is not one yet)."""
    if not path.is_file():
        return []
    return [line for line in path.read_text(encoding="utf-8").splitlines(keepends=True) if line.endswith("\n")]


def _wait_for(check, what: str) -> None:
    deadline = time.monotonic() + BACKSTOP_S
    while not check():
        assert time.monotonic() < deadline, f"waited {BACKSTOP_S:g} s for {what}"
        time.sleep(0.05)


def _after_estimate(err: str) -> list[str]:
    """The stderr lines after the cost estimate (two lines: per move, then the total)."""
    lines = err.splitlines()
    start = next(i for i, line in enumerate(lines) if line.startswith("cost estimate:"))
    return [line for line in lines[start + 2:] if line.strip()]


def test_ctrl_c_in_the_arena_ends_in_one_line_keeps_finished_matches_and_resumes(tmp_path):
    out = tmp_path / "run"
    matches = out / "arena" / "matches.jsonl"
    proc = _start(RUN, out)
    _wait_for(lambda: len(_rows(matches)) >= 2 or proc.poll() is not None, "two finished matches")
    assert proc.poll() is None, "the arena ended before it could be interrupted"
    os.killpg(proc.pid, signal.SIGINT)
    _, err = proc.communicate(timeout=BACKSTOP_S)
    assert proc.returncode == 130, err
    assert "Traceback" not in err and "KeyError" not in err and "out of turn" not in err, err
    assert _after_estimate(err) == [INTERRUPTED], err
    kept = _rows(matches)
    assert 2 <= len(kept) < 40
    resumed = _start(RUN, out)
    _, err = resumed.communicate(timeout=BACKSTOP_S)
    assert resumed.returncode == 0, err
    final = _rows(matches)
    assert final[:len(kept)] == kept  # nothing finished was lost or played again
    assert len(final) == len({json.loads(line)["key"] for line in final}) == 40


def test_a_second_writer_of_a_run_directory_is_refused_with_the_holders_pid(tmp_path):
    out = tmp_path / "run"
    holder = subprocess.Popen(
        [sys.executable, "-c", "import sys\nfrom cwm.arena.lock import writer_lock\n"
                               f"with writer_lock({str(out)!r}):\n    print('held', flush=True)\n    sys.stdin.read()"],
        env=_env(), text=True, stdin=subprocess.PIPE, stdout=subprocess.PIPE)
    try:
        assert holder.stdout is not None and holder.stdout.readline() == "held\n"
        second = _start(RUN, out)
        _, err = second.communicate(timeout=BACKSTOP_S)
        assert second.returncode == 2, err
        assert err.strip().splitlines() == [f"cwm run: error: {out.resolve()} is being written by another cwm process "
                                            f"(pid {holder.pid}); wait for it to end, or write to another --out"]
        assert sorted(p.name for p in out.iterdir()) == [".cwm-lock"]  # the second wrote nothing
    finally:
        holder.kill()  # a holder that crashes leaves no lock behind
        holder.wait()
    with writer_lock(out):
        pass


def test_a_run_projected_past_the_threshold_needs_yes_from_a_script_and_then_stops_at_ctrl_c(tmp_path):
    out = tmp_path / "run"
    huge = [*RUN[:5], "1", "--sims", "1000000000", *RUN[8:]]  # one match per seat, a billion simulations a move
    refused = _start(huge, out)
    _, err = refused.communicate(timeout=BACKSTOP_S)
    assert refused.returncode == 2, err
    assert _after_estimate(err) == [next(line for line in err.splitlines() if line.startswith("cwm run: error:"))]
    assert "rerun with --yes" in err and "days of wall time" in err
    assert not (out / "arena" / "matches.jsonl").exists()
    started = _start([*huge, "--yes"], out)
    assert started.stderr is not None
    _wait_for(lambda: started.stderr.readline().startswith("  "), "the estimate's total")  # the arena starts next
    time.sleep(1.0)  # let the searches start in the workers (a C++ search does not see a SIGINT)
    os.killpg(started.pid, signal.SIGINT)
    _, err = started.communicate(timeout=BACKSTOP_S)
    assert started.returncode == 130 and err.strip().splitlines() == [INTERRUPTED], err


@pytest.mark.parametrize("argv, words", [
    (["--matches", "1000000000"], "4,000,000,000 arena matches, over the 100,000"),
])
def test_an_absurd_size_is_refused_before_anything_runs(argv, words, tmp_path):
    out = tmp_path / "run"
    proc = _start([*RUN[:2], *argv, "--quiet"], out)
    _, err = proc.communicate(timeout=BACKSTOP_S)
    assert proc.returncode == 2 and len(err.strip().splitlines()) == 1 and words in err, err
    assert not out.exists()
