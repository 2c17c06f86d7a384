"""The rollout cutoff's effect on strength at equal time: MCTS whose rollouts stop after K moves against MCTS
with whole-game rollouts, each given the same time per move; with ``--value``, also the cut-off playouts
scored by a value function (``SearchConfig(leaf="rollout")``) and the value function at the leaves instead
of rollouts (``leaf="value"``).

For each variant the challenger's simulations are set so that its mean time per move matches the
whole-rollout agent's (both timed on the same decision states of a random game, in this run), then the two
play --pairs seat-swapped pairs: the two matches of pair ``i`` are one deal (the chance seed
``cwm.arena.plan.deal_seed`` of the pair, the same deal ``i`` for every variant), one with each agent
first. Each comparison is the arena's paired analysis (``cwm.arena.compare``, ``cwm.stats.paired``): the
challenger's score (win/draw/loss games, 0.50 even) or edge (payoff games: half the mean payoff
difference) with its 95% bounded-mean Clopper-Pearson interval over pairs, the matches and pairs, the
minimum detectable difference at 80% power and the verdict; ``paired_duel`` is shared with
``bench_native.py``.

``--value`` uses a hand-written connect four heuristic (open lines of four, below), so it needs
``--game connect_four``: the benchmark measures how the search combines a value with rollouts, not a
synthesized value function.

    python benchmarks/bench_rollout_cutoff.py [--game backgammon] [--sims 20] [--cutoffs 10,40] [--pairs 10]
    python benchmarks/bench_rollout_cutoff.py --game connect_four --sims 100 --cutoffs 4,12 --pairs 50 --value
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
from cwm.arena import MatchResult, compare, cost, play_match
from cwm.arena.plan import deal_seed
from cwm.arena.report import paired_comparisons
from cwm.types import JSON
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


def paired_duel(game: str, first: Callable[[int], Any], second: Callable[[int], Any], pairs: int, *,
                labels: tuple[str, str], seed: int = 0) -> dict[str, JSON]:
    """The paired comparison of two agents (``cwm.arena.compare``) over ``pairs`` seat-swapped pairs of
    matches on ``game``: pair ``i`` is played on one deal, ``deal_seed(seed, game, ..., i)`` of the two
    labels, once with each agent first; ``first(i)`` and ``second(i)`` make pair ``i``'s agents afresh for
    each match (so both matches of a pair see the same agent seeds). A forfeit is a loss, as in the arena.

    Returns the comparison row of ``labels[0]`` against ``labels[1]`` (fields of
    ``cwm.arena.compare.comparisons``: ``mean``, ``lo``, ``hi``, ``matches``, ``pairs``, ``mde``, ``verdict``...).
    """
    spec = games.resolve(game)
    loaded = games.load_game(spec)
    results = []
    for i in range(pairs):
        deal = deal_seed(seed, spec.name, "bench", sorted(labels), i)
        for order in (0, 1):
            agents = [first(i), second(i)]
            seats = labels if order == 0 else (labels[1], labels[0])
            outcome = play_match(loaded, agents if order == 0 else agents[::-1], seed=deal)
            results.append(MatchResult(f"{i}-{order}", seats, deal, tuple(float(r) for r in outcome.returns),
                                       outcome.forfeit_seat, outcome.forfeit_kind, outcome.reason,
                                       outcome.moves, index=i, deal=deal))
    (row,) = paired_comparisons(spec, results)  # one pairing, first agent as first seated: labels[0]
    return row


def shown(row: dict[str, JSON]) -> str:
    """One comparison on one line: score or edge, its interval, matches (pairs), MDE and verdict."""
    mean, lo, hi = (compare.shown(row, float(row[k])) for k in ("mean", "lo", "hi"))  # type: ignore[arg-type]
    mde = "-" if row["mde"] is None else "±" + compare.shown(row, float(row["mde"]), sign=False)  # type: ignore[arg-type]
    what = "score" if row["outcome"] != "payoff" else "edge"
    return (f"{what} {mean} [{lo}, {hi}], {row['matches']} matches ({row['pairs']} pairs), MDE {mde}: "
            f"{row['verdict']}")


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
    p.add_argument("--pairs", type=int, default=10, help="seat-swapped pairs per variant, one deal each: twice as "
                   "many matches (default 10)")
    p.add_argument("--seed", type=int, default=0, help="seeds the deals (default 0)")
    p.add_argument("--value", action="store_true", help="also the value variants (connect four only)")
    args = p.parse_args()
    if args.value and args.game != "connect_four":
        p.error("--value uses the hand-written connect four heuristic: it needs --game connect_four")
    if args.pairs < 1:
        p.error("--pairs must be at least 1")
    loaded = games.load_game(args.game)
    states = cost.decision_states(loaded, np.random.default_rng(11))[::10][:6]
    full = SearchConfig(num_simulations=args.sims, rollouts=args.rollouts)
    budget = seconds_per_move(full, states, None)
    print(f"{args.game}: whole-game rollouts at {args.sims} simulations, {args.rollouts} rollout(s) per leaf: "
          f"{budget:.4f} CPU s/move (the time every challenger gets); {args.pairs} seat-swapped pairs per "
          f"variant, deals seeded {args.seed}")
    rows = []
    for label, probe, value_fn in variants(full, [int(c) for c in args.cutoffs.split(",")], args.value):
        per_sim = seconds_per_move(probe, states, value_fn) / args.sims
        challenger = dataclasses.replace(probe, num_simulations=max(1, round(budget / per_sim)))
        row = paired_duel(args.game, lambda i, c=challenger, v=value_fn: MCTSAgent(c, value_fn=v, seed=i),
                          lambda i: MCTSAgent(full, seed=10_000 + i), args.pairs,
                          labels=(f"{label} ({challenger.num_simulations} sims)", "whole-game rollouts"),
                          seed=args.seed)
        rows.append(row)
        print(f"  {label}: {challenger.num_simulations} simulations in the same time; {shown(row)}", flush=True)
    print()
    print(compare.markdown(rows))


if __name__ == "__main__":
    main()
