"""PUCT with a PPO prior and critic against plain MCTS (random rollouts) at equal simulations, on a world model.

Trains a PPO policy in the hand-written tic-tac-toe model (tests/data/reference; --train-steps env steps,
or reads a policy directory with --policy), then plays the real game: ``PUCTAgent`` (the PPO policy as
prior, its critic at the leaves) against ``CWMAgent`` (the library's MCTS: UCT, 10 random rollouts per
leaf, the solver), both
searching the same model with the same number of simulations per move, both seats, and prints PUCT's
wins, draws and losses with the time per move of each.

    python benchmarks/bench_puct.py [--sims 25 100] [--games 50] [--train-steps 300000] [--policy DIR]
"""

from __future__ import annotations

import argparse
import tempfile
from pathlib import Path

from cwm import arena, games
from cwm.agents.cwm import CWMAgent
from cwm.agents.ppo import PUCTAgent, ppo_puct
from cwm.bundle.policy import load_policy
from cwm.contract import ENCODER_API
from cwm.model import ActionCodec, WorldModel, load_source
from cwm.sandbox.watch import tree_cpu
from planners.config import SearchConfig

REFERENCE = Path(__file__).resolve().parent.parent / "tests" / "data" / "reference"
GAME = "tic_tac_toe"


class _Timed:
    """An agent wrapper that adds up its think time, in CPU seconds of this process and its descendants."""

    def __init__(self, agent: object):
        self.agent, self.seconds, self.moves = agent, 0.0, 0

    def step(self, state: object) -> int:
        start = tree_cpu()
        action = self.agent.step(state)  # type: ignore[attr-defined]
        self.seconds += tree_cpu() - start
        self.moves += 1
        return int(action)

    def reset(self) -> None:
        reset = getattr(self.agent, "reset", None)
        if callable(reset):
            reset()


def _policy(directory: str | None, steps: int) -> tuple[dict, object]:
    if directory:
        params, config, _ = load_policy(directory)
        return params, config
    from cwm.ppo.seeds import EnvSource, train_seeds
    from cwm.ppo.train import TrainConfig

    source = EnvSource(GAME, (REFERENCE / f"{GAME}_encoder.py").read_text(), (REFERENCE / f"{GAME}_model.py").read_text())
    with tempfile.TemporaryDirectory() as tmp:
        train_seeds(source, TrainConfig(total_steps=steps), [0], out_dir=tmp)
        params, config, _ = load_policy(Path(tmp) / "policy")
    return params, config


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--sims", type=int, nargs="+", default=[25, 100])
    parser.add_argument("--games", type=int, default=50, help="games per seat")
    parser.add_argument("--train-steps", type=int, default=300_000)
    parser.add_argument("--policy", help="a policy directory instead of training one")
    args = parser.parse_args()
    params, config = _policy(args.policy, args.train_steps)
    real = games.load_game(GAME)
    model = WorldModel(load_source((REFERENCE / f"{GAME}_model.py").read_text(), name="ttt"),
                       codec=ActionCodec.from_game(real))
    encode = load_source((REFERENCE / f"{GAME}_encoder.py").read_text(), name="enc", api=ENCODER_API).encode
    for sims in args.sims:
        score = {"win": 0, "draw": 0, "loss": 0}
        puct = _Timed(PUCTAgent(model, ppo_puct(params, config, encode, lambda s, p: s.observation(p),  # type: ignore[arg-type]
                                                  num_simulations=sims, seed=0)))
        mcts = _Timed(CWMAgent(model, GAME, SearchConfig(num_simulations=sims), seed=0))
        for seat in (0, 1):
            for i in range(args.games):
                agents = [puct, mcts] if seat == 0 else [mcts, puct]
                r = arena.play_match(real, agents, seed=i).returns[seat]  # type: ignore[arg-type]
                score["win" if r > 0 else "loss" if r < 0 else "draw"] += 1
        print(f"{sims:5d} simulations: PUCT(PPO) vs MCTS  {score}  per move: PUCT "
              f"{puct.seconds / puct.moves * 1e3:.1f} ms, MCTS {mcts.seconds / mcts.moves * 1e3:.1f} ms")


if __name__ == "__main__":
    main()
