"""A tournament on a Ray cluster of separate nodes (``ray start`` head and worker processes on loopback
addresses, ``cwm.executors.ray_local``): jobs in flight together run on both nodes, rows reach the driver as
matches end, and a driver killed mid-run resumes to exactly the matches an uninterrupted local run plays.

Which node plays which match is Ray's decision and depends on how fast each node starts its workers, so the
tournament tests check only that every match names a node of the cluster; that the nodes are used together
is shown by jobs that cannot finish unless they run at the same time.

Ray is part of the test extra. Starting the two-node cluster takes about 30 s on a loaded machine, so
the module is marked slow (it still runs in CI).
"""

from __future__ import annotations

import importlib
import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from cwm.agents import Settings
from cwm.arena import tournament
from cwm.arena.plan import TournamentPlan
from cwm.executors import ExecutorError
from cwm.executors.ray_local import LocalRayCluster
from cwm.synthesis import SynthesisSettings
from planners.config import SearchConfig

pytestmark = [pytest.mark.slow, pytest.mark.timeout(600, method="thread")]

# slow enough (about a second a match) that a driver can be killed while matches are in flight
AGENTS = ["random", "gt-mcts-py"]
SETTINGS = Settings(search=SearchConfig(num_simulations=200, rollouts=2))
MATCHES = 4  # per seat order: 8 matches


def _our_processes(marker: str, *, wait_s: float = 10.0) -> list[int]:
    """Ids of live processes whose command line names ``marker`` (the cluster's own temp folder), after
    waiting up to ``wait_s`` for killed ones to finish exiting."""
    end = time.monotonic() + wait_s
    while (found := _named(marker)) and time.monotonic() < end:
        time.sleep(0.2)
    return found


def _named(marker: str) -> list[int]:
    found = []
    for entry in Path("/proc").iterdir():
        try:
            if entry.name.isdigit() and marker in (entry / "cmdline").read_bytes().decode(errors="replace"):
                found.append(int(entry.name))
        except OSError:  # it ended while we looked
            continue
    return found


def _describe(pids: list[int]) -> str:
    """Each process's state and command line, for the failure message."""
    found = []
    for pid in pids:
        try:
            found.append(Path(f"/proc/{pid}/stat").read_text()[:60] + " "
                         + Path(f"/proc/{pid}/cmdline").read_bytes().decode(errors="replace")[:200])
        except OSError:
            found.append(f"{pid} (ended)")
    return "; ".join(found)


@pytest.fixture(scope="module")
def cluster():
    """Two one-CPU nodes; after the module, none of their processes and none of their files are left."""
    with LocalRayCluster(nodes=2, cpus_per_node=1) as found:
        folder = str(found.temp_dir)
        saved = {k: os.environ.get(k) for k in found.env()}
        os.environ.update(found.env())  # this process's driver joins with the cluster's token
        try:
            yield found
        finally:
            import ray

            ray.shutdown()
            for key, value in saved.items():
                if value is None:
                    os.environ.pop(key, None)
                else:
                    os.environ[key] = value
    left = _our_processes(folder)
    assert not left, f"Ray processes of the test cluster outlived it: {_describe(left)}"
    assert not Path(folder).exists()


def _rows(out: Path) -> list[dict]:
    """The rows of matches.jsonl without what differs between any two runs (time taken)."""
    path = out / "matches.jsonl"
    rows = [json.loads(line) for line in path.read_text().splitlines()] if path.exists() else []
    return sorted(({k: v for k, v in r.items() if k != "duration_s"} for r in rows), key=lambda r: r["key"])


def _nodes(out: Path) -> set[str]:
    return {json.loads(p.read_text())["worker"].get("node", "")
            for p in (out / "transcripts").glob("*.json")}


def _cluster_nodes(cluster: LocalRayCluster) -> set[str]:
    """The node ids of the cluster's live nodes, asked in a short-lived driver of its own."""
    probe = (f"import ray; ray.init(address={cluster.address!r}, log_to_driver=False); "
             "print(' '.join(n['NodeID'] for n in ray.nodes() if n['Alive']))")
    out = subprocess.run([sys.executable, "-c", probe], env=os.environ | cluster.env(), capture_output=True,
                         text=True, timeout=300, check=True).stdout
    return set(out.split())


_RENDEZVOUS = """
import pathlib, sys, time
folder, me = pathlib.Path(sys.argv[1]), sys.argv[2]
(folder / me).touch()
end = time.monotonic() + 240  # a backstop only: the other job is expected within seconds
while len(list(folder.iterdir())) < 2 and time.monotonic() < end:
    time.sleep(0.05)
print(len(list(folder.iterdir())))
"""


def test_jobs_in_flight_together_run_on_both_nodes(cluster, tmp_path):
    # Each job holds its node's only CPU until the other has started: both finish seeing two markers only if
    # the executor sent them to the cluster together and Ray placed them on different nodes.
    from cwm.executors.pools import RayExecutor

    folder = tmp_path / "rendezvous"
    folder.mkdir()
    jobs = [[sys.executable, "-c", _RENDEZVOUS, str(folder), name] for name in ("a", "b")]
    executor = RayExecutor(cluster.address)
    seen = sorted(executor.imap_unordered(subprocess.check_output, jobs))
    assert seen == [b"2\n", b"2\n"]


def _driver(cluster: LocalRayCluster, out: Path) -> subprocess.Popen[bytes]:
    """``cwm arena`` on the cluster, in a process of its own so that it can be killed mid-run (and so that
    no Ray state of this process, which other tests' local clusters leave behind, comes into it)."""
    cmd = [sys.executable, "-m", "cwm.cli", "arena", "tic_tac_toe", "--agents", ",".join(AGENTS),
           "--matches", str(MATCHES), "--sims", "200", "--rollouts", "2", "--executor", f"ray:{cluster.address}",
           "--out", str(out), "--no-progress", "--yes"]
    return subprocess.Popen(cmd, env=os.environ | cluster.env(), stdout=subprocess.DEVNULL,
                            stderr=subprocess.PIPE, start_new_session=True)


def test_a_killed_ray_driver_resumes_to_the_matches_of_a_local_run(cluster, tmp_path):
    local = tmp_path / "local"
    tournament("tic_tac_toe", AGENTS, TournamentPlan(matches=MATCHES, settings=SETTINGS), out_dir=local, executor="local:2", progress=False)
    expected = _rows(local)
    assert len(expected) == 2 * MATCHES

    on_ray = tmp_path / "ray"
    driver = _driver(cluster, on_ray)
    try:
        deadline = time.monotonic() + 240
        while len(_rows(on_ray)) < 1 and driver.poll() is None and time.monotonic() < deadline:
            time.sleep(0.05)
        streamed = len(_rows(on_ray))
        os.killpg(driver.pid, signal.SIGKILL)  # mid-run: matches are in flight on both nodes
    finally:
        driver.wait()
    # rows arrived while the run went on: streamed to the driver as each match ended, not at the end
    assert 1 <= streamed < 2 * MATCHES, driver.stderr.read().decode() if driver.stderr else ""
    kept = _rows(on_ray)
    assert kept and len(kept) < 2 * MATCHES and all(row in expected for row in kept)

    rerun = _driver(cluster, on_ray)  # the same command again, to the end
    assert rerun.wait(timeout=300) == 0, rerun.stderr.read().decode() if rerun.stderr else ""
    assert _rows(on_ray) == expected  # the same matches, each once, with the same moves and returns
    assert _nodes(on_ray) <= _cluster_nodes(cluster)  # every match names the cluster node that played it
    assert all(json.loads(p.read_text())["worker"]["pid"] != os.getpid()
               for p in (on_ray / "transcripts").glob("*.json"))


def test_a_cluster_that_cannot_start_leaves_nothing_running(tmp_path):
    broken = LocalRayCluster(nodes=2, start_timeout_s=0.01)  # no head listens within 10 ms
    with pytest.raises(ExecutorError, match="did not start"):
        broken.start()
    assert broken.temp_dir is not None and not broken.temp_dir.exists()
    assert not _our_processes(str(broken.temp_dir))


def _experiment(name: str):
    """An experiment script as a module (the repository root appended: the installed cwm still wins)."""
    root = Path(__file__).resolve().parents[2]
    if str(root) not in sys.path:
        sys.path.append(str(root))
    return importlib.import_module(f"experiments.{name}")


def _run_script(module, argv: list[str]) -> int:
    """Runs an experiment script in a process of its own (a fresh Ray driver), as a person would."""
    done = subprocess.run([sys.executable, module.__file__, *argv], capture_output=True, timeout=300)
    assert done.returncode == 0, done.stderr.decode()[-3000:]
    return done.returncode


def _recorded_sweep(path: Path, seeds: int) -> Path:
    """A replay file answering the first call of tic-tac-toe syntheses with seeds 0..seeds-1 (each prompt
    shows its seed's training games) with the hand-written correct model, a test fixture."""
    import tempfile

    from cwm.llm import RecordingClient, ScriptedClient
    from cwm.synthesis import synthesize_world_model

    source = (Path(__file__).resolve().parents[1] / "data" / "synthesis" / "ttt_correct.py").read_text()
    reply = f"Here is the module.\n\n```python\n{source.strip()}\n```\n"
    llm = RecordingClient(ScriptedClient([reply] * seeds, model="scripted-tic-tac-toe"), path)
    with tempfile.TemporaryDirectory() as run:
        for seed in range(seeds):
            synthesize_world_model("tic_tac_toe", llm, SynthesisSettings.of("world_model", budget=1, seed=seed, num_test=0, isolate=False), run_dir=Path(run) / str(seed))
    return path


def test_a_synthesis_sweep_runs_each_synthesis_on_a_cluster_node_and_resumes(cluster, tmp_path):
    table = _experiment("synthesis_table")
    out = tmp_path / "sweep"
    replay = _recorded_sweep(tmp_path / "tic_tac_toe.jsonl", seeds=2)
    argv = ["--games", "tic_tac_toe", "--seeds", "2", "--num-test", "4", "--budget", "1", "--quiet",
            "--llm", f"replay:{replay}", "--executor", f"ray:{cluster.address}", "--out", str(out)]
    assert _run_script(table, argv) == 0
    runs = json.loads((out / "table.json").read_text())["runs"]
    assert sorted(Path(r["run_dir"]).name for r in runs) == ["tic_tac_toe-seed0", "tic_tac_toe-seed1"]
    assert [r["train_accuracy"] for r in runs] == [1.0, 1.0]
    assert all((Path(r["run_dir"]) / "result.json").is_file() for r in runs)
    assert {r["worker"]["node"] for r in runs} <= _cluster_nodes(cluster)  # each names the node that ran it
    logs = {r["run_dir"]: (Path(r["run_dir"]) / "llm_log.jsonl").read_bytes() for r in runs}

    assert _run_script(table, argv) == 0  # the same sweep again resumes every run: no LLM call is made twice
    again = json.loads((out / "table.json").read_text())["runs"]
    assert [(r["seed"], r["train_accuracy"], r["llm_calls"]) for r in again] == [
        (r["seed"], r["train_accuracy"], r["llm_calls"]) for r in runs]
    assert {d: (Path(d) / "llm_log.jsonl").read_bytes() for d in logs} == logs
