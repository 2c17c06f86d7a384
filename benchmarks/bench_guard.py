"""CPU of a sandboxed world-model check with one timer per replayed trajectory (``_Child.stretch``, the default)
against one timer per model call (two ``setitimer`` calls around each call: the payload's ``"stretch": False``),
measured in the same run, modes alternating, on the same tic-tac-toe trajectories and the same zygote. (An
in-process check under ``cwm.sandbox.budget.call_budget`` keeps a guard per call: there an overrun is one
failing check and the replay goes on.)

CPU is this process, the zygote and the job children it reaped (``cwm.sandbox.watch.tree_cpu``), so other
work on the machine does not enter it; each measured check is followed by a one-call job in the same window,
by which time the zygote has reaped the check's child (every window holds one such small job). Both modes
must give the same report (a correct model passes every check); the ratio of each pair (per call / stretch)
is printed with the medians and their spread.

    python benchmarks/bench_guard.py [--transitions 3000] [--repeats 7] [--isolation process|bwrap|auto]
"""

from __future__ import annotations

import argparse
import statistics
from pathlib import Path
from typing import Any

from bench_checks import (
    record,  # the check benchmark's games (tic-tac-toe, seeds 0, 1, ...); run from benchmarks/
)

from cwm.sandbox import CALL_JOB, CHECK_JOB, Sandbox
from cwm.sandbox.watch import tree_cpu

SOURCE = (Path(__file__).resolve().parents[1] / "tests/data/reference/tic_tac_toe_model.py").read_text()


def sandboxed(trajs: list, repeats: int, isolation: str) -> tuple[dict[str, list[float]], Any, str]:
    payloads = {"per call": {"trajectories": trajs, "stretch": False}, "stretch": {"trajectories": trajs}}
    cpu: dict[str, list[float]] = {mode: [] for mode in payloads}
    with Sandbox(isolation=isolation) as sb:  # type: ignore[arg-type]
        values = {mode: sb.run(CHECK_JOB, SOURCE, p).value for mode, p in payloads.items()}  # warm: payloads sent
        assert values["per call"] == values["stretch"], "the two modes disagree"
        for i in range(repeats):
            for mode in (list(payloads) if i % 2 == 0 else list(reversed(payloads))):
                start = tree_cpu()
                result = sb.run(CHECK_JOB, SOURCE, payloads[mode])
                sb.run(CALL_JOB, SOURCE, {"function": "get_initial_state"})  # the zygote has reaped the check's child
                cpu[mode].append(tree_cpu() - start)
                assert result.kind == "ok" and result.value == values[mode], result.error
        return cpu, values["stretch"], sb.mode


def show(cpu: dict[str, list[float]]) -> None:
    for mode, times in cpu.items():
        print(f"  {mode:9s} median {statistics.median(times) * 1e3:8.1f} ms  (min {min(times) * 1e3:.1f}, "
              f"max {max(times) * 1e3:.1f})")
    ratios = sorted(a / b for a, b in zip(cpu["per call"], cpu["stretch"]))
    print(f"  per call / stretch: median {statistics.median(ratios):.2f}x, ratio of medians "
          f"{statistics.median(cpu['per call']) / statistics.median(cpu['stretch']):.2f}x (paired runs: "
          f"{', '.join(f'{r:.2f}' for r in ratios)})")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--transitions", type=int, default=3000)
    parser.add_argument("--repeats", type=int, default=7)
    parser.add_argument("--isolation", default="process")
    args = parser.parse_args()
    trajs = record(args.transitions)
    cpu, report, mode = sandboxed(trajs, args.repeats, args.isolation)
    n = sum(v["total"] for v in report["by_type"].values())
    print(f"{len(trajs)} tic-tac-toe trajectories, {report['transitions_total']} transitions, {n} checks, "
          f"{args.repeats} alternating runs per mode.")
    print(f"sandbox [{mode}], CPU per job (this process + zygote + child):")
    show(cpu)


if __name__ == "__main__":
    main()
