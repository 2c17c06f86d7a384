"""What a twin buys: CPU time per MCTS move of a checked model against its twin, both contained, and OpenSpiel's
Python MCTSBot on the real game, in one run.

The twin is first put through the differential equivalence check (``cwm.sandbox.equivalence``) against the
model, its own ``playout`` included where it has one; a twin that fails it is not timed. Then, on the same
positions (a few seeded random openings of --game, bench_worker.positions), taking turns position by position,
best of --repeats:
  * model: ``WorkerAgent`` planning on the checked model in a hardened worker (``use_twin=False``);
  * twin: the same, planning on the twin (its rollouts played by its own ``playout`` where the evidence records
    a passing check of it);
  * twin, stepped (only for a twin whose playout was checked): the same twin, its worker not told to use its
    ``playout``, so cwm steps its contract functions move by move in each rollout, as for a twin without one;
  * MCTSBot: OpenSpiel's Python ``MCTSBot`` on the C++ game, in this process;
at 1,000 simulations and one random rollout per leaf (solvers on, as each is run by default), in CPU seconds
of this process and every process under it (``cwm.sandbox.watch.tree_cpu``: the workers search in other
processes, and wall time would measure the machine's load). A fresh worker per position is started before
the clock runs. A worker's CPU is read in clock ticks (10 ms on Linux at 100 Hz), about one tic-tac-toe move
of a twin: --moves-per-reading K searches the position K times between two readings (in the same worker,
and K times with MCTSBot) and divides. Prints ms per move and the ratios.

By default the pair timed is a test fixture with a hand-written ``playout``: for tic-tac-toe the reference model
of the tests and its hand-written twin (tests/data/twins/ttt_fused.py); for connect four the real world model of
the shipped session (replayed from cwm.pipeline.recordings) and tests/data/twins/c4_fused.py (an earlier real fast
twin's functions and a hand-written playout). The output says so. ``--model``/``--twin`` time other files;
``--bundle DIR`` times a bundle's own model.py and twin.py, e.g. one made from a shipped real twin session
(docs/performance.md, "Real twins").

    python benchmarks/bench_twin.py [--game tic_tac_toe|connect_four] [--sims 1000] [--rollouts 1]
        [--positions 6] [--repeats 3] [--moves-per-reading 1] [--model PATH --twin PATH | --bundle DIR]
"""

from __future__ import annotations

import argparse
import math
import sys
import tempfile
from pathlib import Path

import numpy as np
import pyspiel
from open_spiel.python.algorithms import mcts as os_mcts

from cwm.agents.worker import WorkerAgent
from cwm.llm import make_client
from cwm.pipeline.recordings import recording_for
from cwm.sandbox.equivalence import EquivalenceSettings, check_equivalence, playout_checked
from cwm.sandbox.watch import tree_cpu
from cwm.synthesis import SynthesisSettings, synthesize_world_model
from planners import SearchConfig

sys.path.insert(0, str(Path(__file__).resolve().parent))
from bench_worker import positions  # noqa: E402  (the same seeded openings)

DATA = Path(__file__).resolve().parent.parent / "tests" / "data"
MODEL = DATA / "reference" / "tic_tac_toe_model.py"
TWINS = {"tic_tac_toe": DATA / "twins" / "ttt_fused.py", "connect_four": DATA / "twins" / "c4_fused.py"}


def shipped_model(game: str) -> str:
    """The real world model of ``game``'s shipped session (``cwm.pipeline.recordings``), replayed offline."""
    session = recording_for(game)
    if session is None:
        raise SystemExit(f"no shipped world-model session for {game}: pass --model")
    with tempfile.TemporaryDirectory() as run:
        return synthesize_world_model(game, make_client(f"replay:{session}"),
                                      SynthesisSettings.of("world_model", budget=20, num_test=0),
                                      run_dir=Path(run) / "wm").best_source


def timed_moves(model: str, twin: str, states: list[pyspiel.State], args: argparse.Namespace, *,
                playout: bool = False) -> dict[str, float]:
    """CPU seconds per move of each engine, best of ``args.repeats`` per position, averaged over positions;
    ``playout``: the twin's evidence checked its playout (its rollouts are then played by it, and the twin is
    also timed stepped)."""
    config = SearchConfig(num_simulations=args.sims, rollouts=args.rollouts)
    sources = {"model.py": model, "twin.py": twin}
    workers = {"model": WorkerAgent(sources, args.game, config, name="model", seed=0, use_twin=False),
               "twin": WorkerAgent(sources, args.game, config, name="twin", seed=0,
                                   use_twin="playout" if playout else True)}
    if playout:  # the same twin, stepped by cwm: what its own playout buys
        workers["stepped"] = WorkerAgent(sources, args.game, config, name="stepped", seed=0)
    assert workers["model"].planned_on == "model.py" and workers["twin"].planned_on == "twin.py"
    rs = np.random.RandomState(0)
    bot = os_mcts.MCTSBot(pyspiel.load_game(args.game), 2.0, args.sims,
                          os_mcts.RandomRolloutEvaluator(args.rollouts, rs), random_state=rs)
    best = {name: [math.inf] * len(states) for name in (*workers, "mctsbot")}
    for _ in range(args.repeats):
        for i, state in enumerate(states):
            for name, worker in workers.items():
                worker.reset()
                worker._open()  # the worker's start is not part of the move
                t0 = tree_cpu()
                for _ in range(args.moves_per_reading):  # the same position searched again, in the same worker
                    worker.step(state.clone())
                best[name][i] = min(best[name][i], (tree_cpu() - t0) / args.moves_per_reading)
            t0 = tree_cpu()
            for _ in range(args.moves_per_reading):
                bot.step(state.clone())
            best["mctsbot"][i] = min(best["mctsbot"][i], (tree_cpu() - t0) / args.moves_per_reading)
    for worker in workers.values():
        worker.close()
    return {name: sum(v) / len(v) for name, v in best.items()}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--sims", type=int, default=1000)
    parser.add_argument("--rollouts", type=int, default=1)
    parser.add_argument("--positions", type=int, default=6)
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--moves-per-reading", type=int, default=1,
                        help="moves searched between two clock readings (default 1): a worker's CPU is read in "
                             "clock ticks (10 ms here), as long as a tic-tac-toe move, so more moves a reading "
                             "resolve it")
    parser.add_argument("--game", default="tic_tac_toe", help="the OpenSpiel game the model is of (default tic_tac_toe)")
    parser.add_argument("--model", type=Path, default=None,
                        help="the checked model (default: tic-tac-toe the tests' reference, else the shipped real model)")
    parser.add_argument("--twin", type=Path, default=None, help="its twin (default: the game's fixture with playout)")
    parser.add_argument("--bundle", type=Path, default=None, help="time this bundle's model.py and twin.py instead")
    args = parser.parse_args()
    if args.moves_per_reading < 1:
        parser.error(f"--moves-per-reading must be at least 1, got {args.moves_per_reading}")
    if args.bundle is not None:
        args.model, args.twin = args.bundle / "model.py", args.bundle / "twin.py"
    model, twin = _sources(args)
    evidence = check_equivalence(model, twin, settings=EquivalenceSettings())
    print(f"equivalence check: {evidence['verdict']}: {evidence['reason']}")
    if evidence["verdict"] != "equivalent":
        raise SystemExit("the twin is not equivalent to the model; not timed")
    per_move = timed_moves(model, twin, positions(args.positions, args.game), args, playout=playout_checked(evidence))
    per = f", {args.moves_per_reading} moves a reading" if args.moves_per_reading > 1 else ""
    print(f"{args.game}: {args.sims} simulations x {args.rollouts} rollout(s), {args.positions} positions, best of "
          f"{args.repeats}{per}, CPU of this process and its children:")
    for name, label in (("model", "checked model, contained worker"), ("twin", "twin, contained worker"),
                        ("stepped", "twin stepped (playout not used), contained"),
                        ("mctsbot", "OpenSpiel Python MCTSBot, C++ game")):
        if name in per_move:
            print(f"  {label:42} {per_move[name] * 1e3:8.1f} ms per move")
    ratios = [f"MCTSBot / {n}: {per_move['mctsbot'] / per_move[n]:.2f}x" for n in ("model", "twin", "stepped")
              if n in per_move]
    print("  " + "   ".join(ratios) + f"   model / twin: {per_move['model'] / per_move['twin']:.2f}x  "
          f"(above 1: the second is faster)")


def _sources(args: argparse.Namespace) -> tuple[str, str]:
    """The model and twin sources to time, saying where the defaults come from."""
    twin_path = args.twin or TWINS.get(args.game)
    if twin_path is None:
        raise SystemExit(f"no default twin for {args.game}: pass --twin (or --bundle)")
    if args.model is not None:
        model = args.model.read_text(encoding="utf-8")
    elif args.game == "tic_tac_toe":
        model = MODEL.read_text(encoding="utf-8")
        print("model: the tests' reference tic-tac-toe model (hand-written)")
    else:
        model = shipped_model(args.game)
        print(f"model: the real world model of the shipped {args.game} session")
    if args.twin is None:
        print(f"twin: {twin_path.relative_to(DATA.parent.parent)} (a test fixture; its playout hand-written)")
    return model, twin_path.read_text(encoding="utf-8")


if __name__ == "__main__":
    main()
