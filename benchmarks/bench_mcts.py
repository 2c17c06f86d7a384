"""MCTS speed (and, with --strength, playing strength) against OpenSpiel's Python and C++ MCTS, in one run.

Speed: simulations per second from the initial state at 1,000 simulations, best of --repeats, for
  * ours (planners.MCTS) on the C++ ground truth,
  * OpenSpiel's Python MCTSBot on the same game (solver off: the same algorithm; and its default, solver on),
  * OpenSpiel's C++ MCTSBot (step_with_policy),
on tic-tac-toe and connect four, and for ours on a dict-state Python tic-tac-toe model through
cwm.model.WorldModel (tests/data/planners/ttt_model.py, written the way an LLM writes one), plus
OpenSpiel's Python and C++ MCTS on that model through cwm.adapter. Ratios are against in-run baselines.

Strength (--strength): the issue's full-size runs: ours vs random (100 games, must not lose), ours vs
itself (draws), ours vs OpenSpiel's Python MCTSBot at equal simulations and rollouts (200 games each
on tic-tac-toe and connect four; mean score with a 95% interval).

    python benchmarks/bench_mcts.py [--rollouts 1] [--repeats 3] [--strength --games 200]
"""

from __future__ import annotations

import argparse
import math
import time
from collections.abc import Callable
from pathlib import Path

import numpy as np
import pyspiel
from open_spiel.python.algorithms import mcts as os_mcts

from cwm import games, model
from cwm.adapter import as_openspiel_game
from cwm.arena import play_match
from planners import MCTS, MCTSAgent, RandomAgent

MODEL = Path(__file__).resolve().parent.parent / "tests" / "data" / "planners" / "ttt_model.py"


def sims_per_second(search: Callable[[], object], sims: int, repeats: int) -> float:
    best = math.inf
    for _ in range(repeats):
        start = time.perf_counter()
        search()
        best = min(best, time.perf_counter() - start)
    return sims / best


def python_bot(game: pyspiel.Game, sims: int, rollouts: int, *, solve: bool, seed: int = 0) -> os_mcts.MCTSBot:
    rs = np.random.RandomState(seed)
    return os_mcts.MCTSBot(game, 2.0, sims, os_mcts.RandomRolloutEvaluator(rollouts, rs), solve=solve,
                           random_state=rs)


def cpp_bot(game: pyspiel.Game, sims: int, rollouts: int) -> pyspiel.MCTSBot:
    evaluator = pyspiel.RandomRolloutEvaluator(rollouts, 0)
    return pyspiel.MCTSBot(game, evaluator, 2.0, sims, 10_000, False, 0, False)


def speed_row(name: str, game: pyspiel.Game, state: object, args: argparse.Namespace) -> dict[str, float]:
    sims, r, k = args.sims, args.rollouts, args.repeats
    row = {
        "ours": sims_per_second(lambda: MCTS(num_simulations=sims, rollouts=r, seed=0).search(state), sims, k),
        "os_py": sims_per_second(lambda: python_bot(game, sims, r, solve=False).step(state), sims, k),
        "os_py_solver": sims_per_second(lambda: python_bot(game, sims, r, solve=True).step(state), sims, k),
        "cpp": sims_per_second(lambda: cpp_bot(game, sims, r).step_with_policy(state), sims, k),
    }
    print(f"{name:34} {row['ours']:>10,.0f} {row['os_py']:>10,.0f} {row['os_py_solver']:>10,.0f} "
          f"{row['cpp']:>11,.0f}   {row['ours'] / row['os_py']:5.2f}x  {row['ours'] / row['os_py_solver']:5.2f}x  "
          f"{row['cpp'] / row['ours']:6.1f}x")
    return row


def speed(args: argparse.Namespace) -> None:
    print(f"simulations/s at {args.sims} simulations, {args.rollouts} rollout(s) per leaf, best of {args.repeats}")
    print(f"{'game / state':34} {'ours':>10} {'OS py':>10} {'OS py+slv':>10} {'OS C++':>11}   "
          f"{'vs py':>6}  {'vs slv':>6}  {'C++/ours':>7}")
    rows = {}
    for name in ("tic_tac_toe", "connect_four"):
        game = pyspiel.load_game(name)
        rows[name] = speed_row(f"{name} (C++ ground truth)", game, game.new_initial_state(), args)
    gt = games.load_game("tic_tac_toe")
    wm = model.WorldModel(model.load_source(MODEL.read_text(), name="ttt_model"),
                          codec=model.ActionCodec.from_game(gt), name="ttt_model")
    adapted = as_openspiel_game(wm, reference=gt)
    sims, r, k = args.sims, args.rollouts, args.repeats
    ours_model = sims_per_second(lambda: MCTS(num_simulations=sims, rollouts=r, seed=0).search(
        wm.new_initial_state()), sims, k)
    py_model = sims_per_second(lambda: python_bot(adapted, sims, r, solve=False).step(
        adapted.new_initial_state()), sims, k)
    cpp_model = sims_per_second(lambda: cpp_bot(adapted, sims, r).step_with_policy(
        adapted.new_initial_state()), sims, k)
    base = rows["tic_tac_toe"]
    print(f"{'tic_tac_toe (dict-state model)':34} {ours_model:>10,.0f} {py_model:>10,.0f} {'':>10} {cpp_model:>11,.0f}"
          f"   {ours_model / py_model:5.2f}x")
    print()
    print(f"ours on the dict-state model vs OpenSpiel Python MCTSBot on the C++ ground truth: "
          f"{ours_model / base['os_py']:.2f}x (solver off), {ours_model / base['os_py_solver']:.2f}x (solver on)")
    print(f"ours on the C++ ground truth vs OpenSpiel Python MCTSBot (solver off): tic-tac-toe "
          f"{base['ours'] / base['os_py']:.2f}x, connect four "
          f"{rows['connect_four']['ours'] / rows['connect_four']['os_py']:.2f}x")
    print(f"gap to OpenSpiel C++ MCTS: tic-tac-toe {base['cpp'] / base['ours']:.1f}x, connect four "
          f"{rows['connect_four']['cpp'] / rows['connect_four']['ours']:.1f}x")


class PythonBotAgent:
    def __init__(self, game: pyspiel.Game, sims: int, rollouts: int, seed: int):
        self.bot = python_bot(game, sims, rollouts, solve=True, seed=seed)

    def step(self, state: pyspiel.State) -> int:
        return int(self.bot.step(state))


def _scores(game: pyspiel.Game, ours: Callable[[int], object], theirs: Callable[[int], object], n: int) -> list[float]:
    out = []
    for i in range(n):
        a, b = ours(i), theirs(i)
        returns = play_match(game, [a, b] if i % 2 == 0 else [b, a], seed=i)[0]  # type: ignore[list-item]
        out.append(returns[i % 2])
    return out


def _report(label: str, scores: list[float]) -> None:
    arr = np.asarray(scores)
    half = 1.96 * arr.std(ddof=1) / math.sqrt(len(arr))
    print(f"{label:58} n={len(arr):4d}  W/D/L {np.sum(arr > 0)}/{np.sum(arr == 0)}/{np.sum(arr < 0)}  "
          f"mean {arr.mean():+.3f} [{arr.mean() - half:+.3f}, {arr.mean() + half:+.3f}]")


def strength(args: argparse.Namespace) -> None:
    sims, r, n = args.sims, args.strength_rollouts, args.games
    ttt = pyspiel.load_game("tic_tac_toe")
    print(f"\nstrength at {sims} simulations, {r} rollouts (OpenSpiel's bot with its default solver)")
    _report("tic_tac_toe: ours vs random", _scores(
        ttt, lambda i: MCTSAgent(num_simulations=sims, rollouts=r, seed=i), lambda i: RandomAgent(seed=i), n // 2))
    _report("tic_tac_toe: ours vs ours", _scores(
        ttt, lambda i: MCTSAgent(num_simulations=sims, rollouts=r, seed=i),
        lambda i: MCTSAgent(num_simulations=sims, rollouts=r, seed=10_000 + i), n // 10))
    for name in ("tic_tac_toe", "connect_four"):
        game = pyspiel.load_game(name)
        _report(f"{name}: ours vs OpenSpiel Python MCTSBot", _scores(
            game, lambda i: MCTSAgent(num_simulations=sims, rollouts=r, seed=i),
            lambda i, g=game: PythonBotAgent(g, sims, r, seed=i), n))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--sims", type=int, default=1000)
    parser.add_argument("--rollouts", type=int, default=1, help="rollouts per leaf in the speed runs (default 1)")
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--strength", action="store_true", help="also play the full-size strength matches")
    parser.add_argument("--strength-rollouts", type=int, default=10)
    parser.add_argument("--games", type=int, default=200)
    args = parser.parse_args()
    speed(args)
    if args.strength:
        strength(args)


if __name__ == "__main__":
    main()
