"""Trajectory saving: the field-by-field JSON conversion against the ``dataclasses.asdict`` one it replaced.

Records --games backgammon games once (long games with a full state and every player's observation at
each step), then saves them with ``trajectories.save`` twice per repeat, once with today's
``trajectories.to_json`` and once with the old asdict conversion patched in (same save path otherwise),
the two taking turns so that load from other processes hits them alike. Prints the best CPU seconds
(``time.process_time``: the machine is shared) of each, the ratio (target: at least 2x), and whether the
two files are byte-identical (they must be).

    python benchmarks/bench_io.py [--games 100] [--repeats 3]
"""

from __future__ import annotations

import argparse
import dataclasses
import math
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from unittest import mock

from cwm.games import trajectories
from cwm.types import JSON, TRAJECTORY_SCHEMA, ClosedTrajectory, Trajectory


def asdict_to_json(item: Trajectory | ClosedTrajectory) -> dict[str, JSON]:
    """The old conversion: a deep copy of the whole record through ``dataclasses.asdict``."""
    kind = "open" if isinstance(item, Trajectory) else "closed"
    return {"schema": TRAJECTORY_SCHEMA, "kind": kind, **dataclasses.asdict(item)}


def save_old(path: Path, items: list[Trajectory]) -> Path:
    with mock.patch.object(trajectories, "to_json", asdict_to_json):
        return trajectories.save(path, items)


def cpu_seconds(fn: Callable[..., object], *args: object) -> float:
    start = time.process_time()
    fn(*args)
    return time.process_time() - start


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--games", type=int, default=100, help="backgammon games to save (default 100)")
    parser.add_argument("--repeats", type=int, default=3, help="saves of each kind; the best counts (default 3)")
    args = parser.parse_args()
    start = time.process_time()
    items = trajectories.collect("backgammon", args.games, seed=0)
    print(f"recorded {args.games} backgammon games ({trajectories.total_steps(items):,} steps) "
          f"in {time.process_time() - start:.1f} s CPU")
    best = {"asdict": math.inf, "fields": math.inf}
    with tempfile.TemporaryDirectory() as tmp:
        old, new = Path(tmp) / "old.jsonl", Path(tmp) / "new.jsonl"
        for _ in range(args.repeats):
            best["asdict"] = min(best["asdict"], cpu_seconds(save_old, old, items))
            best["fields"] = min(best["fields"], cpu_seconds(trajectories.save, new, items))
        identical = old.read_bytes() == new.read_bytes()
        size = new.stat().st_size
    ratio = best["asdict"] / best["fields"]
    print(f"save {size / 1e6:.1f} MB, best of {args.repeats}: asdict {best['asdict']:.2f} s CPU, "
          f"field by field {best['fields']:.2f} s CPU: {ratio:.2f}x (target >= 2x); "
          f"byte-identical: {'yes' if identical else 'NO'}")
    return 0 if identical and ratio >= 2.0 else 1


if __name__ == "__main__":
    raise SystemExit(main())
