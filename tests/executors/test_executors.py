"""Executors: spec parsing, refusing unreachable or malformed Ray addresses, and the same tournament on a
local Ray cluster as in-process.

Ray is the optional extra ``.[ray]``; these tests need it installed (``pip install ray``). The last one
starts a two-CPU local cluster (about 5 s), as Ray no longer has a local mode; the others start none and
touch no network beyond a closed port on 127.0.0.1.
"""

from __future__ import annotations

import json
import os
import signal
import socket
import sys
import time
from pathlib import Path

import pytest

from cwm import cli
from cwm.agents import Settings
from cwm.arena import tournament
from cwm.arena.plan import TournamentPlan
from cwm.executors import (
    ExecutorError,
    InlineExecutor,
    JobCrashed,
    ProcessExecutor,
    RayExecutor,
    make_executor,
)
from planners.config import SearchConfig

FAST = Settings(search=SearchConfig(num_simulations=20, rollouts=1))


@pytest.mark.parametrize("spec,kind,workers", [("inline", InlineExecutor, None), ("local", ProcessExecutor, None),
                                               ("local:3", ProcessExecutor, 3)])
def test_make_executor(spec, kind, workers):
    ex = make_executor(spec)
    assert isinstance(ex, kind)
    if workers:
        assert ex.workers == workers


@pytest.mark.parametrize("spec", ["threads", "local:many", "inline:2"])
def test_bad_executor_specs(spec):
    with pytest.raises(ExecutorError, match="executor"):
        make_executor(spec)


@pytest.fixture
def closed_port() -> int:
    """A port on 127.0.0.1 where nothing listens (bound, noted, released)."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


# A regression that hangs inside ray.init waits without using CPU: the generous wall timeout ends it.
@pytest.mark.timeout(300, method="thread")
@pytest.mark.parametrize("address", ["127.0.0.1:{port}", "ray://127.0.0.1:{port}"], ids=["gcs", "client"])
def test_unreachable_ray_cluster_fails_fast(address, closed_port):
    address = address.format(port=closed_port)
    start = time.process_time()  # CPU time: importing Ray may wait for a core on a loaded machine
    with pytest.raises(ExecutorError, match=f"could not reach the Ray cluster at {address}: .*refused"):
        make_executor(f"ray:{address}")
    assert time.process_time() - start < 10  # importing Ray included; the refused probe itself is instant


@pytest.mark.timeout(60, method="thread")
@pytest.mark.parametrize("spec", ["ray:garbage", "ray:127.0.0.1:http", "ray:127.0.0.1:", "ray:127.0.0.1:99999",
                                  "ray::6379", "ray:ray://127.0.0.1", "ray:http://127.0.0.1:6379",
                                  "ray:127.0.0.1:6379/x", "ray:user@127.0.0.1:6379"])
def test_malformed_ray_addresses_are_refused_before_connecting(spec, monkeypatch):
    def no_network(*args, **kwargs):
        raise AssertionError(f"connected to {args} for a malformed address")

    monkeypatch.setattr(socket, "create_connection", no_network)
    with pytest.raises(ExecutorError, match="is not host:port, ray://host:port, auto or local"):
        make_executor(spec)


@pytest.mark.timeout(60, method="thread")
def test_arena_cli_with_an_unreachable_cluster_writes_nothing(tmp_path, closed_port, capsys):
    out = tmp_path / "out"
    code = cli.main(["arena", "tic_tac_toe", "--agents", "random,gt-mcts", "--matches", "1", "--no-progress",
                     "--executor", f"ray:127.0.0.1:{closed_port}", "--out", str(out)])
    assert code != 0
    assert f"could not reach the Ray cluster at 127.0.0.1:{closed_port}" in capsys.readouterr().err
    assert not out.exists()


@pytest.mark.timeout(60, method="thread")
def test_tournament_with_an_unreachable_cluster_writes_nothing(tmp_path, closed_port):
    out = tmp_path / "out"
    with pytest.raises(ExecutorError, match="could not reach the Ray cluster"):
        tournament("tic_tac_toe", ["random", "gt-mcts"], TournamentPlan(matches=1), out_dir=out, executor=f"ray:127.0.0.1:{closed_port}", progress=False)
    assert not out.exists()


def test_ray_cluster_plays_the_same_matches(tmp_path):
    """Ray's workers run the same matches, the CWM agent's model contained in a planning worker there too."""
    import ray

    model = Path(__file__).resolve().parents[1] / "data" / "planners" / "ttt_model.py"
    agents = ["random", "gt-mcts", f"mine=cwm:{model}"]
    inline = tournament("tic_tac_toe", agents, TournamentPlan(matches=2, settings=FAST), out_dir=tmp_path / "inline", executor="inline", progress=False)
    try:
        on_ray = tournament("tic_tac_toe", agents, TournamentPlan(matches=2, settings=FAST), out_dir=tmp_path / "ray", executor=RayExecutor(num_cpus=2), progress=False)
    finally:
        ray.shutdown()
    assert [(r.key, r.returns, r.moves) for r in inline] == [(r.key, r.returns, r.moves) for r in on_ray]


def _double_unless_three(item: int) -> int:
    if item == 3:  # this job kills its worker process, as a segfault or the OOM killer would
        os.kill(os.getpid(), signal.SIGKILL)
    return item * 2


def test_a_job_that_kills_its_worker_process_is_found_and_every_other_job_completes():
    ex = ProcessExecutor(2)
    try:
        out = list(ex.imap_unordered(_double_unless_three, list(range(6))))
        assert list(ex.imap_unordered(_double_unless_three, [10])) == [20]  # the pool works afterwards
    finally:
        ex.close()
    crashed = [o for o in out if isinstance(o, JobCrashed)]
    assert [c.item for c in crashed] == [3] and "died" in str(crashed[0])
    assert sorted(o for o in out if not isinstance(o, JobCrashed)) == [0, 2, 4, 8, 10]


class _CrashingExecutor(InlineExecutor):
    """Runs matches in this process, except that the second one 'kills its worker'."""

    def imap_unordered(self, fn, items):  # noqa: ANN001, ANN201
        for i, item in enumerate(items):
            yield JobCrashed(item, "the job's worker process died") if i == 1 else fn(item)


def test_a_match_whose_process_died_is_saved_void_and_never_replayed(tmp_path):
    results = tournament("tic_tac_toe", ["random", "gt-mcts"], TournamentPlan(matches=2, settings=FAST), out_dir=tmp_path, executor=_CrashingExecutor(), progress=False)
    void = [r for r in results if r.void]
    assert len(void) == 1 and void[0].forfeit_kind == "crash" and "died" in void[0].reason
    report = json.loads((tmp_path / "results.json").read_text())
    assert report["void_matches"] == [{"key": void[0].key, "reason": void[0].reason}]
    assert sum(r["matches"] for r in report["rows"] if r["seat"] == "all") == 2 * (len(results) - 1)
    again = tournament("tic_tac_toe", ["random", "gt-mcts"], TournamentPlan(matches=2, settings=FAST), out_dir=tmp_path, executor="inline", progress=False)  # resumes: nothing to play, the void match stays
    assert [r.key for r in again if r.void] == [void[0].key]


@pytest.mark.parametrize("executor", ["inline", "local:2"])
def test_each_transcript_says_which_process_played_its_match(tmp_path, executor):
    tournament("tic_tac_toe", ["random", "gt-mcts"], TournamentPlan(matches=2, settings=FAST), out_dir=tmp_path, executor=executor, progress=False)
    places = [json.loads(p.read_text())["worker"] for p in (tmp_path / "transcripts").glob("*.json")]
    assert len(places) == 4 and all(p["host"] == socket.gethostname() and "node" not in p for p in places)
    here = {p["pid"] == os.getpid() for p in places}
    assert here == ({True} if executor == "inline" else {False})  # the pool's workers are other processes


def test_ray_workers_can_import_the_package_of_a_script_run_as_main(tmp_path, monkeypatch):
    """A job defined in an experiment script run as a file (``__main__``, inside the uninstalled
    ``experiments`` package) imports ``experiments`` on a Ray worker: the folder above the package goes on
    the workers' path, not the script's own folder."""
    import types

    from cwm.executors.pools import _import_path

    (tmp_path / "pkg").mkdir()
    (tmp_path / "pkg" / "__init__.py").write_text("")
    script = types.ModuleType("fake_main")
    script.__file__ = str(tmp_path / "pkg" / "script.py")
    monkeypatch.setitem(sys.modules, "fake_main", script)

    def job(x):
        return x

    job.__module__ = "fake_main"
    roots = _import_path(job).split(os.pathsep)
    assert str(tmp_path.resolve()) in roots and str((tmp_path / "pkg").resolve()) not in roots
