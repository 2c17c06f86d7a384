"""MCTS speed (and, with --strength, playing strength) against OpenSpiel's Python and C++ MCTS, in one run.

Speed: simulations per CPU second (of this process and every process under it, ``cwm.sandbox.watch.tree_cpu``:
wall time would measure the machine's load too) from the initial state at 1,000 simulations, best of
--repeats (solvers off
on both sides, so that all run exactly the same algorithm and none stops early), for
  * ours (planners.MCTS) on the C++ ground truth,
  * OpenSpiel's Python MCTSBot on the same game,
  * OpenSpiel's C++ MCTSBot (step_with_policy),
on tic-tac-toe and connect four, and for ours on a dict-state Python tic-tac-toe model through
cwm.model.WorldModel (tests/data/planners/ttt_model.py, written the way an LLM writes one), bare and
under the 2 s per-call budget that bundles and cwm:FILE agents run with, plus OpenSpiel's Python and C++
MCTS on that model through cwm.adapter; and ISMCTS on Leduc poker against OpenSpiel's Python ISMCTSBot.
Ratios are against in-run baselines. For the model it also prints how much of a simulation the model's
own functions take (timed call by call), and so the best ratio any search on that model could reach.

Strength (--strength): the issue's full-size runs: ours vs random (100 games, must not lose), ours vs
itself (draws), ours vs OpenSpiel's Python MCTSBot at equal simulations and rollouts (200 games each
on tic-tac-toe and connect four, or the --strength-games given). Games 2k and 2k + 1 are one pair with the
seats swapped, and each line prints the arena's paired analysis (``cwm.stats.paired`` through
``cwm.arena.compare.verdict``): W/D/L, the score with its 95% interval, the matches and pairs, the minimum
detectable difference at 80% power, the p-value, and the verdict, with parity only by TOST within ±0.05 of
score.

    python benchmarks/bench_mcts.py [--rollouts 1] [--repeats 3] [--strength --games 200]
    python benchmarks/bench_mcts.py --strength-only --strength-games tic_tac_toe
"""

from __future__ import annotations

import argparse
import math
import time
from collections.abc import Callable
from pathlib import Path

import numpy as np
import pyspiel
from open_spiel.python.algorithms import ismcts as os_ismcts
from open_spiel.python.algorithms import mcts as os_mcts

from cwm import games, model
from cwm.adapter import as_openspiel_game
from cwm.agents import MCTSAgent, RandomAgent
from cwm.arena import compare, play_match
from cwm.sandbox import load_source
from cwm.sandbox.budget import call_budget
from cwm.sandbox.watch import cpu_per_call
from cwm.stats import paired
from planners import ISMCTS, MCTS
from planners.config import SearchConfig

MODEL = Path(__file__).resolve().parent.parent / "tests" / "data" / "planners" / "ttt_model.py"


def best_rates(searches: dict[str, Callable[[], object]], sims: int, repeats: int) -> dict[str, float]:
    """Simulations per CPU second (this process and its descendants) of each search, best of ``repeats``; the
    engines take turns in every repeat."""
    best = dict.fromkeys(searches, math.inf)
    for _ in range(repeats):
        for name, search in searches.items():
            best[name] = min(best[name], cpu_per_call(search))
    return {name: sims / t for name, t in best.items()}


def python_bot(game: pyspiel.Game, sims: int, rollouts: int, *, solve: bool, seed: int = 0) -> os_mcts.MCTSBot:
    rs = np.random.RandomState(seed)
    return os_mcts.MCTSBot(game, 2.0, sims, os_mcts.RandomRolloutEvaluator(rollouts, rs), solve=solve,
                           random_state=rs)


def cpp_bot(game: pyspiel.Game, sims: int, rollouts: int) -> pyspiel.MCTSBot:
    evaluator = pyspiel.RandomRolloutEvaluator(rollouts, 0)
    return pyspiel.MCTSBot(game, evaluator, 2.0, sims, 10_000, False, 0, False)


def speed_row(name: str, game: pyspiel.Game, state: object, args: argparse.Namespace) -> dict[str, float]:
    sims, r, k = args.sims, args.rollouts, args.repeats
    row = best_rates({
        "ours": lambda: MCTS(SearchConfig(num_simulations=sims, rollouts=r, solve=False), seed=0).search(state),
        "os_py": lambda: python_bot(game, sims, r, solve=False).step(state),
        "cpp": lambda: cpp_bot(game, sims, r).step_with_policy(state),
    }, sims, k)
    print(f"{name:34} {row['ours']:>10,.0f} {row['os_py']:>10,.0f} {row['cpp']:>11,.0f}   "
          f"{row['ours'] / row['os_py']:6.2f}x  {row['cpp'] / row['ours']:8.1f}x")
    return row


def speed(args: argparse.Namespace) -> None:
    print(f"simulations/s at {args.sims} simulations, {args.rollouts} rollout(s) per leaf, best of {args.repeats}")
    print(f"{'game / state':34} {'ours':>10} {'OS py':>10} {'OS C++':>11}   {'ours/py':>7}  {'C++/ours':>8}")
    rows = {}
    for name in args.strength_games.split(","):
        game = pyspiel.load_game(name)
        rows[name] = speed_row(f"{name} (C++ ground truth)", game, game.new_initial_state(), args)
    gt = games.load_game("tic_tac_toe")
    module = load_source(MODEL.read_text(), name="ttt_model")
    codec = model.ActionCodec.from_game(gt)
    wm = model.WorldModel(module, codec=codec, name="ttt_model")
    guarded = model.WorldModel(module, codec=codec, name="ttt_model", guard=call_budget(2.0))
    adapted = as_openspiel_game(wm, reference=gt)
    sims, r, k = args.sims, args.rollouts, args.repeats
    gt_state = gt.new_initial_state()
    rates = best_rates({
        "ours_model": lambda: MCTS(SearchConfig(num_simulations=sims, rollouts=r, solve=False), seed=0).search(wm.new_initial_state()),
        "ours_guarded": lambda: MCTS(SearchConfig(num_simulations=sims, rollouts=r, solve=False), seed=0).search(
            guarded.new_initial_state()),
        "py_model": lambda: python_bot(adapted, sims, r, solve=False).step(adapted.new_initial_state()),
        "cpp_model": lambda: cpp_bot(adapted, sims, r).step_with_policy(adapted.new_initial_state()),
        "os_py_gt": lambda: python_bot(gt, sims, r, solve=False).step(gt_state),
    }, sims, k)
    ours_model, py_model, cpp_model = rates["ours_model"], rates["py_model"], rates["cpp_model"]
    base = rows["tic_tac_toe"] | {"os_py": max(rows["tic_tac_toe"]["os_py"], rates["os_py_gt"])}
    print(f"{'tic_tac_toe (dict-state model)':34} {ours_model:>10,.0f} {py_model:>10,.0f} {cpp_model:>11,.0f}"
          f"   {ours_model / py_model:6.2f}x  {cpp_model / ours_model:8.1f}x")
    print(f"{'  ... under a 2 s per-call budget':34} {rates['ours_guarded']:>10,.0f}")
    own = model_seconds_per_simulation(module, codec, args)
    ismcts_row(args)
    print()
    print(f"ours on the dict-state model vs OpenSpiel Python MCTSBot on the C++ ground truth: "
          f"{ours_model / base['os_py']:.2f}x (under a 2 s per-call budget: {rates['ours_guarded'] / base['os_py']:.2f}x)")
    print(f"  the model's own functions take {own * 1e6:.1f} us of our {1e6 / ours_model:.1f} us per simulation "
          f"({own * ours_model:.0%}); a search costing nothing beyond them would be "
          f"{1 / (own * base['os_py']):.2f}x OpenSpiel's Python MCTSBot on the C++ ground truth")
    print(f"ours on the C++ ground truth vs OpenSpiel Python MCTSBot (solver off): tic-tac-toe "
          f"{base['ours'] / base['os_py']:.2f}x, connect four "
          f"{rows['connect_four']['ours'] / rows['connect_four']['os_py']:.2f}x")
    print(f"gap to OpenSpiel C++ MCTS: tic-tac-toe {base['cpp'] / base['ours']:.1f}x, connect four "
          f"{rows['connect_four']['cpp'] / rows['connect_four']['ours']:.1f}x")


def model_seconds_per_simulation(module: object, codec: model.ActionCodec, args: argparse.Namespace) -> float:
    """CPU seconds the model's own functions run per simulation of our search (best of ``--repeats``), timed
    call by call (``time.process_time``) through a guard, less the clock's own cost per call:
    the floor under any search that plans on this model."""
    spent, calls = [0.0], [0]

    def timing(fn: Callable[..., object], *fn_args: object) -> object:
        calls[0] += 1
        start = time.process_time()
        try:
            return fn(*fn_args)
        finally:
            spent[0] += time.process_time() - start

    clock = time.process_time
    empty = 0.0
    for _ in range(100_000):  # what timing adds to each call: the clock reads around nothing
        start = clock()
        empty += clock() - start
    per_call = empty / 100_000
    timed = model.WorldModel(module, codec=codec, name="ttt_model", guard=timing)
    best = math.inf
    for _ in range(args.repeats):
        spent[0], calls[0] = 0.0, 0
        MCTS(SearchConfig(num_simulations=args.sims, rollouts=args.rollouts, solve=False), seed=0).search(timed.new_initial_state())
        best = min(best, spent[0] - calls[0] * per_call)
    return best / args.sims


def ismcts_row(args: argparse.Namespace) -> None:
    game = pyspiel.load_game("leduc_poker")
    state = game.new_initial_state()
    state.apply_action(0)
    state.apply_action(3)
    sims, r, k = args.sims, args.rollouts, args.repeats
    rs = np.random.RandomState(0)
    bot = os_ismcts.ISMCTSBot(game, os_mcts.RandomRolloutEvaluator(r, rs), 2.0, sims, random_state=rs)
    rates = best_rates({"ours": lambda: ISMCTS(SearchConfig(num_simulations=sims, rollouts=r), seed=0).search(state),
                        "theirs": lambda: bot.step(state)}, sims, k)
    ours, theirs = rates["ours"], rates["theirs"]
    print(f"{'leduc_poker ISMCTS (GT resampling)':34} {ours:>10,.0f} {theirs:>10,.0f} {'':>11}   {ours / theirs:6.2f}x")


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
    """The paired analysis of ``scores`` (our return in each game; games 2k and 2k + 1 swap the seats)."""
    arr = np.asarray(scores)
    edges = arr[: len(arr) // 2 * 2] / 2  # a return of 1, 0, -1 is an edge of 1/2, 0, -1/2 over an even score
    c = paired([float(v) for v in edges.reshape(-1, 2).mean(axis=1)], bound=0.5, margin=compare.EQUIVALENCE_SHARE)
    row = {"agent": "ours", "opponent": "theirs", "outcome": "win/draw/loss", **c.to_json(),
           "needed_matches": None if c.needed_pairs is None else 2 * c.needed_pairs}
    mde = "-" if c.mde is None else f"±{c.mde:.3f}"
    print(f"{label:58} {2 * c.pairs} games ({c.pairs} pairs)  W/D/L {np.sum(arr > 0)}/{np.sum(arr == 0)}/"
          f"{np.sum(arr < 0)}  score {0.5 + c.mean:.3f} [{0.5 + c.lo:.3f}, {0.5 + c.hi:.3f}]  MDE {mde}  "
          f"p = {c.p_value:.2g}  {compare.verdict(row)}")


def strength(args: argparse.Namespace) -> None:
    sims, r, n = args.sims, args.strength_rollouts, args.games
    ttt = pyspiel.load_game("tic_tac_toe")
    print(f"\nstrength at {sims} simulations, {r} rollouts (OpenSpiel's bot with its default solver)")
    _report("tic_tac_toe: ours vs random", _scores(
        ttt, lambda i: MCTSAgent(SearchConfig(num_simulations=sims, rollouts=r), seed=i), lambda i: RandomAgent(seed=i), n // 2))
    _report("tic_tac_toe: ours vs ours", _scores(
        ttt, lambda i: MCTSAgent(SearchConfig(num_simulations=sims, rollouts=r), seed=i),
        lambda i: MCTSAgent(SearchConfig(num_simulations=sims, rollouts=r), seed=10_000 + i), n // 10))
    for name in args.strength_games.split(","):
        game = pyspiel.load_game(name)
        def opponent(i: int, g: pyspiel.Game = game) -> PythonBotAgent:
            return PythonBotAgent(g, sims, r, seed=i)

        _report(f"{name}: ours vs OpenSpiel Python MCTSBot", _scores(
            game, lambda i: MCTSAgent(SearchConfig(num_simulations=sims, rollouts=r), seed=i), opponent, n))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--sims", type=int, default=1000)
    parser.add_argument("--rollouts", type=int, default=1, help="rollouts per leaf in the speed runs (default 1)")
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--strength", action="store_true", help="also play the full-size strength matches")
    parser.add_argument("--strength-rollouts", type=int, default=10)
    parser.add_argument("--games", type=int, default=200)
    parser.add_argument("--strength-games", default="tic_tac_toe,connect_four",
                        help="the games of the match against OpenSpiel's MCTSBot (comma-separated)")
    parser.add_argument("--strength-only", action="store_true", help="play the strength matches, no speed runs")
    args = parser.parse_args()
    if not args.strength_only:
        speed(args)
    if args.strength or args.strength_only:
        strength(args)


if __name__ == "__main__":
    main()
