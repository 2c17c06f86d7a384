"""The exact best reply to a uniformly random opponent in a small perfect-information game, per seat;
and, with ``--policy DIR``, a trained PPO policy's exact results against random there.

What PPO trained against random can at best learn: expectimax over the real OpenSpiel game (the learner
maximises, the opponent moves uniformly at random, chance by its probabilities), with the learner's
training reward (a negative return multiplied by ``--loss-weight``, each learner move discounted by
``--gamma``, as ``cwm.ppo.train.TrainConfig``). Prints, per seat, the reply's win, draw and loss rates.
With ``--policy DIR`` (a ``cwm.bundle.policy.save_policy_dir`` directory: ``train_seeds``' ``out/policy``) the
greedy policy plays instead of the best reply, and its worst decisions are listed: the positions where
another move loses less often, by how much that would lower its loss rate.

At tic-tac-toe with the game's payoff (loss weight 1, gamma 1) the best second player wins 93.2% and
loses 0.74% of its games (gamma 0.99: 92.9% and 0.42%): a perfect learner of the payoff would lose one
or two games in 200 as the second player. From a loss weight of 3 (gamma 0.99) or 3.5 (gamma 1) the best reply never loses (91.6% wins).

    python benchmarks/best_reply.py [--game tic_tac_toe] [--loss-weight 1] [--gamma 1] [--policy DIR]
"""

from __future__ import annotations

import argparse
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np

from cwm import games
from cwm.agents.ppo import PPOAgent
from cwm.bundle.policy import ENCODER_FILE, load_policy
from cwm.contract import ENCODER_API
from cwm.sandbox import load_source

Choose = Callable[[Any], int]  # state -> the learner's action


def best_reply(game: Any, seat: int, loss_weight: float = 1.0, gamma: float = 1.0,
               choose: Choose | None = None) -> dict[str, float]:
    """The best reply's (or ``choose``'s) ``value`` (the weighted, discounted reward) and its ``win``,
    ``draw``, ``loss`` rates against random."""
    value, win, draw, loss = _solver(seat, loss_weight, gamma, choose)(game.new_initial_state())
    return {"value": value, "win": win, "draw": draw, "loss": loss}


def _solver(seat: int, loss_weight: float, gamma: float, choose: Choose | None) -> Callable[[Any], np.ndarray]:
    """Expectimax: ``[value, win, draw, loss]`` from each state, positions shared by their string (in a
    perfect-information game it shows the whole state)."""
    memo: dict[str, np.ndarray] = {}

    def solve(state: Any) -> np.ndarray:
        key = str(state)
        if key not in memo:
            memo[key] = _expand(state)
        return memo[key]

    def _expand(state: Any) -> np.ndarray:
        if state.is_terminal():
            ret = state.returns()[seat]
            return np.array([ret * loss_weight if ret < 0 else ret, ret > 0, ret == 0, ret < 0], float)
        if state.is_chance_node():
            return np.sum([p * solve(state.child(a)) for a, p in state.chance_outcomes()], axis=0)
        if state.current_player() == seat and choose is not None:
            best = solve(state.child(choose(state)))
        else:
            children = [solve(state.child(a)) for a in state.legal_actions()]
            if state.current_player() != seat:
                return np.mean(children, axis=0)
            best = max(children, key=lambda row: row[0])
        return np.array([gamma * best[0], *best[1:]])

    return solve


def worst_decisions(game: Any, seat: int, choose: Choose, top: int = 10) -> list[tuple[float, str, int, list[int]]]:
    """Where ``choose`` errs against random: ``(reach x loss avoidable, position, its move, moves that lose
    less)``, largest first (the rest of the game played by ``choose``)."""
    solve = _solver(seat, 1.0, 1.0, choose)
    found = []

    def walk(state: Any, reach: float) -> None:
        if state.is_terminal():
            return
        if state.is_chance_node() or state.current_player() != seat:
            legal = state.legal_actions()
            outcomes = state.chance_outcomes() if state.is_chance_node() else [(a, 1 / len(legal)) for a in legal]
            for action, p in outcomes:
                walk(state.child(action), reach * p)
            return
        move = choose(state)
        losses = {a: solve(state.child(a))[3] for a in state.legal_actions()}
        if min(losses.values()) < losses[move] - 1e-9:
            better = [a for a, v in losses.items() if v < losses[move] - 1e-9]
            found.append((reach * (losses[move] - min(losses.values())), str(state).replace("\n", "|"), move, better))
        walk(state.child(move), reach)

    walk(game.new_initial_state(), 1.0)
    return sorted(found, reverse=True)[:top]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--game", default="tic_tac_toe")
    parser.add_argument("--loss-weight", type=float, default=1.0)
    parser.add_argument("--gamma", type=float, default=1.0)
    parser.add_argument("--policy", help="a saved PPO policy directory (with its encoder.py) to evaluate")
    args = parser.parse_args()
    game = games.load_game(args.game)
    choose = _policy(args.policy, args.game) if args.policy else None
    for seat in range(game.num_players()):
        row = best_reply(game, seat, args.loss_weight, args.gamma, choose)
        print(f"seat {seat}: value {row['value']:.4f}  win {row['win']:.2%}  draw {row['draw']:.2%}  "
              f"loss {row['loss']:.2%}")
        for gain, position, move, better in worst_decisions(game, seat, choose) if choose else []:
            print(f"  {gain:.4f} of losses at {position}: played {move}, {better} lose less")


def _policy(directory: str, game: str) -> Choose:
    """The greedy policy of a saved directory, its encoder loaded in this process (trusted files only)."""
    params, config, _ = load_policy(directory)
    encoder = load_source((Path(directory) / ENCODER_FILE).read_text(encoding="utf-8"), name="encoder",
                          api=ENCODER_API)
    return PPOAgent(params, config, encoder.encode, game).step


if __name__ == "__main__":
    main()
