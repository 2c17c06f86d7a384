"""`cwm train ppo`: train a PPO policy inside a bundle's world model and add the best seed's to the bundle."""

from __future__ import annotations

import argparse
import dataclasses
import json
import time
from pathlib import Path
from typing import TYPE_CHECKING, Any

from cwm.arena import cost
from cwm.bundle import load_bundle
from cwm.executors import make_executor
from cwm.types import UsageError

if TYPE_CHECKING:  # JAX is an extra: the trainer is imported when the command runs
    from cwm.ppo.train import TrainConfig

_ABOUT = ("Trains PPO against a uniformly random opponent inside the bundle's own model (its code and the encoder's "
          "run in a hardened training worker), one run per seed, both seats; the best seed against random is "
          "written into the bundle in place (policy.npz and encoder.py; the manifest is re-hashed), replacing an "
          "earlier policy, so `ppo:BUNDLE` plays it. The run directory keeps each seed's checkpoints, the best "
          "policy and the learning curves (curve.png); running the same command again continues from the "
          "checkpoints. A bundle with a JAX twin (jax_twin.py) trains on it instead, entirely in JAX in one sandbox "
          "child per seed (--env). Needs the jax extra (pip install 'cwm[jax]').")


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("train", help="train a policy inside a bundle's world model")
    kinds = p.add_subparsers(dest="kind", metavar="KIND")
    q = kinds.add_parser("ppo", help="PPO inside the bundle's model; the best seed's policy goes into the bundle",
                         description=_ABOUT)
    q.add_argument("bundle", help="a bundle directory (cwm export)")
    q.add_argument("--game", help="the bundle's game as you name it (a bundle of your own module game: "
                                  "path/to/module.py:short_name); default: the manifest's")
    q.add_argument("--encoder", help="the observation encoder to train with, encode(observation, player_id) -> "
                                     "list[float] (default: the bundle's encoder.py)")
    q.add_argument("--steps", type=int, default=200_000,
                   help="environment steps (learner decisions) per seed (default 200000; the paper trained 10M)")
    q.add_argument("--seeds", type=int, default=5, help="independent runs, the best kept (default 5, as the paper)")
    q.add_argument("--first-seed", type=int, default=0, help="the seeds are FIRST..FIRST+SEEDS-1 (default 0)")
    q.add_argument("--num-envs", type=int, default=64, help="games stepped together (default 64)")
    q.add_argument("--rollout", type=int, default=32, help="steps of each game per update (default 32)")
    q.add_argument("--eval-every", type=int, default=10, help="updates between evaluations (default 10)")
    q.add_argument("--eval-games", type=int, default=200, help="games against random per evaluation (default 200)")
    q.add_argument("--keep", choices=("score", "worst_seat"), default="score",
                   help="which evaluated policy a seed keeps: the highest score (default), or the fewest losses in "
                        "its worse seat, then the score")
    q.add_argument("--stop-games", type=int, default=0,
                   help="stop a seed at the first policy that loses no game of an evaluation nor of this many more "
                        "games in each seat (default 0: train every step)")
    q.add_argument("--env", choices=("auto", "python", "jax"), default="auto",
                   help="what the games run on: the bundle's model in a training worker (python), or its JAX twin "
                        "with the network in one jitted update, the whole run in a sandbox child (jax; needs the "
                        "bundle's jax_twin.py and encoder.py); default auto: jax when the bundle has a JAX twin")
    q.add_argument("--network", choices=("auto", "feed-forward", "recurrent"), default="auto",
                   help="a GRU over the observation sequence, or not (default auto: recurrent for hidden information)")
    q.add_argument("--executor", default="inline", help="where the seeds run: inline (one after another here, "
                                                        "default), local or local:N (a process each), ray[:ADDRESS]")
    q.add_argument("--out", help="the run directory (default: BUNDLE-ppo beside the bundle)")
    q.add_argument("--yes", action="store_true", help=f"start even when the projected wall time is over "
                                                      f"{cost.duration(cost.CONFIRM_WALL_S)} (refused without it)")
    q.add_argument("--no-progress", action="store_true", help="hide the progress bars")
    q.set_defaults(func=cmd_train_ppo)
    p.set_defaults(func=lambda args: p.error("choose what to train: cwm train ppo BUNDLE"))


def train_config(args: argparse.Namespace, *, recurrent: bool) -> TrainConfig:
    """The ``TrainConfig`` of the flags.

    Raises:
      UsageError: a count out of range (named as its flag).
    """
    from cwm.ppo.train import TrainConfig  # the jax extra: cwm's other commands run without it

    for flag, value in (("--steps", args.steps), ("--seeds", args.seeds), ("--num-envs", args.num_envs),
                        ("--rollout", args.rollout), ("--eval-every", args.eval_every),
                        ("--eval-games", args.eval_games)):
        if value < 1:
            raise UsageError(f"{flag} must be at least 1, got {value}")
    stop_games = getattr(args, "stop_games", 0)
    if stop_games < 0:
        raise UsageError(f"--stop-games must be at least 0, got {stop_games}")
    return TrainConfig(total_steps=args.steps, num_envs=args.num_envs, rollout=args.rollout,
                       eval_every=args.eval_every, eval_games=args.eval_games, recurrent=recurrent,
                       minibatches=min(4, args.num_envs), keep=getattr(args, "keep", "score"), stop_games=stop_games)


def training_twin(bundle: Any, env: str, *, encoder: str | None, num_envs: int, minibatches: int) -> str:
    """The JAX twin's source to train on (``""``: the model), for ``--env``.

    Raises:
      UsageError: ``--env jax`` without a twin or the bundle's encoder (the twin's tensor is checked against the
        bundle's ``encoder.py``, not against ``--encoder``), or games not a multiple of the minibatches.
    """
    twin: str | None = bundle.jax_twin  # the bundle's checked jax_twin.py (cwm.bundle)
    if env == "python" or (env == "auto" and not twin):
        return ""
    if not twin:
        raise UsageError(f"--env jax: {bundle.path} has no jax_twin.py (cwm synthesize GAME --target jax --from BUNDLE)")
    if encoder is not None or "encoder.py" not in bundle.sources:
        raise UsageError("--env jax trains on the twin's observation tensor, which the bundle's load checks against "
                         "its own encoder.py: the bundle needs one, and --encoder cannot replace it")
    if num_envs % minibatches:
        raise UsageError(f"--env jax: --num-envs ({num_envs}) must be a multiple of {minibatches} (the minibatches)")
    return twin


def cmd_train_ppo(args: argparse.Namespace) -> int:
    try:
        from cwm.ppo import bundle as ppo_bundle  # the jax extra: cwm's other commands run without it
    except ImportError as e:
        raise UsageError(f"cwm train ppo needs JAX and optax: pip install 'cwm[jax]' ({e})") from None

    bundle = load_bundle(args.bundle, game=args.game)
    recurrent = (not bundle.spec.perfect_information) if args.network == "auto" else args.network == "recurrent"
    config = train_config(args, recurrent=recurrent)
    encoder = Path(args.encoder).read_text(encoding="utf-8") if args.encoder else None
    twin = training_twin(bundle, args.env, encoder=encoder, num_envs=config.num_envs, minibatches=config.minibatches)
    print(f"training on: {'the JAX twin (jax_twin.py), all in JAX in a sandbox child' if twin else 'the model (model.py) in a training worker'}")
    source = ppo_bundle.training_source(bundle, encoder, twin_source=twin)
    out = Path(args.out) if args.out else bundle.path.with_name(bundle.path.name + "-ppo")
    seeds = list(range(args.first_seed, args.first_seed + args.seeds))
    executor = make_executor(args.executor)
    try:  # timed where the seeds train (a process pool never forks a process that has run JAX)
        estimate = ppo_bundle.estimate_training(source, config, seeds, out_dir=out, executor=executor,
                                                workers=cost.executor_workers(args.executor))
        cost.confirm_lines(estimate.lines(), estimate.wall_s, yes=args.yes, smaller="lower --steps or --seeds")
        start = time.perf_counter()
        best = ppo_bundle.train_bundle(bundle, source, config, seeds, out_dir=out, executor=executor,
                                       progress=not args.no_progress)
    finally:
        executor.close()
    record = {"estimate": estimate.to_json(), "elapsed_wall_s": time.perf_counter() - start,
              "config": dataclasses.asdict(config)}
    (out / "cost.json").write_text(json.dumps(record, indent=2) + "\n", encoding="utf-8")
    load_bundle(bundle.path, game=args.game)  # verified as a receiver loads it, the new policy's arrays included
    print(f"best: seed {best.seed}, mean return {best.best_score:+.3f} against random in the model")
    print(f"policy added to {bundle.path} (play it as ppo:{bundle.path}); curves: {out / 'curve.png'}")
    return 0
