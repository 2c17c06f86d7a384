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
  * gt-mcts: OpenSpiel's C++ ``MCTSBot`` with its C++ random-rollout evaluator, built as the arena's ``gt-mcts``
    builds it (``cwm.agents.native.NativeMCTSAgent``), in this process;
at --sims simulations and --rollouts random rollouts per leaf (solvers on, as each is run by default), in CPU
seconds of this process and every process under it (``cwm.sandbox.watch.tree_cpu``: the workers search in other
processes, and wall time would measure the machine's load). A fresh worker per position is started before
the clock runs. A worker's CPU is read in clock ticks (10 ms on Linux at 100 Hz), about one tic-tac-toe move
of a twin: --moves-per-reading K searches the position K times between two readings (in the same engine) and
divides. Prints ms per move and the ratios. A game with chance nodes (backgammon) is timed at decision
states: the openings' chance outcomes are drawn by their probabilities.

``--skip`` leaves engines out: at 1,000 x 10 on backgammon a synthesized model takes minutes a move, its twin
stepped passes the worker's 60 CPU-second move budget, and the Python ``MCTSBot`` takes tens of seconds. ``--recorded-evidence`` (with ``--bundle``) does not re-run the equivalence check:
the bundle is loaded (``cwm.bundle.load_bundle``, which refuses a twin whose evidence does not vouch for the
bytes of its model.py and twin.py) and the evidence it records decides whether the twin is timed and whether
its playout is used; the check of backgammon's twin costs about an hour of CPU.

By default the pair timed is a test fixture with a hand-written ``playout``: for tic-tac-toe the reference model
of the tests and its hand-written twin (tests/data/twins/ttt_fused.py); for connect four the real world model of
the shipped session (replayed from cwm.pipeline.recordings) and tests/data/twins/c4_fused.py (an earlier real fast
twin's functions and a hand-written playout). The output says so. ``--model``/``--twin`` time other files;
``--bundle DIR`` times a bundle's own model.py and twin.py, e.g. one made from a shipped real twin session
(docs/performance.md, "Real twins").

    python benchmarks/bench_twin.py [--game tic_tac_toe|connect_four|backgammon] [--sims 1000] [--rollouts 1]
        [--positions 6] [--repeats 3] [--moves-per-reading 1]
        [--model PATH --twin PATH | --bundle DIR [--recorded-evidence]]
        [--skip model|stepped|mctsbot ...]

e.g. backgammon's real twin with its playout against the C++ search at the paper's settings:

    python benchmarks/bench_twin.py --game backgammon --bundle BUNDLE --recorded-evidence --sims 1000 \
        --rollouts 10 --repeats 3 --skip model stepped mctsbot
"""

from __future__ import annotations

import argparse
import math
import sys
import tempfile
from collections.abc import Collection
from pathlib import Path
from typing import Any

import numpy as np
import pyspiel
from open_spiel.python.algorithms import mcts as os_mcts

from cwm.agents.native import NativeMCTSAgent
from cwm.agents.worker import WorkerAgent
from cwm.bundle import load_bundle
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


ENGINES = ("model", "twin", "stepped", "mctsbot", "gt-mcts")
LABELS = {"model": "checked model, contained worker", "twin": "twin, contained worker",
          "stepped": "twin stepped (playout not used), contained", "mctsbot": "OpenSpiel Python MCTSBot, C++ game",
          "gt-mcts": "OpenSpiel C++ MCTSBot (gt-mcts), C++ game"}


def timed_moves(model: str, twin: str, states: list[pyspiel.State], args: argparse.Namespace, *,
                playout: bool = False, skip: Collection[str] = ()) -> dict[str, float]:
    """CPU seconds per move of each engine, best of ``args.repeats`` per position, averaged over positions;
    ``playout``: the twin's evidence checked its playout (its rollouts are then played by it, and the twin is
    also timed stepped); ``skip``: engines not timed (of ``ENGINES``)."""
    config = SearchConfig(num_simulations=args.sims, rollouts=args.rollouts)
    engines = _engines(model, twin, args, config, playout=playout, skip=skip)
    best = {name: [math.inf] * len(states) for name in engines}
    for _ in range(args.repeats):
        for i, state in enumerate(states):
            for name, engine in engines.items():
                if isinstance(engine, WorkerAgent):
                    engine.reset()
                    engine._open()  # the worker's start is not part of the move
                t0 = tree_cpu()
                for _ in range(args.moves_per_reading):  # the same position searched again, in the same engine
                    engine.step(state.clone())
                best[name][i] = min(best[name][i], (tree_cpu() - t0) / args.moves_per_reading)
    for engine in engines.values():
        if isinstance(engine, WorkerAgent):
            engine.close()
    return {name: sum(v) / len(v) for name, v in best.items()}


def _engines(model: str, twin: str, args: argparse.Namespace, config: SearchConfig, *, playout: bool,
             skip: Collection[str]) -> dict[str, Any]:
    """The engines to time, by name, in the order they take turns (those in ``skip`` left out)."""
    unknown = set(skip) - set(ENGINES)
    if unknown or "twin" in skip:
        raise SystemExit(f"--skip takes {', '.join(n for n in ENGINES if n != 'twin')}, not {sorted(unknown or {'twin'})}")
    sources = {"model.py": model, "twin.py": twin}
    engines: dict[str, Any] = {}
    if "model" not in skip:
        engines["model"] = WorkerAgent(sources, args.game, config, name="model", seed=0, use_twin=False)
        assert engines["model"].planned_on == "model.py"
    engines["twin"] = WorkerAgent(sources, args.game, config, name="twin", seed=0,
                                  use_twin="playout" if playout else True)
    assert engines["twin"].planned_on == "twin.py"
    if playout and "stepped" not in skip:  # the same twin, stepped by cwm: what its own playout buys
        engines["stepped"] = WorkerAgent(sources, args.game, config, name="stepped", seed=0)
    game = pyspiel.load_game(args.game)
    if "mctsbot" not in skip:
        rs = np.random.RandomState(0)
        engines["mctsbot"] = os_mcts.MCTSBot(game, 2.0, args.sims, os_mcts.RandomRolloutEvaluator(args.rollouts, rs),
                                             random_state=rs)
    if "gt-mcts" not in skip:
        engines["gt-mcts"] = NativeMCTSAgent(game, config, seed=0)
    return engines


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
    parser.add_argument("--recorded-evidence", action="store_true",
                        help="with --bundle: use the twin evidence the bundle records (verified as the bundle loads) "
                             "instead of re-running the equivalence check")
    parser.add_argument("--skip", nargs="+", default=[], metavar="ENGINE",
                        help="engines not timed: model, stepped, mctsbot, gt-mcts")
    args = parser.parse_args()
    if args.moves_per_reading < 1:
        parser.error(f"--moves-per-reading must be at least 1, got {args.moves_per_reading}")
    if args.recorded_evidence and args.bundle is None:
        parser.error("--recorded-evidence needs --bundle (the evidence is the bundle's)")
    if args.bundle is not None:
        args.model, args.twin = args.bundle / "model.py", args.bundle / "twin.py"
    model, twin = _sources(args)
    evidence = _evidence(args, model, twin)
    print(f"equivalence {'evidence (recorded in the bundle)' if args.recorded_evidence else 'check'}: "
          f"{evidence['verdict']}: {evidence['reason']}")
    if evidence["verdict"] != "equivalent":
        raise SystemExit("the twin is not equivalent to the model; not timed")
    states = positions(args.positions, args.game)
    per_move = timed_moves(model, twin, states, args, playout=playout_checked(evidence), skip=args.skip)
    per = f", {args.moves_per_reading} moves a reading" if args.moves_per_reading > 1 else ""
    print(f"{args.game}: {args.sims} simulations x {args.rollouts} rollout(s), {args.positions} positions, best of "
          f"{args.repeats}{per}, CPU of this process and its children:")
    for name in ENGINES:
        if name in per_move:
            print(f"  {LABELS[name]:44} {per_move[name] * 1e3:9.1f} ms per move")
    print("  " + "   ".join(_ratios(per_move)) + "  (above 1: the second is faster)")


def _evidence(args: argparse.Namespace, model: str, twin: str) -> dict[str, Any]:
    """The twin's equivalence evidence: the bundle's own (``--recorded-evidence``), else a fresh check."""
    if not args.recorded_evidence:
        return check_equivalence(model, twin, settings=EquivalenceSettings())
    evidence = load_bundle(args.bundle, game=args.game).twin_evidence
    if evidence is None:
        raise SystemExit(f"{args.bundle}: the bundle has no twin evidence")
    return evidence


def _ratios(per_move: dict[str, float]) -> list[str]:
    """Each reference's CPU per move over each cwm engine's, and the model's over the twin's."""
    out = [f"{ref} / {n}: {per_move[ref] / per_move[n]:.2f}x" for ref in ("mctsbot", "gt-mcts") if ref in per_move
           for n in ("model", "twin", "stepped") if n in per_move]
    if "model" in per_move:
        out.append(f"model / twin: {per_move['model'] / per_move['twin']:.2f}x")
    return out


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
