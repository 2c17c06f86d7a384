"""A Ray cluster of separate node processes on loopback addresses: a head and workers, as ``ray start`` makes them.

``LocalRayCluster`` starts ``ray start --head`` and then ``ray start --address`` once per extra node, each
its own raylet with its own CPUs, so work sent to it crosses real node boundaries (object transfer between
raylets, scheduling across nodes) while staying on this machine. It is what the tests and
``benchmarks/bench_ray.py`` run the executor against; a person can use it to try ``--executor ray:ADDRESS``
before renting machines.

Every node has a loopback address of its own, 127.0.0.2 for the head, 127.0.0.3 and on for the workers
(Ray replaces 127.0.0.1, and only that one, by the machine's outward address), so nothing leaves the
machine; the cluster's files go under a temporary folder of its own (``--temp-dir``), and it requires
Ray's token authentication (a driver joins with the environment of ``env()``). ``stop()`` ends exactly
the processes this cluster started (each node runs in a process group of its own, signalled by id),
never other Ray clusters on the machine as ``ray stop`` would, and removes the folder.
"""

from __future__ import annotations

import contextlib
import os
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from cwm.executors.pools import ExecutorError


def node_ip(i: int) -> str:
    """The loopback address of node ``i`` (0 is the head)."""
    return f"127.0.0.{i + 2}"


class LocalRayCluster:
    """A head node and ``nodes - 1`` worker nodes on loopback addresses; a context manager that stops them on exit.

    Args:
      nodes: number of Ray nodes (each a ``ray start`` process tree of its own; default 2).
      cpus_per_node: CPUs each node offers (``--num-cpus``; default 1).
      start_timeout_s: seconds to wait for every node to join (default 120).

    Attributes:
      address: the head's ``host:port`` once started (what ``--executor ray:ADDRESS`` takes).
      temp_dir: the cluster's own folder (Ray's ``--temp-dir`` and the nodes' logs), removed by ``stop``.

    Raises:
      ExecutorError: Ray not installed, or the cluster not up within ``start_timeout_s`` (what was started
        is stopped first; the message ends with the head's log).
    """

    def __init__(self, nodes: int = 2, *, cpus_per_node: int = 1, start_timeout_s: float = 120.0):
        if nodes < 1 or cpus_per_node < 1:
            raise ExecutorError(f"a local Ray cluster needs >= 1 node and CPU (got {nodes}, {cpus_per_node})")
        self.nodes, self.cpus_per_node, self.start_timeout_s = nodes, cpus_per_node, start_timeout_s
        self.address = ""
        self._procs: list[subprocess.Popen[bytes]] = []
        self.temp_dir: Path | None = None

    def env(self) -> dict[str, str]:
        """The environment variables a driver (or a node) needs to join this cluster: token authentication
        on (the user's Ray token, which Ray keeps in ``~/.ray/auth_token``; one process holds one token,
        so a per-cluster token would lock out a driver that met another cluster first) and the address."""
        return {"RAY_AUTH_MODE": "token", **({"RAY_ADDRESS": self.address} if self.address else {})}

    def start(self) -> LocalRayCluster:
        """Starts the head, then the workers, and returns once all ``nodes`` are alive."""
        ray_cli = Path(sys.executable).with_name("ray")
        if not ray_cli.exists():
            raise ExecutorError(f"no `ray` command beside {sys.executable}: pip install '.[ray]' in the cwm checkout")
        # a short path: Ray's Unix sockets live under it and a socket path may not exceed 107 bytes
        self.temp_dir = Path(tempfile.mkdtemp(prefix="cwmray-", dir="/tmp"))
        port = _free_port(node_ip(0))
        self.address = f"{node_ip(0)}:{port}"
        common = ["--block", "--num-cpus", str(self.cpus_per_node), "--temp-dir", str(self.temp_dir),
                  "--disable-usage-stats"]
        try:
            self._spawn([str(ray_cli), "start", "--head", "--port", str(port), "--include-dashboard", "false",
                         "--node-ip-address", node_ip(0), *common], "head")
            _wait_for_port(node_ip(0), port, self.start_timeout_s, self._procs[0])
            for i in range(1, self.nodes):
                self._spawn([str(ray_cli), "start", "--address", self.address, "--node-ip-address", node_ip(i),
                             *common], f"worker{i}")
            self._wait_for_nodes()
        except (OSError, ExecutorError, subprocess.SubprocessError) as e:
            logs = "\n".join(f"--- {name}.log ends:\n{self._log(name)}" for name in self._names())
            self.stop()
            raise ExecutorError(f"the local Ray cluster did not start ({e or type(e).__name__})\n{logs}") from e
        except BaseException:  # interrupted while starting: leave nothing running
            self.stop()
            raise
        return self

    def _spawn(self, argv: list[str], name: str) -> None:
        assert self.temp_dir is not None
        with (self.temp_dir / f"{name}.log").open("wb") as log:
            self._procs.append(subprocess.Popen(argv, stdout=log, stderr=subprocess.STDOUT,
                                                env=os.environ | self.env(), start_new_session=True))

    def _wait_for_nodes(self) -> None:
        """Waits, in a short-lived driver of its own, until the cluster reports ``nodes`` live nodes."""
        probe = ("import ray, sys, time\nray.init(log_to_driver=False)\n"
                 f"end = time.monotonic() + {self.start_timeout_s}\n"
                 f"while sum(n['Alive'] for n in ray.nodes()) < {self.nodes}:\n"
                 "    if time.monotonic() > end: sys.exit('nodes missing')\n    time.sleep(0.2)\n")
        assert self.temp_dir is not None
        with (self.temp_dir / "probe.log").open("wb") as log, subprocess.Popen(
                [sys.executable, "-c", probe], env=os.environ | self.env(), stdout=log, stderr=log) as proc:
            try:
                while proc.poll() is None:
                    dead = [i for i, p in enumerate(self._procs) if p.poll() is not None]
                    if dead:
                        raise ExecutorError(f"Ray node {dead[0]} exited with status {self._procs[dead[0]].returncode}")
                    time.sleep(0.2)
            finally:
                if proc.poll() is None:
                    proc.kill()
        if proc.returncode:
            lines = self._log("probe").strip().splitlines()
            raise ExecutorError(f"the node probe failed: {lines[-1] if lines else proc.returncode}")

    def _names(self) -> list[str]:
        return ["head", *(f"worker{i}" for i in range(1, len(self._procs)))]

    def _log(self, name: str) -> str:
        path = self.temp_dir / f"{name}.log" if self.temp_dir else None
        return path.read_text(errors="replace")[-2000:] if path and path.is_file() else "(no log)"

    def stop(self) -> None:
        """Ends every process of every node (SIGTERM, then SIGKILL after 3 s) and removes the cluster's folder."""
        for sig, grace in ((signal.SIGTERM, 3.0), (signal.SIGKILL, 10.0)):
            alive = [p for p in self._procs if _group_alive(p.pid)]
            for proc in alive:
                _signal_group(proc.pid, sig)
            end = time.monotonic() + grace
            while any(_group_alive(p.pid) for p in alive) and time.monotonic() < end:
                for proc in alive:
                    proc.poll()  # reap the node's own process, so its group can empty
                time.sleep(0.1)
        for proc in self._procs:
            proc.poll()
        self._procs.clear()
        if self.temp_dir is not None:
            shutil.rmtree(self.temp_dir, ignore_errors=True)

    def __enter__(self) -> LocalRayCluster:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()


def _free_port(host: str) -> int:
    with socket.socket() as s:
        s.bind((host, 0))
        return int(s.getsockname()[1])


def _wait_for_port(host: str, port: int, timeout_s: float, head: subprocess.Popen[bytes]) -> None:
    end = time.monotonic() + timeout_s
    while time.monotonic() < end:
        if head.poll() is not None:
            raise ExecutorError(f"ray start --head exited with status {head.returncode}")
        try:
            socket.create_connection((host, port), timeout=1).close()
            return
        except OSError:
            time.sleep(0.2)
    raise ExecutorError(f"the Ray head did not listen on {host}:{port} within {timeout_s:g} s")


def _group_alive(pgid: int) -> bool:
    try:
        os.killpg(pgid, 0)
    except (ProcessLookupError, PermissionError):  # gone, or the id reused by someone else's group
        return False
    return True


def _signal_group(pgid: int, sig: int) -> None:
    with contextlib.suppress(ProcessLookupError, PermissionError):  # gone already, or the id reused
        os.killpg(pgid, sig)
