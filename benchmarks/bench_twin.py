"""What a twin buys: CPU time per MCTS move of a checked model against its twin, both contained, and OpenSpiel's
Python MCTSBot on the real game, in one run.

The twin is first put through the differential equivalence check (``cwm.sandbox.equivalence``) against the
model; a twin that fails it is not timed. Then, on the same positions (a few seeded random openings of
--game, bench_worker.positions), taking turns position by position, best of --repeats:
  * model: ``WorkerAgent`` planning on the checked model in a hardened worker (``use_twin=False``);
  * twin: the same, planning on the twin;
  * MCTSBot: OpenSpiel's Python ``MCTSBot`` on the C++ game, in this process;
at 1,000 simulations and one random rollout per leaf (solvers on, as each is run by default), in CPU seconds
of this process and every process under it (``cwm.sandbox.watch.tree_cpu``: the workers search in other
processes, and wall time would measure the machine's load). A fresh worker per position is started before
the clock runs. Prints ms per move and the ratios.

By default the pair timed is hand-written: the reference tic-tac-toe model of the tests and its hand-written
twin (tests/data/twins/ttt_fast.py); the output says so. ``--bundle DIR`` times a bundle's own model.py and
twin.py instead, e.g. one made from a shipped real twin session (docs/performance.md, "Real twins").

    python benchmarks/bench_twin.py [--game tic_tac_toe|connect_four] [--sims 1000] [--rollouts 1]
        [--positions 6] [--repeats 3] [--model PATH --twin PATH | --bundle DIR]
"""

from __future__ import annotations

import argparse
import math
import sys
from pathlib import Path

import numpy as np
import pyspiel
from open_spiel.python.algorithms import mcts as os_mcts

from cwm.agents.worker import WorkerAgent
from cwm.sandbox.equivalence import EquivalenceSettings, check_equivalence
from cwm.sandbox.watch import tree_cpu
from planners import SearchConfig

sys.path.insert(0, str(Path(__file__).resolve().parent))
from bench_worker import positions  # noqa: E402  (the same seeded openings)

DATA = Path(__file__).resolve().parent.parent / "tests" / "data"
MODEL = DATA / "reference" / "tic_tac_toe_model.py"
TWIN = DATA / "twins" / "ttt_fast.py"


def timed_moves(model: str, twin: str, states: list[pyspiel.State], args: argparse.Namespace) -> dict[str, float]:
    """CPU seconds per move of each engine, best of ``args.repeats`` per position, averaged over positions."""
    config = SearchConfig(num_simulations=args.sims, rollouts=args.rollouts)
    sources = {"model.py": model, "twin.py": twin}
    workers = {"model": WorkerAgent(sources, args.game, config, name="model", seed=0, use_twin=False),
               "twin": WorkerAgent(sources, args.game, config, name="twin", seed=0)}
    assert workers["model"].planned_on == "model.py" and workers["twin"].planned_on == "twin.py"
    rs = np.random.RandomState(0)
    bot = os_mcts.MCTSBot(pyspiel.load_game(args.game), 2.0, args.sims,
                          os_mcts.RandomRolloutEvaluator(args.rollouts, rs), random_state=rs)
    best = {name: [math.inf] * len(states) for name in ("model", "twin", "mctsbot")}
    for _ in range(args.repeats):
        for i, state in enumerate(states):
            for name, worker in workers.items():
                worker.reset()
                worker._open()  # the worker's start is not part of the move
                t0 = tree_cpu()
                worker.step(state.clone())
                best[name][i] = min(best[name][i], tree_cpu() - t0)
            t0 = tree_cpu()
            bot.step(state.clone())
            best["mctsbot"][i] = min(best["mctsbot"][i], tree_cpu() - t0)
    for worker in workers.values():
        worker.close()
    return {name: sum(v) / len(v) for name, v in best.items()}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--sims", type=int, default=1000)
    parser.add_argument("--rollouts", type=int, default=1)
    parser.add_argument("--positions", type=int, default=6)
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--game", default="tic_tac_toe", help="the OpenSpiel game the model is of (default tic_tac_toe)")
    parser.add_argument("--model", type=Path, default=MODEL, help="the checked model (default the tests' tic-tac-toe)")
    parser.add_argument("--twin", type=Path, default=TWIN, help="its twin")
    parser.add_argument("--bundle", type=Path, default=None, help="time this bundle's model.py and twin.py instead")
    args = parser.parse_args()
    if args.bundle is not None:
        args.model, args.twin = args.bundle / "model.py", args.bundle / "twin.py"
    model, twin = args.model.read_text(encoding="utf-8"), args.twin.read_text(encoding="utf-8")
    if (args.model, args.twin) == (MODEL, TWIN):
        print("model and twin: hand-written test fixtures")
    evidence = check_equivalence(model, twin, settings=EquivalenceSettings())
    print(f"equivalence check: {evidence['verdict']}: {evidence['reason']}")
    if evidence["verdict"] != "equivalent":
        raise SystemExit("the twin is not equivalent to the model; not timed")
    per_move = timed_moves(model, twin, positions(args.positions, args.game), args)
    print(f"{args.sims} simulations x {args.rollouts} rollout(s), {args.positions} positions, best of "
          f"{args.repeats}, CPU of this process and its children:")
    for name, label in (("model", "checked model, contained worker"), ("twin", "twin, contained worker"),
                        ("mctsbot", "OpenSpiel Python MCTSBot, C++ game")):
        print(f"  {label:40} {per_move[name] * 1e3:8.1f} ms per move")
    print(f"  MCTSBot / model: {per_move['mctsbot'] / per_move['model']:.2f}x   "
          f"MCTSBot / twin: {per_move['mctsbot'] / per_move['twin']:.2f}x   "
          f"model / twin: {per_move['model'] / per_move['twin']:.2f}x  (above 1: the second is faster)")


if __name__ == "__main__":
    main()
