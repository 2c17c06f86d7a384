"""Checking speed: ``cwm.checks.run_checks`` now against the implementation before the contract values module
(benchmarks/baselines/checks_before.py), side by side in one run, on about 10,000 tic-tac-toe transitions
in-process, CPU time (``time.process_time``), best of --repeats, each engine taking turns.

Both must give the same counts on the reference model (a correct model passes every check in both); the
current one also counts a first call on a new trajectory set separately (it works out, once per set, which
recorded observations hold a bool).

    python benchmarks/bench_checks.py [--transitions 10000] [--repeats 5]
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

from cwm import checks
from cwm.games import trajectories
from cwm.sandbox import load_source

ROOT = Path(__file__).resolve().parent
sys.path.insert(0, str(ROOT / "baselines"))
import checks_before  # noqa: E402

REFERENCE = ROOT.parent / "tests" / "data" / "reference" / "tic_tac_toe_model.py"


def record(transitions: int) -> list:
    out, seen, seed = [], 0, 0
    while seen < transitions:
        t = trajectories.record("tic_tac_toe", seed=seed)
        out.append(t)
        seen += len(t.steps)
        seed += 1
    return out


def cpu(fn) -> float:  # noqa: ANN001
    start = time.process_time()
    fn()
    return time.process_time() - start


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--transitions", type=int, default=10_000)
    parser.add_argument("--repeats", type=int, default=5)
    args = parser.parse_args()
    module = load_source(REFERENCE.read_text(), name="ttt_reference")
    trajs = record(args.transitions)
    first = cpu(lambda: checks.run_checks(module, trajs))
    new_report, old_report = checks.run_checks(module, trajs), checks_before.run_checks(module, trajs)
    counts = lambda r: ({k: (v.passed, v.total) for k, v in r.by_type.items()}, r.transitions_passed)  # noqa: E731
    assert counts(new_report) == counts(old_report) and new_report.all_passed, "the two disagree"
    best = {"before": float("inf"), "now": float("inf")}
    for _ in range(args.repeats):
        best["before"] = min(best["before"], cpu(lambda: checks_before.run_checks(module, trajs)))
        best["now"] = min(best["now"], cpu(lambda: checks.run_checks(module, trajs)))
    n = sum(len(t.steps) for t in trajs)
    print(f"{n} tic-tac-toe transitions ({new_report.executed} checks), CPU seconds, best of {args.repeats}")
    print(f"  before: {best['before']:.3f} s")
    print(f"  now:    {best['now']:.3f} s  ({best['before'] / best['now']:.2f}x faster; first call on a new "
          f"trajectory set {first:.3f} s, {best['before'] / first:.2f}x)")


if __name__ == "__main__":
    main()
