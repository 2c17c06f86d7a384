"""The exact best reply to a uniformly random opponent in a small perfect-information game, per seat.

What PPO trained against random can at best learn: expectimax over the real OpenSpiel game (the learner
maximises, the opponent moves uniformly at random, chance by its probabilities), with the learner's
training reward (a negative return multiplied by ``--loss-weight``, each learner move discounted by
``--gamma``, as ``cwm.ppo_train.TrainConfig``). Prints, per seat, the reply's win, draw and loss rates.

At tic-tac-toe with the game's payoff (loss weight 1, gamma 1) the best second player wins 93.2% and
loses 0.74% of its games (gamma 0.99: 92.9% and 0.42%): a perfect learner of the payoff would lose one
or two games in 200 as the second player. From a loss weight of 3 (gamma 0.99) or 3.5 (gamma 1) the best reply never loses (91.6% wins).

    python benchmarks/best_reply.py [--game tic_tac_toe] [--loss-weight 1] [--gamma 1]
"""

from __future__ import annotations

import argparse
from functools import cache
from typing import Any

import numpy as np

from cwm import games


def best_reply(game: Any, seat: int, loss_weight: float = 1.0, gamma: float = 1.0) -> dict[str, float]:
    """The best reply's ``value`` (the weighted, discounted reward) and its ``win``, ``draw``, ``loss`` rates."""

    @cache
    def solve(history: tuple[int, ...]) -> np.ndarray:
        state = game.new_initial_state()
        for action in history:
            state.apply_action(action)
        if state.is_terminal():
            ret = state.returns()[seat]
            return np.array([ret * loss_weight if ret < 0 else ret, ret > 0, ret == 0, ret < 0], float)
        if state.is_chance_node():
            return np.sum([p * solve((*history, a)) for a, p in state.chance_outcomes()], axis=0)
        children = [solve((*history, a)) for a in state.legal_actions()]
        if state.current_player() != seat:
            return np.mean(children, axis=0)
        best = max(children, key=lambda row: row[0])
        return np.array([gamma * best[0], *best[1:]])

    value, win, draw, loss = solve(())
    return {"value": value, "win": win, "draw": draw, "loss": loss}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--game", default="tic_tac_toe")
    parser.add_argument("--loss-weight", type=float, default=1.0)
    parser.add_argument("--gamma", type=float, default=1.0)
    args = parser.parse_args()
    game = games.load_game(args.game)
    for seat in range(game.num_players()):
        row = best_reply(game, seat, args.loss_weight, args.gamma)
        print(f"seat {seat}: value {row['value']:.4f}  win {row['win']:.2%}  draw {row['draw']:.2%}  "
              f"loss {row['loss']:.2%}")


if __name__ == "__main__":
    main()
