"""CPU of the reads LLM-written models make on a read-only state (``cwm.json_values.ReadOnlyDict`` /
``ReadOnlyList``, whose items live in a slot out of reach of ``list``/``dict``'s own methods) against the
same reads on the plain JSON value, measured in the same run, the two alternating: per read, the median of
--repeats timings of --number reads each. CPU is this process's (``time.process_time``).

    python benchmarks/bench_read_only.py [--number 20000] [--repeats 7]
"""

from __future__ import annotations

import argparse
import copy
import json
import statistics
import time
from collections.abc import Callable
from typing import Any

from cwm import json_values

STATE = {"board": [".", "x", "o"] * 3, "player": 0, "cards": [3, 5], "ante": [1, 3], "round": 1, "raises": 0,
         "public": None, "folded": None, "done": False, "last": 1, "acted": 1, "history": [["r", "c"], ["c"]]}
READS: dict[str, Callable[[Any], object]] = {
    "s['board'][4]": lambda s: s["board"][4],
    "for c in s['board']": lambda s: [c for c in s["board"]],
    "'x' in s['board']": lambda s: "x" in s["board"],
    "len(s['board'])": lambda s: len(s["board"]),
    "s['board'][:3]": lambda s: s["board"][:3],
    "list(s['board'])": lambda s: list(s["board"]),
    "dict(s)": lambda s: dict(s),
    "{**s, 'round': 2}": lambda s: {**s, "round": 2},
    "copy.deepcopy(s)": lambda s: copy.deepcopy(s),
    "json.dumps(s)": lambda s: json.dumps(s),
    "s == s2": lambda s: s == STATE,
}


def per_read(fn: Callable[[Any], object], value: Any, number: int) -> float:
    start = time.process_time()
    for _ in range(number):
        fn(value)
    return (time.process_time() - start) / number


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--number", type=int, default=20000)
    parser.add_argument("--repeats", type=int, default=7)
    args = parser.parse_args()
    frozen, plain = json_values.state(STATE), json_values.thaw(json_values.state(STATE))
    print(f"{'read':22} {'plain ns':>9} {'read-only ns':>13} {'ratio':>6}")
    for name, fn in READS.items():
        times: dict[str, list[float]] = {"plain": [], "frozen": []}
        for r in range(args.repeats):
            for mode in (("plain", "frozen") if r % 2 == 0 else ("frozen", "plain")):
                times[mode].append(per_read(fn, plain if mode == "plain" else frozen, args.number))
        p, f = (statistics.median(times[m]) * 1e9 for m in ("plain", "frozen"))
        print(f"{name:22} {p:9.0f} {f:13.0f} {f / p:6.2f}")


if __name__ == "__main__":
    main()
