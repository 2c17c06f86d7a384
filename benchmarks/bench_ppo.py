"""How fast PPO trains inside a world model, against the ground truth stepped the same way; and how fast it acts.

For tic-tac-toe and connect four, times the whole training loop (model steps, the random opponent,
encoding, the network's forward passes and PPO updates) in environment steps (learner decisions) per
second, in one run, on
  * the CWM in a sandbox worker (``ContainedEnvs``: how an LLM-written model and encoder train),
  * the CWM in this process (``LocalEnvs.of_model``: a trusted model),
  * the ground-truth OpenSpiel game in this process (``cwm.ppo.ground_truth_envs``), the same envs and encoder,
with the hand-written tic-tac-toe model (tests/data/reference) and, for connect four, the oracle CWM (the
contract functions replaying OpenSpiel: no hand-written connect four model ships). Each is warmed up
first (JAX compiles once per shape), then best of --repeats. Prints steps/s, the ratio to the ground
truth, and what 10M steps (the paper's budget per game) would take at that rate on one core; the seeds
of ``train_seeds`` are independent runs, so N seeds on N cores (or Ray workers) take the same time.
Then the numpy acting latency per move of ``PPOAgent`` (a 256-256 network), with its encoder in this
process and in a sandbox worker.

    python benchmarks/bench_ppo.py [--updates 4] [--repeats 2] [--games tic_tac_toe connect_four]
"""

from __future__ import annotations

import argparse
import dataclasses
import tempfile
from pathlib import Path
from typing import Any

import numpy as np
import pyspiel

from cwm import games
from cwm.agents.ppo import PPOAgent
from cwm.bundle.policy import PolicyConfig, init_params
from cwm.contract import ENCODER_API
from cwm.games.oracle import oracle_model
from cwm.model import ActionCodec, WorldModel
from cwm.ppo.train import TrainConfig, ground_truth_envs, train
from cwm.sandbox import load_source
from cwm.sandbox.training import ContainedEncoder, ContainedEnvs
from cwm.sandbox.watch import tree_cpu
from planners.env import LocalEnvs

REFERENCE = Path(__file__).resolve().parent.parent / "tests" / "data" / "reference"
CONFIG = TrainConfig(num_envs=64, rollout=32, eval_every=10**9, checkpoint_every=10**9)


def _model(game: str) -> tuple[WorldModel, str]:
    file = REFERENCE / f"{game}_model.py"
    if file.exists():
        module = load_source(file.read_text(), name=f"{game}_model")
        return WorldModel(module, codec=ActionCodec.from_game(games.load_game(game))), file.read_text()
    return oracle_model(game), ""


def _rate(envs: Any, updates: int, repeats: int) -> float:
    """Best steps per CPU second (this process and its descendants: a contained model's env workers) of
    ``updates`` PPO updates (after one warm-up update that compiles)."""
    steps = updates * CONFIG.num_envs * CONFIG.rollout
    with tempfile.TemporaryDirectory() as tmp:
        train(envs, dataclasses.replace(CONFIG, total_steps=CONFIG.num_envs * CONFIG.rollout), out_dir=tmp,
              progress=False)
    best = 0.0
    for r in range(repeats):
        with tempfile.TemporaryDirectory() as tmp:
            start = tree_cpu()
            train(envs, dataclasses.replace(CONFIG, total_steps=steps, seed=r), out_dir=tmp, progress=False)
            best = max(best, steps / (tree_cpu() - start))
    return best


def bench_training(game: str, updates: int, repeats: int) -> None:
    encoder_source = (REFERENCE / f"{game}_encoder.py").read_text()
    encode = load_source(encoder_source, name="encoder", api=ENCODER_API).encode
    model, model_source = _model(game)
    rates: dict[str, float] = {}
    if model_source:
        with ContainedEnvs(model_source, encoder_source, game) as contained:
            rates["CWM, sandbox worker"] = _rate(contained, updates, repeats)
    rates["CWM, this process" + ("" if model_source else " (oracle)")] = _rate(
        LocalEnvs.of_model(model, encode), updates, repeats)
    rates["ground truth, this process"] = _rate(ground_truth_envs(game, encode), updates, repeats)
    truth = rates["ground truth, this process"]
    print(f"\n{game}: whole training loop, {updates} updates of {CONFIG.num_envs} x {CONFIG.rollout} steps")
    for name, rate in rates.items():
        print(f"  {name:38s} {rate:9.0f} steps/s  x{rate / truth:5.2f} of ground truth  "
              f"10M steps: {1e7 / rate / 3600:5.1f} h")


def bench_acting(game: str, moves: int) -> None:
    encoder_source = (REFERENCE / f"{game}_encoder.py").read_text()
    real = games.load_game(game)
    config = PolicyConfig(obs_size=len(_first_vector(game, encoder_source)), num_actions=real.num_distinct_actions(),
                          game=game)
    params = init_params(config, seed=0)
    states = _positions(real, moves)
    local = load_source(encoder_source, name="encoder", api=ENCODER_API).encode
    contained = ContainedEncoder(encoder_source)
    print(f"\n{game}: numpy acting latency per move ({config.hidden}-{config.hidden} network)")
    try:
        for name, encode in (("encoder in this process", local), ("encoder in a sandbox worker", contained)):
            agent = PPOAgent(params, config, encode, game)
            agent.step(states[0])  # starts the worker
            start = tree_cpu()
            for state in states:
                agent.step(state)
            print(f"  {name:38s} {(tree_cpu() - start) / len(states) * 1e6:9.0f} us/move (CPU)")
    finally:
        contained.close()


def _first_vector(game: str, source: str) -> list[float]:
    encode = load_source(source, name="encoder", api=ENCODER_API).encode
    return encode(games.observe(games.resolve(game), games.load_game(game).new_initial_state(), 0), 0)  # type: ignore[no-any-return]


def _positions(game: pyspiel.Game, count: int) -> list[pyspiel.State]:
    rng = np.random.default_rng(0)
    out: list[pyspiel.State] = []
    while len(out) < count:
        state = game.new_initial_state()
        while not state.is_terminal() and len(out) < count:
            out.append(state.clone())
            state.apply_action(int(rng.choice(state.legal_actions())))
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--updates", type=int, default=4)
    parser.add_argument("--repeats", type=int, default=2)
    parser.add_argument("--moves", type=int, default=300)
    parser.add_argument("--games", nargs="+", default=["tic_tac_toe", "connect_four"])
    args = parser.parse_args()
    for game in args.games:
        bench_training(game, args.updates, args.repeats)
    for game in args.games:
        bench_acting(game, args.moves)


if __name__ == "__main__":
    main()
