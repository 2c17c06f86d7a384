"""Sandbox speed: checks per second through the sandbox versus in-process, a batch of checks in one child
versus a fresh child per check (CPU), the cost of a zygote restart, a 10,000-transition check set, the cost of the tamper check and of the module views, and call_budget's per-call
overhead. Prints ratios against in-run baselines.

    python benchmarks/bench_sandbox.py [--isolation auto|bwrap|process] [--repeats 30]

The model is the hand-written reference tic-tac-toe model (tests/data/reference), checked on trajectories of
the OpenSpiel ground truth recorded here with fixed seeds.
"""

from __future__ import annotations

import argparse
import os
import random
import statistics
import time
from collections.abc import Callable
from pathlib import Path

from cwm import checks
from cwm.games import trajectories
from cwm.sandbox import CHECK_JOB, BatchJob, Limits, Sandbox, load_source, tamper
from cwm.sandbox.budget import call_budget
from cwm.sandbox.imports import make_importer
from cwm.sandbox.watch import tree_cpu

SOURCE = (Path(__file__).resolve().parents[1] / "tests/data/reference/tic_tac_toe_model.py").read_text()


def timed(fn: Callable[[], object], repeats: int) -> tuple[float, object]:
    """Median CPU seconds (this process and its descendants: the zygote and its job children) of ``repeats``
    calls, and the last result."""
    times, out = [], None
    for _ in range(repeats):
        start = tree_cpu()
        out = fn()
        times.append(tree_cpu() - start)
    return statistics.median(times), out


def cpu_seconds(sb: Sandbox) -> float:
    """CPU seconds used so far by this process, the zygote and the zygote's reaped children (the job
    processes). Only the ``process`` mode's zygote is this process's child; under bwrap it is nested."""
    zygote = sb._zygote
    assert zygote is not None
    fields = Path(f"/proc/{zygote.proc.pid}/stat").read_text().rsplit(")", 1)[1].split()
    ticks = sum(int(f) for f in fields[11:15])  # utime, stime, cutime, cstime
    return time.process_time() + ticks / os.sysconf("SC_CLK_TCK")


def bench_cpu(sb: Sandbox, repeats: int) -> None:
    """CPU per check run, which (unlike wall time) does not depend on what else the machine is doing."""
    trajs = tuple(trajectories.record("tic_tac_toe", seed=s) for s in range(5))
    n = max(repeats, 50)
    start = time.process_time()
    for _ in range(n):
        checks.run_checks(load_source(SOURCE), trajs)
    in_process = (time.process_time() - start) / n
    sb.check_world_model(SOURCE, trajs)
    start = cpu_seconds(sb)
    for i in range(n):
        sb.check_world_model(SOURCE + f"\n# candidate {i}\n", trajs)
    sb.run("cwm.sandbox.jobs.check:call", SOURCE, {"function": "get_initial_state"})  # the zygote reaps the last
    sandboxed = (cpu_seconds(sb) - start) / (n + 1)
    print(f"CPU per 5-trajectory check of a new source: in-process {in_process * 1e3:.2f} ms, sandbox "
          f"[{sb.mode}] {sandboxed * 1e3:.2f} ms (parent + zygote + child; {sandboxed / in_process:.2f}x)")


def bench_batch(sb: Sandbox, repeats: int, size: int = 10) -> tuple[float, float]:
    """CPU per check of a new source (5 trajectories) when a batch of ``size`` runs in one child
    (``Sandbox.run_batch``) against a fresh child per check (``one_child=False``), alternating; both must give
    the same reports. CPU of this process, the zygote and its children, live, ended or reaped (``tree_cpu``).
    Returns the medians (per-check fork, one child per batch) in seconds per check."""
    trajs = tuple(trajectories.record("tic_tac_toe", seed=s) for s in range(5))
    payload = {"trajectories": list(trajs)}
    counter = iter(range(10**9))

    def batch() -> list[BatchJob]:
        return [BatchJob(CHECK_JOB, SOURCE + f"\n# candidate {next(counter)}\n", payload) for _ in range(size)]

    def settle() -> None:  # the zygote reaps the ended children while it waits for this job and after it
        sb.run("cwm.sandbox.jobs.check:call", SOURCE, {"function": "get_initial_state"})
        time.sleep(0.2)  # wall time only: every child has ended and been reaped (its CPU is the zygote's then)

    sb.run_batch(batch())
    settle()
    times: dict[bool, list[float]] = {False: [], True: []}
    for _ in range(max(3, repeats // 3)):
        for one_child in (False, True):
            start = tree_cpu()
            reports = sb.check_batch(batch(), one_child=one_child)
            settle()
            times[one_child].append((tree_cpu() - start) / (size + 1))
            assert all(r.all_passed for r in reports), reports[0].summary()
    fork, one = statistics.median(times[False]), statistics.median(times[True])
    print(f"CPU per 5-trajectory check of a new source, batches of {size} [{sb.mode}] (parent + zygote + "
          f"children): a fresh child per check {fork * 1e3:.2f} ms, one child per batch {one * 1e3:.2f} ms "
          f"({fork / one:.2f}x less)")
    return fork, one


def transitions(n: int) -> tuple:
    trajs, total, seed = [], 0, 0
    while total < n:
        t = trajectories.record("tic_tac_toe", seed=seed)
        trajs.append(t)
        total += len(t.steps)
        seed += 1
    return tuple(trajs)


def bench_five(sb: Sandbox, repeats: int) -> None:
    trajs = tuple(trajectories.record("tic_tac_toe", seed=s) for s in range(5))
    loaded = load_source(SOURCE)
    t_run, report = timed(lambda: checks.run_checks(loaded, trajs), repeats)
    t_load_run, _ = timed(lambda: checks.run_checks(load_source(SOURCE), trajs), repeats)
    sb.check_world_model(SOURCE, trajs)  # warm: zygote started, payload sent
    t_same, r_same = timed(lambda: sb.check_world_model(SOURCE, trajs), repeats)
    counter = iter(range(10**9))
    t_new, _ = timed(lambda: sb.check_world_model(SOURCE + f"\n# candidate {next(counter)}\n", trajs), repeats)
    assert r_same == report and report.all_passed, r_same.summary()
    n = report.executed
    print(f"5 trajectories ({report.transitions_total} transitions, {n} checks), median of {repeats}:")
    for label, t in (("in-process run_checks (model loaded)", t_run),
                     ("in-process load_source + run_checks", t_load_run),
                     (f"sandbox [{sb.mode}], same source", t_same),
                     (f"sandbox [{sb.mode}], new source each time", t_new)):
        print(f"  {label:44s} {t * 1e3:7.2f} ms  {n / t:9.0f} checks/s  {t / t_load_run:5.2f}x load+run"
              f"  {t / t_run:5.2f}x run")


def bench_restart(sb: Sandbox, repeats: int) -> None:
    job = lambda: sb.run("cwm.sandbox.jobs.check:call", SOURCE, {"function": "get_initial_state"})  # noqa: E731
    job()
    t_job, _ = timed(job, repeats)

    def restart_and_job() -> object:
        sb.restart()
        return job()

    t_restart, _ = timed(restart_and_job, max(3, repeats // 5))
    print(f"zygote restart [{sb.mode}]: restart + first job {t_restart * 1e3:.1f} ms vs a job on a warm zygote "
          f"{t_job * 1e3:.1f} ms (restart costs {(t_restart - t_job) * 1e3:.1f} ms, "
          f"{t_restart / t_job:.1f}x a job)")


def bench_10k(sb: Sandbox) -> None:
    trajs = transitions(10_000)
    loaded = load_source(SOURCE)
    t_in, report = timed(lambda: checks.run_checks(loaded, trajs), 1)
    t_first, r1 = timed(lambda: sb.check_world_model(SOURCE, trajs), 1)
    t_second, r2 = timed(lambda: sb.check_world_model(SOURCE, trajs), 1)
    assert r1 == r2 == report and report.all_passed
    print(f"{report.transitions_total} transitions ({report.executed} checks): in-process {t_in:.2f} s; "
          f"sandbox [{sb.mode}] first run {t_first:.2f} s (includes sending the trajectories), "
          f"cached {t_second:.2f} s ({t_second / t_in:.2f}x in-process)")


def bench_budget(repeats: int) -> None:
    def fn(x: int) -> int:
        return x + 1

    guard = call_budget(2.0)
    calls = 20_000
    t_direct, _ = timed(lambda: [fn(i) for i in range(calls)], repeats)
    t_guard, _ = timed(lambda: [guard(fn, i) for i in range(calls)], repeats)
    print(f"call_budget: {(t_guard - t_direct) / calls * 1e6:.2f} us overhead per call "
          f"({t_guard / t_direct:.1f}x a bare call of a trivial function)")


def in_fork(fn: Callable[[], float]) -> float:
    """``fn()`` (a number of seconds) in a forked child, as a job would run it: on copy-on-write pages."""
    read, write = os.pipe()
    pid = os.fork()
    if pid == 0:
        try:
            os.write(write, repr(fn()).encode())
        finally:
            os._exit(0)
    os.close(write)
    out = float(os.read(read, 64))
    os.close(read)
    os.waitpid(pid, 0)
    return out


def bench_tamper(repeats: int) -> None:
    """The tamper check at the end of a job: in a fresh fork of a process that took the baseline (like a child
    of the zygote), after a check run, with and without the class attributes."""
    trajs = (trajectories.record("tic_tac_toe", seed=0),)
    loaded = load_source(SOURCE)
    checks.run_checks(loaded, trajs)  # imports and warms what a job uses
    before = tamper.snapshot()
    modules_only = dict(before, classes={})

    def job_then_check(snapshot: dict[str, object]) -> float:
        checks.run_checks(loaded, trajs)  # the job: it touches the harness's pages first
        snapshot = dict(snapshot, random=random.getstate())  # random reseeds itself in a forked child
        start = time.process_time()
        found = tamper.tampering(snapshot)
        elapsed = time.process_time() - start
        return float("nan") if found else elapsed

    pairs = [(in_fork(lambda: job_then_check(before)), in_fork(lambda: job_then_check(modules_only)))
             for _ in range(repeats)]  # interleaved, so that the machine's load affects both alike
    full, bare = statistics.median(p[0] for p in pairs), statistics.median(p[1] for p in pairs)
    n_attrs = sum(len(v) for _, v in before["classes"].values())
    print(f"tamper check at the end of a job (fresh fork): {full * 1e3:.3f} ms with the attributes of "
          f"{len(before['classes'])} classes ({n_attrs} attributes) added, {bare * 1e3:.3f} ms with the module "
          f"attributes only (+{(full - bare) * 1e3:.3f} ms per job)")


def bench_views(repeats: int) -> None:
    """What the per-candidate module views cost: building them, and reading through them."""
    import math

    t_numpy, _ = timed(lambda: make_importer()("numpy"), repeats)
    t_all, _ = timed(lambda: [make_importer()(n) for n in ("math", "random", "collections", "json", "numpy")],
                     repeats)
    loop = "def f(n):\n    s = 0.0\n    for i in range(n):\n        s += m.sqrt(i)\n    return s\n"
    per = {}
    for label, module in (("real math", math), ("view of math", make_importer()("math"))):
        space: dict[str, object] = {"m": module}
        exec(loop, space)
        fn = space["f"]
        per[label] = timed(lambda fn=fn: fn(100_000), max(3, repeats // 5))[0] / 100_000  # type: ignore[operator]
    print(f"module views: a new candidate's numpy view {t_numpy * 1e6:.0f} us, math+random+collections+json+"
          f"numpy {t_all * 1e6:.0f} us; a math.sqrt(i) loop step {per['real math'] * 1e9:.1f} ns through the "
          f"real module, {per['view of math'] * 1e9:.1f} ns through a view")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--isolation", default="auto", choices=["auto", "bwrap", "process"])
    parser.add_argument("--repeats", type=int, default=30)
    parser.add_argument("--batch-only", action="store_true", help="only the batch comparison (bench_batch)")
    args = parser.parse_args()
    if args.batch_only:
        with Sandbox(limits=Limits(wall_s=120, cpu_s=120), isolation="process") as sb:
            bench_batch(sb, args.repeats)
        return
    with Sandbox(limits=Limits(wall_s=120, cpu_s=120), isolation=args.isolation) as sb:
        bench_five(sb, args.repeats)
        bench_restart(sb, args.repeats)
        bench_10k(sb)
    with Sandbox(limits=Limits(wall_s=120, cpu_s=120), isolation="process") as sb:
        bench_cpu(sb, args.repeats)
        bench_batch(sb, args.repeats)
    bench_tamper(max(5, args.repeats // 3))
    bench_views(args.repeats)
    bench_budget(max(3, args.repeats // 5))


if __name__ == "__main__":
    main()
