"""The rollout cutoff's effect on strength at equal time: MCTS whose rollouts stop after K moves (scored by
the neutral value, no value function) against MCTS with whole-game rollouts, each given the same time per
move.

For each cutoff K the capped agent's simulations are set so that its mean time per move matches the
uncapped agent's (both timed on the same decision states of a random game, in this run), then the two
play --games games, alternating seats; the capped agent's mean return is printed with its 95% interval
(0: level; zero-sum games, so > 0 means the cutoff helps at equal time).

    python benchmarks/bench_rollout_cutoff.py [--game backgammon] [--sims 20] [--cutoffs 10,40] [--games 20]
"""

from __future__ import annotations

import argparse
import dataclasses
import time

import numpy as np

from cwm import cost, games
from cwm.arena import play_match
from cwm.stats import mean_interval
from planners import MCTSAgent
from planners.config import SearchConfig


def seconds_per_move(config: SearchConfig, states: list) -> float:
    agent = MCTSAgent(config, seed=0)
    start = time.process_time()
    for state in states:
        agent.step(state.clone())
    return (time.process_time() - start) / len(states)


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--game", default="backgammon")
    p.add_argument("--sims", type=int, default=20, help="simulations of the whole-rollout agent (default 20)")
    p.add_argument("--rollouts", type=int, default=1)
    p.add_argument("--cutoffs", default="10,40", help="rollout cutoffs K to try (default 10,40)")
    p.add_argument("--games", type=int, default=20, help="games per cutoff, seats alternating (default 20)")
    args = p.parse_args()
    loaded = games.load_game(args.game)
    states = cost.decision_states(loaded, np.random.default_rng(11))[::10][:6]
    full = SearchConfig(num_simulations=args.sims, rollouts=args.rollouts)
    budget = seconds_per_move(full, states)
    print(f"{args.game}: whole-game rollouts at {args.sims} simulations: {budget:.3f} s/move "
          f"(the time both agents get)")
    for cutoff in (int(c) for c in args.cutoffs.split(",")):
        probe = dataclasses.replace(full, max_rollout_steps=cutoff)
        per_sim = seconds_per_move(probe, states) / args.sims
        capped = dataclasses.replace(probe, num_simulations=max(1, round(budget / per_sim)))
        scores = []
        for i in range(args.games):
            a, b = MCTSAgent(capped, seed=i), MCTSAgent(full, seed=10_000 + i)
            returns, *_ = play_match(loaded, [a, b] if i % 2 == 0 else [b, a], seed=i)
            scores.append(returns[i % 2])
        mean, lo, hi = mean_interval(scores)
        print(f"  cutoff {cutoff}: {capped.num_simulations} simulations in the same time; mean return "
              f"{mean:+.2f} [{lo:+.2f}, {hi:+.2f}] over {args.games} games", flush=True)


if __name__ == "__main__":
    main()
