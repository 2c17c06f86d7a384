"""OpenSpiel's C++ search against cwm's Python planner at equal settings: GT-MCTS at connect four and
GT-ISMCTS at Leduc poker (``cwm.agents.native``), each against the Python planner with the same simulations
and rollouts, and against one with a tenth of them (a difference the run must be able to show).

Each comparison plays --pairs seat-swapped pairs on one deal each and prints the arena's paired analysis
(``bench_rollout_cutoff.paired_duel``: score or edge, 95% bounded-mean Clopper-Pearson interval over pairs,
matches, minimum detectable difference at 80% power, verdict). No difference detected is not parity: the
MDE says how large a gap could have gone unseen.

    python benchmarks/bench_native.py [--pairs 100] [--seed 0]
"""

from __future__ import annotations

import argparse
import dataclasses
import sys
from pathlib import Path

from cwm import games
from cwm.agents import ISMCTSAgent, MCTSAgent
from cwm.agents.native import NativeISMCTSAgent, NativeMCTSAgent
from cwm.arena import compare
from planners.config import SearchConfig

sys.path.insert(0, str(Path(__file__).resolve().parent))
from bench_rollout_cutoff import paired_duel, shown  # noqa: E402

CASES = {  # game: (C++ agent, Python agent, settings), the settings of tests/agents/test_native.py
    "connect_four": (NativeMCTSAgent, MCTSAgent, SearchConfig(num_simulations=30, rollouts=2)),
    "leduc_poker": (NativeISMCTSAgent, ISMCTSAgent, SearchConfig(num_simulations=40, rollouts=2)),
}


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--pairs", type=int, default=100, help="seat-swapped pairs per comparison (default 100)")
    p.add_argument("--seed", type=int, default=0, help="seeds the deals (default 0)")
    p.add_argument("--games", default=",".join(CASES), help=f"comma list of {', '.join(CASES)} (default both)")
    args = p.parse_args()
    if args.pairs < 1:
        p.error("--pairs must be at least 1")
    rows = []
    for game in args.games.split(","):
        if game not in CASES:
            p.error(f"--games: {game!r} is not one of {', '.join(CASES)}")
        native, python, config = CASES[game]
        loaded = games.load_game(game)
        tenth = dataclasses.replace(config, num_simulations=max(1, config.num_simulations // 10))
        for label, settings in (("python, same settings", config), ("python, a tenth of the simulations", tenth)):
            row = paired_duel(game, lambda i, c=config, a=native, g=loaded: a(g, c, seed=i),
                              lambda i, s=settings, a=python: a(s, seed=10_000 + i), args.pairs,
                              labels=(f"{game} C++ ({config.num_simulations} sims, {config.rollouts} rollouts)",
                                      f"{label} ({settings.num_simulations} sims)"), seed=args.seed)
            rows.append(row)
            print(f"{row['agent']} vs {row['opponent']}: {shown(row)}", flush=True)
    print()
    print(compare.markdown([r for r in rows if r["outcome"] != "payoff"]))
    print(compare.markdown([r for r in rows if r["outcome"] == "payoff"]))


if __name__ == "__main__":
    main()
