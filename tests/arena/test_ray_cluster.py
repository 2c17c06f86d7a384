"""A tournament on a Ray cluster of separate nodes (``ray start`` head and worker processes on loopback
addresses, ``cwm.ray_local``): matches spread over the nodes, rows reach the driver as matches end, and
a driver killed mid-run resumes to exactly the matches an uninterrupted local run plays.

Ray is part of the test extra. Starting the two-node cluster takes about 30 s on a loaded machine, so
the module is marked slow (it still runs in CI).
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

from cwm.arena import tournament
from cwm.executors import ExecutorError
from cwm.ray_local import LocalRayCluster
from planners import Settings
from planners.config import SearchConfig

pytestmark = [pytest.mark.slow, pytest.mark.timeout(600, method="thread")]

# slow enough (about a second a match) that a driver can be killed while matches are in flight
AGENTS = ["random", "gt-mcts-py"]
SETTINGS = Settings(search=SearchConfig(num_simulations=200, rollouts=2))
MATCHES = 4  # per seat order: 8 matches


def _our_processes(marker: str) -> list[int]:
    """Ids of live processes whose command line names ``marker`` (the cluster's own temp folder)."""
    found = []
    for entry in Path("/proc").iterdir():
        try:
            if entry.name.isdigit() and marker in (entry / "cmdline").read_bytes().decode(errors="replace"):
                found.append(int(entry.name))
        except OSError:  # it ended while we looked
            continue
    return found


def _describe(pids: list[int]) -> str:
    return "; ".join(Path(f"/proc/{pid}/stat").read_text()[:80] + " " +
                     Path(f"/proc/{pid}/cmdline").read_bytes().decode(errors="replace")[:200] for pid in pids)


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


def _driver(cluster: LocalRayCluster, out: Path) -> subprocess.Popen[bytes]:
    """``cwm arena`` on the cluster, in a process of its own so that it can be killed mid-run."""
    cmd = [sys.executable, "-m", "cwm.cli", "arena", "tic_tac_toe", "--agents", ",".join(AGENTS),
           "--matches", str(MATCHES), "--sims", "200", "--rollouts", "2", "--executor", f"ray:{cluster.address}",
           "--out", str(out), "--no-progress", "--yes"]
    return subprocess.Popen(cmd, env=os.environ | cluster.env(), stdout=subprocess.DEVNULL,
                            stderr=subprocess.PIPE, start_new_session=True)


def test_a_killed_ray_driver_resumes_to_the_matches_of_a_local_run(cluster, tmp_path):
    local = tmp_path / "local"
    tournament("tic_tac_toe", AGENTS, matches=MATCHES, out_dir=local, settings=SETTINGS, executor="local:2",
               progress=False)
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

    tournament("tic_tac_toe", AGENTS, matches=MATCHES, out_dir=on_ray, settings=SETTINGS,
               executor=f"ray:{cluster.address}", progress=False)
    assert _rows(on_ray) == expected  # the same matches, each once, with the same moves and returns
    assert len(_nodes(on_ray)) == 2  # both nodes played
    assert all(json.loads(p.read_text())["worker"]["pid"] != os.getpid()
               for p in (on_ray / "transcripts").glob("*.json"))


def test_a_cluster_that_cannot_start_leaves_nothing_running(tmp_path):
    broken = LocalRayCluster(nodes=2, start_timeout_s=0.01)  # no head listens within 10 ms
    with pytest.raises(ExecutorError, match="did not start"):
        broken.start()
    assert broken.temp_dir is not None and not broken.temp_dir.exists()
    assert not _our_processes(str(broken.temp_dir))
