"""The CWM-ISMCTS agent with a right model and right inference against GT-ISMCTS at Leduc poker: the oracle
model (``cwm.games.oracle``) with the hand-written reference inference (tests/data/reference), against
ISMCTS on the real game, both at the same settings (40 simulations, 2 rollouts, as
tests/agents/test_cwm_ismcts_level.py).

It plays --pairs seat-swapped pairs on one deal each and prints the arena's paired analysis
(``bench_rollout_cutoff.paired_duel``: the CWM agent's edge, half the mean payoff difference, with its 95%
bounded-mean Clopper-Pearson interval over pairs, matches, minimum detectable difference at 80% power and
verdict, with the equivalence test at the arena's margin of 5% of the payoff range). The agent's draws
rejected and moves that fell back to random play are counted and printed.

    python benchmarks/bench_cwm_ismcts_level.py [--pairs 100] [--seed 0]
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from cwm.agents import CWMAgent, ISMCTSAgent, inference_sampler
from cwm.arena import compare
from cwm.contract import INFERENCE_API
from cwm.games.oracle import oracle_model
from cwm.sandbox import load_source
from planners.config import SearchConfig

ROOT = Path(__file__).resolve().parent
sys.path.insert(0, str(ROOT))
from bench_rollout_cutoff import paired_duel, shown  # noqa: E402

REFERENCE = ROOT.parent / "tests" / "data" / "reference" / "leduc_poker_inference.py"
CONFIG = SearchConfig(num_simulations=40, rollouts=2)


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--pairs", type=int, default=100, help="seat-swapped pairs (default 100)")
    p.add_argument("--seed", type=int, default=0, help="seeds the deals (default 0)")
    args = p.parse_args()
    if args.pairs < 1:
        p.error("--pairs must be at least 1")
    inference = load_source(REFERENCE.read_text(encoding="utf-8"), name="leduc_inference", api=INFERENCE_API)
    oracle = oracle_model("leduc_poker")
    sampler = inference_sampler(oracle, inference.resample_history)
    made: list[CWMAgent] = []

    def cwm(i: int) -> CWMAgent:
        made.append(CWMAgent(oracle, "leduc_poker", CONFIG, sampler=sampler, seed=i))
        return made[-1]

    row = paired_duel("leduc_poker", cwm, lambda i: ISMCTSAgent(CONFIG, seed=10_000 + i), args.pairs,
                      labels=("cwm-ismcts (oracle model, reference inference)", "gt-ismcts"), seed=args.seed)
    stats = [a.stats() for a in made]
    print(f"leduc_poker, {CONFIG.num_simulations} simulations, {CONFIG.rollouts} rollouts each: {shown(row)}")
    print(f"draws rejected: {sum(s['rejected_draws'] for s in stats)}, moves that fell back to random play: "
          f"{sum(s['fallback_moves'] for s in stats)}")
    print()
    print(compare.markdown([row]))


if __name__ == "__main__":
    main()
