"""Tournament throughput on the local process pool against a Ray cluster of separate nodes, at equal cores.

One run plays the same tournament (same agents, settings, seeds) twice: on ``local:N`` (a process pool of
N workers) and on a Ray cluster of N one-CPU nodes started here as separate ``ray start`` processes on
loopback addresses (``cwm.executors.ray_local``). It prints matches per second of wall time for each, the ratio,
how many nodes the Ray matches ran on, and whether both runs played the same matches. The cluster's
start-up is timed apart and left out of its throughput (a real cluster is started once for many runs).
The pool plays first unless ``--ray-first``: on a shared machine the load drifts between the two.
Throughput is measured in wall time, unlike the other benchmarks (CPU time): it compares two executors at
equal cores, and the Ray nodes' processes run outside this process's tree, where its CPU could not be
counted; run it on an otherwise idle machine.

    python benchmarks/bench_ray.py [--game connect_four] [--agents gt-mcts,gt-mcts-py] [--sims 100]
                                   [--matches 8] [--cores 2] [--ray-first]
"""

from __future__ import annotations

import argparse
import json
import os
import tempfile
import time
from pathlib import Path

from cwm.agents import Settings
from cwm.arena import tournament
from cwm.arena.plan import TournamentPlan
from cwm.executors.ray_local import LocalRayCluster
from planners.config import SearchConfig


def timed_run(executor: str, out: Path, args: argparse.Namespace) -> tuple[float, list[tuple]]:
    """Wall seconds of one tournament and its matches as (key, returns, actions)."""
    settings = Settings(search=SearchConfig(num_simulations=args.sims, rollouts=args.rollouts))
    start = time.perf_counter()
    results = tournament(args.game, args.agents.split(","), TournamentPlan(matches=args.matches, settings=settings), out_dir=out, executor=executor, progress=False)
    return time.perf_counter() - start, sorted((r.key, r.returns, r.actions) for r in results)


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--game", default="connect_four")
    p.add_argument("--agents", default="gt-mcts,gt-mcts-py")
    p.add_argument("--sims", type=int, default=100)
    p.add_argument("--rollouts", type=int, default=1)
    p.add_argument("--matches", type=int, default=8, help="per pairing and seat order (default 8)")
    p.add_argument("--cores", type=int, default=2, help="pool workers, and one-CPU Ray nodes (default 2)")
    p.add_argument("--ray-first", action="store_true", help="play on Ray before the pool (load drifts)")
    args = p.parse_args()

    with tempfile.TemporaryDirectory() as tmp:
        if not args.ray_first:
            pool_s, pool_matches = timed_run(f"local:{args.cores}", Path(tmp) / "pool", args)
        started = time.perf_counter()
        with LocalRayCluster(nodes=args.cores, cpus_per_node=1) as cluster:
            up_s = time.perf_counter() - started
            os.environ.update(cluster.env())
            import ray

            try:
                ray_s, ray_matches = timed_run(f"ray:{cluster.address}", Path(tmp) / "ray", args)
            finally:
                ray.shutdown()
        if args.ray_first:
            pool_s, pool_matches = timed_run(f"local:{args.cores}", Path(tmp) / "pool", args)
        nodes = {json.loads(t.read_text())["worker"].get("node")
                 for t in (Path(tmp) / "ray" / "transcripts").glob("*.json")}
    n = len(pool_matches)
    print(f"{args.game}, {args.agents} at {args.sims} simulations x {args.rollouts} rollouts: {n} matches, "
          f"{args.cores} cores")
    print(f"  process pool (local:{args.cores}): {pool_s:.1f} s, {n / pool_s:.3f} matches/s")
    print(f"  Ray, {args.cores} one-CPU nodes:   {ray_s:.1f} s, {n / ray_s:.3f} matches/s "
          f"(cluster start {up_s:.1f} s, not counted; matches ran on {len(nodes)} nodes)")
    print(f"  Ray / pool throughput: {pool_s / ray_s:.2f}x; same matches: {pool_matches == ray_matches}")


if __name__ == "__main__":
    main()
