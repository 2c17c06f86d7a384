"""The rollout cutoff's effect on strength at equal time: MCTS whose rollouts stop after K moves against MCTS
with whole-game rollouts, each given the same time per move; with ``--value``, also the cut-off playouts
scored by a value function (``SearchConfig(leaf="rollout")``) and the value function at the leaves instead
of rollouts (``leaf="value"``).

For each variant the challenger's simulations are set so that its mean time per move matches the
whole-rollout agent's (both timed on the same decision states of a random game, in this run), then the two
play --games games, alternating seats; the challenger's mean return is printed with its 95% interval
(0: level; zero-sum games, so > 0 means the variant is stronger at equal time).

``--value`` uses a hand-written connect four heuristic (open lines of four, below), so it needs
``--game connect_four``: the benchmark measures how the search combines a value with rollouts, not a
synthesized value function.

    python benchmarks/bench_rollout_cutoff.py [--game backgammon] [--sims 20] [--cutoffs 10,40] [--games 20]
    python benchmarks/bench_rollout_cutoff.py --game connect_four --sims 100 --cutoffs 4,12 --value
"""

from __future__ import annotations

import argparse
import dataclasses
import math
import time
from collections.abc import Callable
from typing import Any

import numpy as np

from cwm import games
from cwm.agents import MCTSAgent
from cwm.arena import cost, play_match
from cwm.stats import mean_interval
from planners.config import SearchConfig

ValueFn = Callable[[Any, int], float]
ROWS, COLS = 6, 7
WINDOWS = [[(r + i * dr, c + i * dc) for i in range(4)]
           for r in range(ROWS) for c in range(COLS) for dr, dc in ((0, 1), (1, 0), (1, 1), (1, -1))
           if 0 <= r + 3 * dr < ROWS and 0 <= c + 3 * dc < COLS]


def connect_four_value(state: Any, player: int) -> float:
    """A hand-written heuristic: each line of four holding one player's marks only counts for that player by
    the square of its marks; the difference, squashed into (-1, 1). The true return at the end."""
    if state.is_terminal():
        return float(state.returns()[player])
    board = str(state).split()
    score = 0
    for window in WINDOWS:
        cells = [board[r][c] for r, c in window]
        x, o = cells.count("x"), cells.count("o")
        if not (x and o):
            score += x * x - o * o
    return math.tanh(score / 40) * (1 if player == 0 else -1)


def seconds_per_move(config: SearchConfig, states: list, value_fn: ValueFn | None) -> float:
    agent = MCTSAgent(config, value_fn=value_fn, seed=0)
    start = time.process_time()
    for state in states:
        agent.step(state.clone())
    return (time.process_time() - start) / len(states)


def duel(loaded: Any, challenger: SearchConfig, value_fn: ValueFn | None, full: SearchConfig,
         games_: int) -> tuple[float, float, float]:
    scores = []
    for i in range(games_):
        a, b = MCTSAgent(challenger, value_fn=value_fn, seed=i), MCTSAgent(full, seed=10_000 + i)
        returns, *_ = play_match(loaded, [a, b] if i % 2 == 0 else [b, a], seed=i)
        scores.append(returns[i % 2])
    return mean_interval(scores)


def variants(full: SearchConfig, cutoffs: list[int], with_value: bool) -> list[tuple[str, SearchConfig, Any]]:
    """(label, settings before the equal-time sizing, value function) of each challenger."""
    out: list[tuple[str, SearchConfig, Any]] = []
    for k in cutoffs:
        out.append((f"cutoff {k}, neutral value", dataclasses.replace(full, max_rollout_steps=k), None))
        if with_value:
            out.append((f"cutoff {k}, value at the cut", dataclasses.replace(full, max_rollout_steps=k, leaf="rollout"),
                        connect_four_value))
    if with_value:
        out.append(("value at the leaves", dataclasses.replace(full, leaf="value", rollouts=0), connect_four_value))
    return out


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--game", default="backgammon")
    p.add_argument("--sims", type=int, default=20, help="simulations of the whole-rollout agent (default 20)")
    p.add_argument("--rollouts", type=int, default=1)
    p.add_argument("--cutoffs", default="10,40", help="rollout cutoffs K to try (default 10,40)")
    p.add_argument("--games", type=int, default=20, help="games per variant, seats alternating (default 20)")
    p.add_argument("--value", action="store_true", help="also the value variants (connect four only)")
    args = p.parse_args()
    if args.value and args.game != "connect_four":
        p.error("--value uses the hand-written connect four heuristic: it needs --game connect_four")
    loaded = games.load_game(args.game)
    states = cost.decision_states(loaded, np.random.default_rng(11))[::10][:6]
    full = SearchConfig(num_simulations=args.sims, rollouts=args.rollouts)
    budget = seconds_per_move(full, states, None)
    print(f"{args.game}: whole-game rollouts at {args.sims} simulations: {budget:.4f} s/move "
          f"(the time every challenger gets)")
    for label, probe, value_fn in variants(full, [int(c) for c in args.cutoffs.split(",")], args.value):
        per_sim = seconds_per_move(probe, states, value_fn) / args.sims
        challenger = dataclasses.replace(probe, num_simulations=max(1, round(budget / per_sim)))
        mean, lo, hi = duel(loaded, challenger, value_fn, full, args.games)
        print(f"  {label}: {challenger.num_simulations} simulations in the same time; mean return "
              f"{mean:+.2f} [{lo:+.2f}, {hi:+.2f}] over {args.games} games", flush=True)


if __name__ == "__main__":
    main()
