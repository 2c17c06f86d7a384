"""`cwm arena` guarded against repeats and absurd sizes: a second writer of one --out is refused with the first's
pid while the first plays on, and a plan of a billion matches is refused in one line before any work, its
jobs never made (a plan's jobs are made only as they are played)."""

from __future__ import annotations

import contextlib
import os
import subprocess
import sys
import time
import tracemalloc
from pathlib import Path

import pytest

from cwm.agents.specs import Settings
from cwm.arena import ArenaError, plan_jobs, tournament
from cwm.arena.lock import DirectoryInUse, writer_lock
from cwm.arena.plan import MAX_MATCHES, TournamentPlan
from cwm.cli import main
from planners.config import SearchConfig

SAME = Settings(search=SearchConfig(num_simulations=50, rollouts=1))  # the settings ARENA plays under
BACKSTOP_S = 300.0  # a guard against a hang only (the machine may be busy)
ARENA = ["arena", "tic_tac_toe", "--agents", "random,gt-mcts", "--sims", "50", "--rollouts", "1",
         "--executor", "local:1", "--no-progress"]


def _env() -> dict[str, str]:
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join(p for p in [str(Path(__file__).resolve().parents[2]),
                                                    env.get("PYTHONPATH", "")] if p)
    return env


def test_a_second_cwm_arena_on_one_out_is_refused_with_the_first_ones_pid(tmp_path, capsys):
    out = tmp_path / "arena"
    first = subprocess.Popen([sys.executable, "-m", "cwm.cli", *ARENA, "--matches", "2000", "--out", str(out)],
                             env=_env(), stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    try:
        deadline = time.monotonic() + BACKSTOP_S
        rows = out / "matches.jsonl"
        while not (rows.is_file() and rows.read_text().count("\n") >= 1):  # it holds the lock while it plays
            assert first.poll() is None and time.monotonic() < deadline, "the first arena never played"
            time.sleep(0.05)
        played = rows.read_text().count("\n")
        code = main([*ARENA, "--matches", "2000", "--out", str(out)])
        err = capsys.readouterr().err
        assert code == 2 and err.count("\n") == 1, err
        assert f"is being written by another cwm process (pid {first.pid})" in err and "another --out" in err
        with pytest.raises(DirectoryInUse, match=f"pid {first.pid}"):  # the library refuses as the command does
            tournament("tic_tac_toe", ["random", "gt-mcts"], TournamentPlan(matches=2000, settings=SAME), out_dir=out,
                       executor="inline", progress=False)
        assert rows.read_text().count("\n") >= played  # the first plays on
    finally:
        first.kill()  # a holder that dies leaves no lock behind
        first.wait()
    with writer_lock(out):
        pass


def test_one_process_may_nest_its_own_lock_and_releases_it_on_the_way_out(tmp_path):
    with writer_lock(tmp_path / "d"), writer_lock(tmp_path / "d"):
        pass
    child = subprocess.run([sys.executable, "-c", f"from cwm.arena.lock import writer_lock\n"
                                                  f"with writer_lock({str(tmp_path / 'd')!r}): print('ok')"],
                           env=_env(), capture_output=True, text=True, timeout=BACKSTOP_S)
    assert child.stdout == "ok\n", child.stderr


def test_a_billion_matches_are_refused_in_one_line_before_any_work(tmp_path, capsys):
    code = main([*ARENA, "--matches", "1000000000", "--out", str(tmp_path / "arena")])
    err = capsys.readouterr().err
    assert code == 2 and err.count("\n") == 1, err
    assert "2,000,000,000 matches, over the 100,000 one tournament may play; lower --matches" in err
    assert not (tmp_path / "arena").exists()
    with pytest.raises(ArenaError, match="over the 100,000"):
        tournament("tic_tac_toe", ["random", "gt-mcts"], TournamentPlan(matches=10**9), out_dir=tmp_path / "lib",
                   executor="inline", progress=False)
    assert not (tmp_path / "lib").exists()


def test_a_plans_jobs_are_made_only_when_asked_for():
    tracemalloc.start()
    try:
        jobs = plan_jobs("tic_tac_toe", ["random", "gt-mcts"], TournamentPlan(matches=MAX_MATCHES // 2))
        assert len(jobs) == MAX_MATCHES
        held = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert held < 2_000_000  # bytes: two seatings, not 100,000 jobs (which take about 30 MB)
    assert [j.index for j in jobs[:3]] == [0, 0, 1] and jobs[-1].index == MAX_MATCHES // 2 - 1  # in pairs
    assert jobs[-1].seats == ("gt-mcts", "random") and jobs[MAX_MATCHES // 2].seats == ("random", "gt-mcts")
    assert jobs[7] == list(jobs[:8])[7]  # the same job however it is reached


def test_a_process_the_holder_forked_does_not_keep_the_lock_once_the_holder_is_gone(tmp_path):
    folder = str(tmp_path / "d")
    holder = subprocess.Popen(
        [sys.executable, "-c", "import os, sys, time\nfrom cwm.arena.lock import writer_lock\n"
                               f"with writer_lock({folder!r}):\n    child = os.fork()\n"
                               "    if child == 0:\n        time.sleep(600)\n        os._exit(0)\n"
                               "    print(child, flush=True)\n    sys.stdin.read()"],
        env=_env(), text=True, stdin=subprocess.PIPE, stdout=subprocess.PIPE)
    assert holder.stdout is not None
    child = int(holder.stdout.readline())
    try:
        with pytest.raises(DirectoryInUse, match=f"pid {holder.pid}"), writer_lock(folder):
            pass
        _wait_until_closed(child, Path(folder) / ".cwm-lock")  # the child's at-fork hook runs when it is scheduled
        holder.kill()  # a crash: no unlock, no exit handler; the forked child (a pool worker, say) lives on
        holder.wait()
        assert Path(f"/proc/{child}").exists()
        with writer_lock(folder):
            pass
    finally:
        os.kill(child, 9)


def _wait_until_closed(pid: int, file: Path) -> None:
    """Waits until process ``pid`` holds no descriptor of ``file`` (a generous wall-clock backstop: it is a
    matter of the process being scheduled once)."""
    deadline = time.monotonic() + BACKSTOP_S
    while True:
        held = []
        for fd in os.listdir(f"/proc/{pid}/fd"):
            with contextlib.suppress(OSError):
                held.append(os.readlink(f"/proc/{pid}/fd/{fd}"))
        if str(file.resolve()) not in held:
            return
        assert time.monotonic() < deadline, f"process {pid} never closed its copy of {file}"
        time.sleep(0.01)


def test_a_billion_simulations_are_refused_from_a_script_without_yes(tmp_path, capsys, monkeypatch):
    monkeypatch.setattr(sys, "stdin", type("Pipe", (), {"isatty": lambda self: False})())  # not a terminal
    code = main([*ARENA, "--matches", "2", "--sims", "1000000000", "--out", str(tmp_path / "arena")])
    err = capsys.readouterr().err
    assert code == 2 and "rerun with --yes to start it, or lower --matches or --sims" in err
    assert err.splitlines()[-1].startswith("cwm arena: error: this run is projected to take")
    assert not (tmp_path / "arena" / "matches.jsonl").exists()


@pytest.mark.parametrize("plant", ["fifo", "link", "folder"])
def test_a_lock_file_that_is_not_a_regular_file_is_refused_in_one_line(tmp_path, capsys, plant):
    """A FIFO, a link or a folder planted as DIR/.cwm-lock (a shared folder) can neither lock nor hold a pid."""
    out = tmp_path / "arena"
    out.mkdir()
    lock = out / ".cwm-lock"
    {"fifo": lambda: os.mkfifo(lock), "link": lambda: lock.symlink_to(tmp_path / "elsewhere"),
     "folder": lambda: lock.mkdir()}[plant]()
    code = main([*ARENA, "--matches", "1", "--out", str(out)])
    err = capsys.readouterr().err
    assert code == 2 and err.count("\n") == 1 and "Traceback" not in err, err
    assert f"{lock} is " in err and "cannot be locked" in err, err
    assert not (out / "matches.jsonl").exists() and not (tmp_path / "elsewhere").exists()
    with pytest.raises(DirectoryInUse, match="cannot be locked"), writer_lock(out):
        pass
