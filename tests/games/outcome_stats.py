"""Measures the outcome statistics quoted in the novel games' rules files and docs/games.md.

Run from the repository root: ``python tests/games/outcome_stats.py [--quick]``. Every number is seeded,
so a rerun reproduces it. Prints one markdown line per measurement.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

import numpy as np

if __name__ == "__main__":  # run as a script from anywhere: make the repository importable
    sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

from cwm import games  # noqa: E402
from cwm.agents.base import ISMCTSAgent, MCTSAgent, RandomAgent  # noqa: E402
from planners.config import SearchConfig


class HighestCard:
    """Hand of war heuristic: always play the highest-ranked card in hand (lowest card id)."""

    def step(self, state) -> int:
        return min(state.legal_actions())


class Chaser:
    """Quadranto heuristic: step towards the centre of the opponent's quadrant (random tie-break)."""

    def __init__(self, seed: int):
        self.rng = np.random.default_rng(seed)

    def step(self, state) -> int:
        obs = json.loads(state.observation_string(state.current_player()))
        r, c = obs["my_square"]
        quads = ["top-left", "top-right", "bottom-left", "bottom-right"]
        q = quads.index(obs["opponent_quadrant"])
        tr, tc = 0.5 + 2 * (q // 2), 0.5 + 2 * (q % 2)
        deltas = {0: (0, -1), 1: (0, 1), 2: (-1, 0), 3: (1, 0), 4: (0, 0)}
        dist = {a: abs(r + deltas[a][0] - tr) + abs(c + deltas[a][1] - tc) for a in state.legal_actions()}
        best = min(dist.values())
        choices = [a for a, d in dist.items() if d == best]
        return int(choices[self.rng.integers(len(choices))])


def play(name: str, agents: list, rng: np.random.Generator) -> list[float]:
    state = games.load_game(name).new_initial_state()
    while not state.is_terminal():
        if state.is_chance_node():
            outcomes = state.chance_outcomes()
            state.apply_action(outcomes[rng.choice(len(outcomes), p=[p for _, p in outcomes])][0])
        else:
            state.apply_action(agents[state.current_player()].step(state.clone()))
    return list(state.returns())


def match(name: str, make_a, make_b, n: int, seed: int) -> dict:
    """``n`` games with A as player 0 and ``n`` with A as player 1; A's win/draw/loss counts per seat."""
    rng = np.random.default_rng(seed)
    out = {}
    for seat in (0, 1):
        counts = [0, 0, 0]
        for i in range(n):
            a, b = make_a(seed + i), make_b(seed + 1000 + i)
            ret = play(name, [a, b] if seat == 0 else [b, a], rng)[seat]
            counts[0 if ret > 0 else 1 if ret == 0 else 2] += 1
        out[seat] = counts
    return out


def score_interval(wins: int, draws: int, losses: int, z: float = 1.96) -> tuple[float, float, float]:
    """Mean score (a draw counts half) and its 95% Wilson interval, the score taken as a win rate.

    Draws make the true spread smaller than a win rate's, so the interval errs on the wide side.
    """
    n = wins + draws + losses
    p = (wins + 0.5 * draws) / n
    centre = (p + z * z / (2 * n)) / (1 + z * z / n)
    half = z / (1 + z * z / n) * (p * (1 - p) / n + z * z / (4 * n * n)) ** 0.5
    return p, centre - half, centre + half


def line(title: str, result: dict, seconds: float) -> str:
    (w0, d0, l0), (w1, d1, l1) = result[0], result[1]
    score, low, high = score_interval(w0 + w1, d0 + d1, l0 + l1)
    return (f"| {title} | as player 0: {w0}/{d0}/{l0} | as player 1: {w1}/{d1}/{l1} | "
            f"score {score:.2f} (95% CI {low:.2f}-{high:.2f}) | {seconds:.0f} s |")


def random_vs_random(name: str, n: int, seed: int) -> str:
    rng = np.random.default_rng(seed)
    counts = {1.0: 0, 0.0: 0, -1.0: 0}
    lengths = []
    for i in range(n):
        agents = [RandomAgent(seed=seed + 2 * i), RandomAgent(seed=seed + 2 * i + 1)]
        state = games.load_game(name).new_initial_state()
        while not state.is_terminal():
            if state.is_chance_node():
                outcomes = state.chance_outcomes()
                state.apply_action(outcomes[rng.choice(len(outcomes), p=[p for _, p in outcomes])][0])
            else:
                state.apply_action(agents[state.current_player()].step(state))
        counts[state.returns()[0]] += 1
        lengths.append(sum(1 for _ in state.history()))
    return (f"| random vs random, {n} games | player 0 wins {counts[1.0] / n:.3f} | draws {counts[0.0] / n:.3f} | "
            f"player 1 wins {counts[-1.0] / n:.3f} | mean length {np.mean(lengths):.1f} actions |")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--quick", action="store_true", help="few games, for a smoke run")
    parser.add_argument("--only", default="", help="comma-separated game names")
    parser.add_argument("--search-games", type=int, default=20, help="search games per seat (default 20)")
    parser.add_argument("--simulations", type=int, default=200, help="search simulations per move (default 200)")
    args = parser.parse_args()
    n_random, n_search, sims = (200, 2, 50) if args.quick else (5000, args.search_games, args.simulations)
    names = args.only.split(",") if args.only else ["quadranto", "hand_of_war", "gen_chess", "gen_tic_tac_toe"]
    rand = lambda s: RandomAgent(seed=s)  # noqa: E731
    for name in names:
        print(f"## {name}")
        print(random_vs_random(name, n_random, seed=0))
        t = time.time()
        if games.resolve(name).perfect_information:
            search = lambda s: MCTSAgent(SearchConfig(num_simulations=sims, rollouts=1), seed=s)  # noqa: E731
            title = f"MCTS ({sims} simulations, 1 rollout) vs random"
        else:
            search = lambda s: ISMCTSAgent(SearchConfig(num_simulations=sims, rollouts=1), seed=s)  # noqa: E731
            title = f"ISMCTS ({sims} simulations, 1 rollout) vs random"
        print(line(title + f", {n_search} games per seat", match(name, search, rand, n_search, 7), time.time() - t))
        heuristic = {"quadranto": ("chaser", Chaser), "hand_of_war": ("highest card", lambda s: HighestCard())}
        if name in heuristic:
            label, make = heuristic[name]
            t = time.time()
            print(line(f"{label} vs random, {n_random // 10} games per seat",
                       match(name, make, rand, n_random // 10, 11), time.time() - t))
        sys.stdout.flush()


if __name__ == "__main__":
    main()
