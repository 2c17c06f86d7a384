"""How a PPO run's best policy improves with steps: one run in the tic-tac-toe reference model, stopped at
milestones, its best policy so far scored exactly against random in the real game, per seat.

The run is ``cwm.ppo.train.train`` with the settings given as JSON (``TrainConfig``'s fields), resumed
from its checkpoint at each milestone; milestones are rounded to whole ``checkpoint_every`` blocks of
updates, where a stopped and resumed run equals one that never stopped. At each the best policy (chosen,
as always, on games in the model) is scored by ``benchmarks/best_reply.py``'s expectimax over the real
game: its exact win and loss rates per seat, not a sample of games.

    python benchmarks/ppo_milestones.py '{"total_steps": 2048000, "num_envs": 128, "loss_weight": 4}' \\
        --milestones 409600 1228800 2048000
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import tempfile
import time
from pathlib import Path

from cwm import games
from cwm.agents.ppo import PPOAgent
from cwm.contract import ENCODER_API
from cwm.model import ActionCodec, WorldModel
from cwm.ppo.train import TrainConfig, train
from cwm.sandbox import load_source
from planners.env import LocalEnvs

HERE = Path(__file__).resolve().parent
REFERENCE = HERE.parent / "tests" / "data" / "reference"


def _best_reply_module():
    spec = importlib.util.spec_from_file_location("best_reply", HERE / "best_reply.py")
    module = importlib.util.module_from_spec(spec)  # type: ignore[arg-type]
    spec.loader.exec_module(module)  # type: ignore[union-attr]
    return module


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("config", help="TrainConfig's fields as JSON")
    parser.add_argument("--milestones", type=int, nargs="+", required=True, help="env steps")
    args = parser.parse_args()
    config = TrainConfig(**json.loads(args.config))
    encode = load_source((REFERENCE / "tic_tac_toe_encoder.py").read_text(), name="encoder", api=ENCODER_API).encode
    real = games.load_game("tic_tac_toe")
    model = WorldModel(load_source((REFERENCE / "tic_tac_toe_model.py").read_text(), name="tic_tac_toe_model"),
                       codec=ActionCodec.from_game(real))
    envs, exact = LocalEnvs.of_model(model, encode), _best_reply_module()
    block = config.num_envs * config.rollout * config.checkpoint_every
    start = time.perf_counter()
    with tempfile.TemporaryDirectory() as out:
        for steps in args.milestones:
            updates = max(1, round(steps / block)) * config.checkpoint_every
            result = train(envs, config, out_dir=out, progress=False, stop_after=updates)
            choose = PPOAgent(result.params, result.policy, encode, "tic_tac_toe").step
            rows = [exact.best_reply(real, seat, choose=choose) for seat in (0, 1)]
            print(f"{updates * config.num_envs * config.rollout} steps ({time.perf_counter() - start:.0f} s): "
                  f"best score in the model {result.best_score:.3f}; exact against random: "
                  + "; ".join(f"seat {s} wins {r['win']:.2%} loses {r['loss']:.2%}" for s, r in enumerate(rows)),
                  flush=True)


if __name__ == "__main__":
    main()
