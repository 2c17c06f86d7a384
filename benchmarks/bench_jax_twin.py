"""What a JAX twin buys: batched random-play transitions per CPU second of a JAX twin run contained (in a
sandbox child, as every JAX twin runs), against OpenSpiel's own tic-tac-toe stepped in Python in this process,
in one run; and the issue's target line (>= 500,000 transitions per CPU second on tic-tac-toe).

The twin plays ``--batch`` games at once for ``--steps`` steps (``cwm.jax_contract.random_playouts_fn``: one
jitted ``lax.scan`` of a ``vmap``ped step, uniformly random legal actions, chance drawn with explicit keys,
finished games restarted). Its CPU is measured from outside, as this process and every process under it
(``cwm.sandbox.watch.tree_cpu``), by difference: one job of 1 run against one of 1 + ``--repeats`` runs, both
importing JAX and compiling the same program, so the difference is the CPU of ``--repeats`` runs alone.
The reference plays uniformly random games of OpenSpiel's C++ tic-tac-toe from Python (``legal_actions``,
``apply_action``) for ``--reference-steps`` transitions, in this process's CPU time. Wall time is not used
(the machine's load would decide it).

By default the twin timed is the hand-written fixture tests/fixtures/jax_twins/tic_tac_toe.py (the output says
so); ``--bundle DIR`` times a bundle's ``jax_twin.py`` (the bundle is verified first: its evidence and the
twin along the stored games).

    python benchmarks/bench_jax_twin.py [--batch 1024] [--steps 256] [--repeats 20] [--bundle DIR]
"""

from __future__ import annotations

import argparse
import math
import random
import time
from pathlib import Path

import pyspiel

from cwm import games
from cwm.sandbox import Limits, Sandbox
from cwm.sandbox.verdicts import JAX_PLAYOUTS_JOB
from cwm.sandbox.watch import tree_cpu

FIXTURE = Path(__file__).resolve().parent.parent / "tests" / "fixtures" / "jax_twins" / "tic_tac_toe.py"
TARGET = 500_000  # transitions per CPU second, the line for tic-tac-toe
LIMITS = Limits(wall_s=900.0, cpu_s=600.0, memory_mb=4096, per_call_s=300.0)


def twin_rate(source: str, spec: games.GameSpec, args: argparse.Namespace) -> tuple[float, int, float, float]:
    """Transitions per CPU second of the contained twin, the transitions and CPU seconds it is measured on,
    and the rate the child measured itself (``time.process_time`` around each run: a cross-check only)."""
    codec = games.action_codec(spec)
    payload = {"codec": codec.to_json(), "num_players": spec.players, "batch": args.batch, "steps": args.steps,
               "seed": 0}
    with Sandbox(limits=LIMITS) as box:
        box.run(JAX_PLAYOUTS_JOB, source, dict(payload, repeats=1), policy="jax")  # the zygote warmed up
        spent = []
        for repeats in (1, 1 + args.repeats):
            t0 = tree_cpu()
            result = box.run(JAX_PLAYOUTS_JOB, source, dict(payload, repeats=repeats), policy="jax")
            spent.append(tree_cpu() - t0)
            if not result.ok:
                raise SystemExit(f"the twin could not be run: {result.kind}: {result.error.splitlines()[0]}")
        transitions = sum(result.value["transitions"][1:])
    cpu, own = spent[1] - spent[0], sum(result.value["cpu_s"][1:])
    # too little work to tell from the variation in compiling (or from one clock tick): no rate
    return (transitions / cpu if cpu > 0 else math.nan), transitions, cpu, (transitions / own if own > 0 else math.nan)


def reference_rate(game: str, steps: int, seed: int = 0) -> tuple[float, int, float]:
    """Transitions per CPU second of OpenSpiel's C++ game stepped from Python with uniformly random moves."""
    rng, loaded, done = random.Random(seed), pyspiel.load_game(game), 0
    t0 = time.process_time()
    while done < steps:
        state = loaded.new_initial_state()
        while not state.is_terminal() and done < steps:
            if state.is_chance_node():
                outcomes, probs = zip(*state.chance_outcomes())
                state.apply_action(rng.choices(outcomes, probs)[0])
            else:
                state.apply_action(rng.choice(state.legal_actions()))
            done += 1
    cpu = time.process_time() - t0
    return (done / cpu if cpu > 0 else math.nan), done, cpu


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--bundle", help="time this bundle's jax_twin.py (default: the hand-written fixture)")
    p.add_argument("--batch", type=int, default=1024, help="games played at once (default 1024)")
    p.add_argument("--steps", type=int, default=256, help="steps of each run (default 256)")
    p.add_argument("--repeats", type=int, default=20, help="timed runs (default 20: the CPU of compiling, which "
                                                           "the difference cancels, varies by a few tenths of a "
                                                           "second)")
    p.add_argument("--reference-steps", type=int, default=200_000, help="OpenSpiel transitions (default 200,000)")
    args = p.parse_args(argv)
    if args.bundle:
        from cwm import bundle as bundles

        loaded = bundles.load_bundle(args.bundle)
        if loaded.jax_twin is None:
            raise SystemExit(f"{args.bundle}: the bundle has no jax_twin.py")
        source, spec, what = loaded.jax_twin, loaded.spec, f"the JAX twin of {args.bundle}"
    else:
        source, spec = FIXTURE.read_text(encoding="utf-8"), games.resolve("tic_tac_toe")
        what = f"the hand-written JAX twin fixture {FIXTURE.name} (not LLM-written)"
    rate, transitions, cpu, inside = twin_rate(source, spec, args)
    if not rate > 0:
        raise SystemExit(f"too little work to measure ({cpu:.2f} CPU s by difference): raise --repeats or --steps")
    ref, ref_steps, ref_cpu = reference_rate(spec.openspiel, args.reference_steps)
    print(f"{spec.name}: {what}, contained, batch {args.batch} x {args.steps} steps x {args.repeats} runs")
    print(f"  JAX twin:  {rate:,.0f} transitions per CPU second ({transitions:,} transitions in {cpu:.2f} CPU s, "
          f"this process and its children, compile excluded by difference; the child's own clock around the "
          f"runs: {inside:,.0f})")
    print(f"  OpenSpiel: {ref:,.0f} transitions per CPU second (C++ {spec.openspiel} stepped from Python, "
          f"{ref_steps:,} transitions in {ref_cpu:.2f} CPU s)")
    print(f"  ratio: {rate / ref:.1f}x OpenSpiel stepped from Python")
    if spec.name == "tic_tac_toe":
        print(f"  target: >= {TARGET:,} transitions per CPU second: {'met' if rate >= TARGET else 'NOT met'}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
