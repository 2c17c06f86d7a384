"""How fast PPO trains entirely in JAX on a JAX twin, against cwm's PPO on the Python model in the same run.

On the hand-written tic-tac-toe twin (tests/fixtures/jax_twins), in CPU seconds of this process (all its
threads: XLA's included), so the figures do not depend on the machine's load:
  * environment steps (learner decisions) per CPU second of whole updates (rollout of the vmapped games
    with the random opponent, the network, GAE, every minibatch's gradient step; evaluation not counted),
    at several batch sizes, in this process and in a sandbox child as an LLM-written twin trains (one
    update timed there, JAX single-threaded as the sandbox starts it), with the CPU time 10M steps (the paper's budget per seed and game) would take
    (CPU time: a wall-clock figure on one idle core; two seeds train side by side on two cores);
  * the same for cwm's PPO (``cwm.ppo.train.time_update``, 64 games) on the hand-written tic-tac-toe model
    with its encoder (tests/data/reference), in a sandbox worker (as an LLM-written model trains: the ratios
    are to this) and in this process;
  * with ``--bar``: CPU seconds until the strength bar of docs/ppo.md (no losses in 200 real games against
    random in either seat), training with the strength test's settings, the policy checked every 10
    updates (on the twin first: 1,000 games; when it lost none there, in OpenSpiel's game; the checks in
    the real game are not counted). cwm's PPO reached the bar in 3 min 40 s in the long test (a recorded
    wall-clock figure on a lightly loaded machine, not re-measured here: that run takes minutes of CPU).

  * with ``--bar --bundle DIR``: the same bar on a bundle's LLM-written JAX twin (``jax_twin.py``, checked at
    load against the model and the bundle's ``encoder.py``), trained as ``cwm train ppo --env jax`` trains it:
    the whole run in a sandbox child (``cwm.ppo.contained``: no check on the real game until it ends), at
    each of ``--budgets`` steps afresh until the best policy on the twin loses none of 200 real games in
    either seat, played through the bundle's encoder in a sandbox worker (``ppo:DIR``). CPU seconds of the
    child (read from outside, ``cwm.sandbox.watch.tree_cpu``) per run; the real games not counted. With
    ``--keep worst_seat --stop-games N`` (``TrainConfig.keep``, ``stop_games``) the child keeps the policy
    with the fewest losses in its worse seat and stops at the first that loses none of an evaluation and of
    N more twin games in each seat: one run of the largest budget then stands for the budgets.

    python benchmarks/bench_ppo_jax.py [--envs 64 256 1024] [--repeats 3] [--bar [--bundle DIR [--budgets N ...]
        [--keep worst_seat] [--stop-games N]]]
"""

from __future__ import annotations

import argparse
import dataclasses
import importlib.util
import tempfile
import types
from pathlib import Path
from typing import Any

import jax
import numpy as np

from cwm import arena, games
from cwm.agents import make_agent
from cwm.agents.base import RandomAgent
from cwm.agents.ppo import PPOAgent
from cwm.bundle import load_bundle
from cwm.bundle.policy import init_params, save_policy_dir
from cwm.contract import ENCODER_API
from cwm.model import ActionCodec, WorldModel
from cwm.ppo.contained import time_twin_contained, train_twin_contained
from cwm.ppo.jax_train import TwinLearner, time_twin_update
from cwm.ppo.train import TrainConfig, time_update
from cwm.sandbox import Sandbox, load_source
from cwm.sandbox.training import ContainedEnvs
from cwm.sandbox.watch import tree_cpu
from planners.env import LocalEnvs

ROOT = Path(__file__).resolve().parent.parent
TWIN = ROOT / "tests" / "fixtures" / "jax_twins" / "tic_tac_toe.py"
REFERENCE = ROOT / "tests" / "data" / "reference"
CONFIG = TrainConfig(num_envs=64, rollout=32, eval_every=10**9, checkpoint_every=10**9)
BAR = TrainConfig(total_steps=2_048_000, num_envs=128, rollout=32, ent_coef=0.2, loss_weight=4.0, eval_every=10,
                  eval_games=1000, seed=0)
RECORDED_BAR_S = 220.0  # cwm's PPO to the bar: 3 min 40 s (docs/ppo.md), wall clock, lightly loaded machine


def load_twin() -> types.ModuleType:
    spec = importlib.util.spec_from_file_location("tic_tac_toe_twin", TWIN)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def planes(observation: dict[str, Any], player: int) -> list[float]:
    """The real game's observation as the twin's tensor (planes empty / o / x over the cells)."""
    return [float(cell == mark) for mark in (".", "o", "x") for cell in observation["board"]]


def reference_rates(repeats: int) -> dict[str, float]:
    """cwm's PPO on the hand-written model, in a sandbox worker (as an LLM-written model trains) and in this
    process: steps per CPU second of one update (the worker's CPU included)."""
    source = (REFERENCE / "tic_tac_toe_model.py").read_text()
    encoder = (REFERENCE / "tic_tac_toe_encoder.py").read_text()
    model = WorldModel(load_source(source, name="tic_tac_toe_model"),
                       codec=ActionCodec.from_game(games.load_game("tic_tac_toe")))
    encode = load_source(encoder, name="encoder", api=ENCODER_API).encode
    steps = CONFIG.num_envs * CONFIG.rollout
    with ContainedEnvs(source, encoder, "tic_tac_toe") as contained:
        rates = {"sandbox worker": steps / time_update(contained, CONFIG, repeats=repeats)}
    rates["this process"] = steps / time_update(LocalEnvs.of_model(model, encode), CONFIG, repeats=repeats)
    return rates


def bench_speed(envs: list[int], repeats: int) -> None:
    twin = load_twin()
    references = reference_rates(max(1, repeats // 2))
    reference = references["sandbox worker"]
    print(f"tic-tac-toe, PPO updates of N games x {CONFIG.rollout} steps, {CONFIG.hidden}-{CONFIG.hidden} network, "
          f"{CONFIG.epochs} epochs x {CONFIG.minibatches} minibatches (CPU time; ratios to the sandboxed model)")
    for where, rate in references.items():
        print(f"  {f'cwm PPO, Python model, {where}':40s} {rate:9.0f} steps/CPU-s  x{rate / reference:6.1f}  "
              f"10M steps: {1e7 / rate / 3600:6.2f} CPU-h")
    for n in envs:
        config = dataclasses.replace(CONFIG, num_envs=n)
        best = min(time_twin_update(twin, config, repeats=repeats)[0] for _ in range(2))
        rate = n * config.rollout / best
        minutes = 1e7 / rate / 60
        print(f"  {f'JAX twin, all in JAX ({n} games)':40s} {rate:9.0f} steps/CPU-s  x{rate / reference:6.1f}  "
              f"10M steps: {minutes:6.1f} CPU-min")
        rate = n * config.rollout / time_twin_contained(TWIN.read_text(), config, game="tic_tac_toe")
        print(f"  {'  the same in a sandbox child':40s} {rate:9.0f} steps/CPU-s  x{rate / reference:6.1f}  "
              f"10M steps: {1e7 / rate / 60:6.1f} CPU-min")


def bench_bar() -> None:
    """CPU seconds of training (and evaluation on the twin) until the policy loses none of 200 real games in
    either seat."""
    learner = TwinLearner(load_twin(), BAR, game="tic_tac_toe")
    params = {k: jax.numpy.asarray(v) for k, v in init_params(learner.policy, BAR.seed).items()}
    opt_state = learner.opt.init(params)
    carry = learner.start(jax.random.key(BAR.seed), params)
    spent, start = 0.0, tree_cpu(reaped=False)
    for update in range(BAR.updates):
        params, opt_state, carry = learner.update(params, opt_state, carry, update)
        if (update + 1) % BAR.eval_every:
            continue
        weights = {k: np.asarray(v) for k, v in params.items()}
        row = learner.evaluate(weights, games=BAR.eval_games, seed=update)
        spent += tree_cpu(reaped=False) - start
        losses = _real_losses(weights, learner) if row["loss_rate"] == 0 else None
        print(f"  {(update + 1) * BAR.num_envs * BAR.rollout:9d} steps  {spent:7.1f} CPU-s  twin loss rate "
              f"{row['loss_rate']:.3f}" + ("" if losses is None else f"  real losses per seat {losses}"))
        if losses == [0, 0]:
            print(f"bar reached: {spent:.1f} CPU-s of training; x{RECORDED_BAR_S / spent:.1f} faster than the "
                  f"recorded 3 min 40 s of cwm's PPO (wall clock)")
            return
        start = tree_cpu(reaped=False)
    print(f"bar not reached in {BAR.total_steps} steps ({spent:.1f} CPU-s)")


def bench_bundle_bar(path: Path, budgets: list[int], *, keep: str = "score", stop_games: int = 0) -> None:
    """The bar on a bundle's untrusted JAX twin: each budget trained afresh in a sandbox child (keeping and
    stopping by ``keep`` and ``stop_games``), its best policy played in the real game through the bundle's
    encoder (contained); stops at the first that loses none."""
    loaded = load_bundle(path)
    if loaded.jax_twin is None or "encoder.py" not in loaded.sources:
        raise SystemExit(f"{path}: needs a jax_twin.py checked against its encoder.py")
    game = loaded.spec.name
    print(f"{game}: the bundle's JAX twin, trained in a sandbox child ({BAR.num_envs} games x {BAR.rollout} steps, "
          f"best ({keep}) of evaluations on {BAR.eval_games} twin games every {BAR.eval_every} updates"
          + (f", stopping at the first that loses none of them and of {stop_games} more per seat)"
             if stop_games else ")"))
    for steps in budgets:
        config = dataclasses.replace(BAR, total_steps=steps, keep=keep, stop_games=stop_games)
        with Sandbox() as box:
            start = tree_cpu(reaped=False)
            result = train_twin_contained(loaded.jax_twin, config, game=game, sandbox=box)
            spent = tree_cpu(reaped=False) - start
        with tempfile.TemporaryDirectory() as folder:
            save_policy_dir(folder, result.params, result.policy, encoder_source=loaded.sources["encoder.py"])
            agent = make_agent(f"ppo:{folder}", game, seed=0)
            try:
                losses = _seat_losses(agent, games.load_game(game))
            finally:
                agent.close()
        last = result.curve[-1]
        stopped = last.get("check_losses_seat0") == last.get("check_losses_seat1") == 0
        trained = f"stopped at {int(last['steps'])}" if stopped else "trained all"
        print(f"  {steps:9d} steps ({trained})  {spent:7.1f} CPU-s (child, JAX start and compiling included)  best "
              f"twin score {result.best_score:+.3f}  real losses per seat {losses}")
        if losses == [0, 0]:
            print(f"bar reached: {spent:.1f} CPU-s in the sandbox child")
            return
    print(f"bar not reached within {budgets[-1]} steps")


def _real_losses(params: dict[str, np.ndarray], learner: TwinLearner) -> list[int]:
    return _seat_losses(PPOAgent(params, learner.policy, planes, "tic_tac_toe"), games.load_game("tic_tac_toe"))


def _seat_losses(agent: Any, real: Any) -> list[int]:
    """The agent's losses in 200 games against random in each seat."""
    losses = []
    for seat in (0, 1):
        lost = 0
        for i in range(200):
            agents = [agent, RandomAgent(seed=i)] if seat == 0 else [RandomAgent(seed=i), agent]
            outcome = arena.play_match(real, agents, seed=10_000 * seat + i)
            lost += outcome.forfeit_seat == seat or outcome.returns[seat] < 0
        losses.append(int(lost))
    return losses


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--envs", type=int, nargs="+", default=[64, 256, 1024])
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--bar", action="store_true", help="also train to the strength bar")
    parser.add_argument("--bundle", type=Path, help="with --bar: the bar on this bundle's JAX twin instead "
                                                    "(the speed figures are skipped)")
    parser.add_argument("--budgets", type=int, nargs="+", default=[512_000, 1_024_000, 2_048_000],
                        help="with --bundle: steps of each fresh run, until one reaches the bar")
    parser.add_argument("--keep", choices=["score", "worst_seat"], default="score",
                        help="with --bundle: which evaluated policy a run keeps (TrainConfig.keep)")
    parser.add_argument("--stop-games", type=int, default=0,
                        help="with --bundle: stop at the first policy that loses none of an evaluation and of "
                             "this many more twin games per seat (TrainConfig.stop_games; default 0: never)")
    args = parser.parse_args()
    if args.bar and args.bundle is not None:
        bench_bundle_bar(args.bundle, args.budgets, keep=args.keep, stop_games=args.stop_games)
        return
    bench_speed(args.envs, args.repeats)
    if args.bar:
        bench_bar()


if __name__ == "__main__":
    main()
