"""CPU of a model's ``copy.deepcopy`` of a read-only state (``cwm.json_values.thaw``) now against the thaw that
visited every item (benchmarks/baselines/thaw_before.py), measured in the same run, modes alternating: on
the states of seeded games of the shipped real backgammon synthesis (whose ``apply_action`` starts with
``copy.deepcopy(state)``), and in MCTS on that model, where a tree state is deep-copied at each expansion and
at the first step of each rollout (the rollout's later states are the model's own plain dicts, which the
library never copies).

CPU is this process's (``time.process_time``), so other work on the machine does not enter it.

    python benchmarks/bench_copies.py [--states 200] [--sims 50] [--moves 2] [--repeats 5]
"""

from __future__ import annotations

import argparse
import copy
import random
import statistics
import sys
import time
from collections.abc import Callable
from pathlib import Path

from cwm import json_values
from planners.config import SearchConfig
from planners.mcts import MCTS

ROOT = Path(__file__).resolve().parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "baselines"))
import thaw_before  # noqa: E402
from bench_chance import backgammon_model, decision_states  # noqa: E402

NOW = json_values.thaw


def game_states(wm, count: int) -> list:  # noqa: ANN001
    """The read-only raw states of seeded random games on the model, ``count`` of them."""
    rng, found = random.Random(0), []
    while len(found) < count:
        state = wm.new_initial_state()
        while not state.is_terminal() and len(found) < count:
            found.append(state.raw)
            moves = [a for a, _ in state.chance_outcomes()] if state.is_chance_node() else state.legal_actions()
            state = state.child(rng.choice(moves))
    return found


def cpu(fn: Callable[[], object]) -> float:
    start = time.process_time()
    fn()
    return time.process_time() - start


def alternate(runs: dict[str, Callable[[], object]], repeats: int) -> dict[str, list[float]]:
    """CPU seconds of each run under each thaw, ``repeats`` times, the order alternating."""
    modes = {"before": thaw_before.thaw, "now": NOW}
    out: dict[str, list[float]] = {m: [] for m in modes}
    for r in range(repeats):
        for mode in (list(modes) if r % 2 == 0 else list(reversed(modes))):
            json_values.thaw = modes[mode]  # ReadOnlyDict/ReadOnlyList.__deepcopy__ look it up when called
            try:
                out[mode].append(sum(cpu(fn) for fn in runs.values()))
            finally:
                json_values.thaw = NOW
    return out


def show(label: str, times: dict[str, list[float]], unit: float, unit_name: str) -> None:
    ratios = sorted(a / b for a, b in zip(times["before"], times["now"]))
    med = {m: statistics.median(t) / unit for m, t in times.items()}
    print(f"{label}: before {med['before']:.3f} {unit_name}, now {med['now']:.3f} {unit_name} (medians); "
          f"before / now per run pair {', '.join(f'{r:.2f}' for r in ratios)} (median {statistics.median(ratios):.2f})")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--states", type=int, default=200)
    parser.add_argument("--sims", type=int, default=50)
    parser.add_argument("--moves", type=int, default=2)
    parser.add_argument("--repeats", type=int, default=5)
    args = parser.parse_args()
    wm = backgammon_model()
    raws = game_states(wm, args.states)
    copies = 50
    assert all(thaw_before.thaw(r) == copy.deepcopy(r) for r in raws)
    times = alternate({"deepcopy": lambda: [copy.deepcopy(r) for _ in range(copies) for r in raws]}, args.repeats)
    show(f"copy.deepcopy of a read-only backgammon state ({len(raws)} states x {copies})", times,
         len(raws) * copies * 1e-6, "us/copy")
    config = SearchConfig(num_simulations=args.sims, rollouts=1)
    states = decision_states(wm, args.moves)
    search = {f"move {i}": (lambda i=i, s=s: MCTS(config, seed=i).search(s)) for i, s in enumerate(states)}
    for run in search.values():
        run()  # warm-up: the model's own caches filled before either mode is timed
    times = alternate(search, args.repeats)
    show(f"MCTS {args.sims} x 1 on backgammon ({len(states)} moves)", times, len(states), "s/move")


if __name__ == "__main__":
    main()
