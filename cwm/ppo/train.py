"""Training a PPO policy inside a world model against a uniformly random opponent (JAX; the ``jax`` extra).

``train`` runs PPO (Schulman et al. 2017) on ``Envs``: many games stepped together per batch, both seats
(``planners.env``), in this process for trusted games or in a sandbox worker for an untrusted model and
encoder (``cwm.sandbox.training``). Every ``eval_every`` updates the greedy policy plays ``eval_games``
fresh games against random in the same model, both seats; the best policy so far (by their mean return,
losses weighted by ``loss_weight``, or first by the fewest losses in the worse seat: ``TrainConfig.keep``)
is kept, and with ``TrainConfig.stop_games`` the run stops at the first policy that loses no game of an
evaluation and of a further check of that many games in each seat. Every ``checkpoint_every`` updates
the run is saved and the games restart from seeds fixed by the update count, so a resumed run ends with
exactly the weights of one that never stopped. ``train_seeds`` trains several seeds (``cwm.ppo.seeds.train_seeds``).
"""

from __future__ import annotations

import dataclasses
import json
import zipfile
from collections.abc import Callable
from pathlib import Path
from typing import Any, Protocol

import jax
import jax.numpy as jnp
import numpy as np

from cwm import games
from cwm.bundle.policy import ARRAY_NAMES, MAX_ARRAY_BYTES, PolicyConfig, forward, init_params, masked_logits
from cwm.files import ArchiveBounds, InputLimitError, check_npz, loads_bounded, open_bounded
from cwm.ppo.learner import LossConfig, act, optimiser, update
from cwm.sandbox.watch import tree_cpu
from cwm.types import CwmError
from planners.env import EnvStep, LocalEnvs

CHECKPOINT = "checkpoint.npz"
CHECKPOINT_BYTES = 4 << 30  # a checkpoint inflated: the weights, the best ones and Adam's two moments of each
# What a checkpoint's zip directory may list (``_save``): its meta, the weights (p/) and the best weights (b/)
# by a policy's array names, and the optimiser state's leaves (o/0, o/1, ...: a few per weight array).
CHECKPOINT_MEMBERS = 512
CHECKPOINT_BOUNDS = ArchiveBounds(
    kind="checkpoint", holds="a checkpoint holds only meta, p/<array>, b/<array> and o/<number>",
    allowed=lambda name: name == "meta" or (name[:2] in ("p/", "b/") and name[2:] in ARRAY_NAMES)
    or (name[:2] == "o/" and name[2:].isdigit() and name[2:].isascii() and len(name) <= 6),
    max_members=CHECKPOINT_MEMBERS, member_bytes=MAX_ARRAY_BYTES, total_bytes=CHECKPOINT_BYTES)


KEEP = ("score", "worst_seat")  # TrainConfig.keep's choices
SEAT_COUNTS = ("losses_seat0", "losses_seat1", "games_seat0", "games_seat1")  # an evaluation row's counts


class CheckpointError(CwmError, ValueError):
    """A training checkpoint that cannot be read, or is of another network; the message names the file."""


class Env(Protocol):
    def reset(self) -> EnvStep: ...

    def step(self, actions: np.ndarray) -> EnvStep: ...


def ground_truth_envs(game: str | games.GameSpec, encode: Any) -> LocalEnvs:
    """Games of the ground truth (a registry name or spec) in this process, observed through the registry's
    views and encoded by ``encode``."""
    spec = games.resolve(game)
    real = games.load_game(spec)
    return LocalEnvs(real.new_initial_state, lambda state, player: games.observe(spec, state, player), encode,
                     num_actions=real.num_distinct_actions())


class Envs(Protocol):
    """Makes batches of games of one model (``planners.env.LocalEnvs``, ``cwm.sandbox.training.ContainedEnvs``)."""

    num_actions: int

    def make(self, num_envs: int, seed: int) -> Env: ...


@dataclasses.dataclass(frozen=True)
class TrainConfig:
    """One PPO run's settings (defaults: the usual PPO settings at a small scale; the paper trained 10M steps).

    Attributes:
      total_steps: learner decisions to train on (env steps: one per game per batch).
      num_envs, rollout: games stepped together, and steps of each per update.
      epochs, minibatches: passes over each rollout, and minibatches (of whole games' segments) per pass.
      lr, anneal_lr, max_grad_norm: Adam's step size, whether it falls linearly to 0 over the run, and the
        gradient-norm clip.
      gamma, gae_lambda: the discount and GAE's lambda.
      clip, vf_coef, ent_coef: the loss (``cwm.ppo.learner.LossConfig``).
      loss_weight: how much a negative return weighs in the training reward and in choosing the best
        policy: 1 trains on the game's payoff; above 1 the learner prefers a sure draw to a gamble that
        sometimes loses (against random, the payoff-best second player at tic-tac-toe loses 0.74% of games).
      hidden, recurrent: the network (``cwm.bundle.policy.PolicyConfig``).
      eval_every, eval_games: updates between evaluations against random, and games per evaluation.
      checkpoint_every: updates between checkpoints (the games restart there).
      seed: seeds the weights, the sampling and the games.
      opponent: ``random`` (uniformly random legal moves), or ``self`` (self-play: the others sample from the
        learner's current network; on a JAX twin only, ``cwm.ppo.jax_train``). Evaluations are against random.
      keep: which evaluated policy the run keeps as its best: ``score`` (the highest score), or
        ``worst_seat`` (the lowest loss rate in its worse seat, then the highest score: for a bar such as
        "no loss in either seat", which a high mean can hide in one seat).
      stop_games: 0 trains all ``total_steps``; above 0, every evaluation in which the policy lost no game
        (in either seat) is followed by a check of ``stop_games`` more games in each seat, and if it loses
        none of those either, it is kept and the run stops there.
    """

    total_steps: int = 200_000
    num_envs: int = 64
    rollout: int = 32
    epochs: int = 4
    minibatches: int = 4
    lr: float = 1e-3
    anneal_lr: bool = True
    max_grad_norm: float = 0.5
    gamma: float = 0.99
    gae_lambda: float = 0.95
    clip: float = 0.2
    vf_coef: float = 0.5
    ent_coef: float = 0.01
    loss_weight: float = 1.0
    hidden: int = 256
    recurrent: bool = False
    eval_every: int = 10
    eval_games: int = 200
    checkpoint_every: int = 50
    seed: int = 0
    opponent: str = "random"
    keep: str = "score"
    stop_games: int = 0

    def check(self) -> None:
        """Raises ``ValueError`` naming the first setting out of range."""
        for name in ("total_steps", "num_envs", "rollout", "epochs", "minibatches", "hidden", "eval_every",
                     "eval_games", "checkpoint_every"):
            if not getattr(self, name) >= 1:
                raise ValueError(f"TrainConfig.{name} must be >= 1, got {getattr(self, name)!r}")
        if self.minibatches > self.num_envs:
            raise ValueError(f"TrainConfig.minibatches ({self.minibatches}) may not exceed num_envs ({self.num_envs}): "
                             f"a minibatch holds whole games")
        if self.opponent not in ("random", "self"):
            raise ValueError(f"TrainConfig.opponent must be 'random' or 'self', got {self.opponent!r}")
        if self.keep not in KEEP:
            raise ValueError(f"TrainConfig.keep must be one of {', '.join(KEEP)}, got {self.keep!r}")
        if type(self.stop_games) is not int or self.stop_games < 0:
            raise ValueError(f"TrainConfig.stop_games must be a whole number >= 0, got {self.stop_games!r}")
        if not self.loss_weight > 0:
            raise ValueError(f"TrainConfig.loss_weight must be > 0, got {self.loss_weight!r}")

    @property
    def updates(self) -> int:
        return max(1, self.total_steps // (self.num_envs * self.rollout))


@dataclasses.dataclass
class RunState:
    """What a checkpoint holds: the weights, the optimiser, the best policy (its evaluation row too), the
    learning curve, and whether the run stopped early (``TrainConfig.stop_games``)."""

    params: dict[str, Any]
    opt_state: Any
    best: dict[str, np.ndarray]
    best_score: float
    update: int
    curve: list[dict[str, float]]
    best_row: dict[str, float] = dataclasses.field(default_factory=dict)
    stopped: bool = False


@dataclasses.dataclass(frozen=True)
class TrainResult:
    """A finished run: the best policy against random, its ``score`` (``evaluate``'s), and the learning curve
    (one row per evaluation: ``steps`` and ``evaluate``'s row)."""

    params: dict[str, np.ndarray]
    policy: PolicyConfig
    best_score: float
    curve: list[dict[str, float]]
    seed: int


def train(envs: Envs, config: TrainConfig, *, out_dir: str | Path, game: str = "", progress: bool = True,
          stop_after: int | None = None) -> TrainResult:
    """Trains (or resumes, from ``out_dir/checkpoint.npz``) one seed.

    Args:
      envs: the games to train in.
      config: the run's settings.
      out_dir: where checkpoints go.
      game: recorded in the policy's config.
      progress: show a progress bar.
      stop_after: stop (with a checkpoint) after this many updates in all: for tests of resuming.
    """
    config.check()
    if config.opponent != "random":
        raise ValueError("TrainConfig.opponent 'self' (self-play) needs a JAX twin (cwm.ppo.jax_train.train_twin)")
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    obs_size = envs.make(1, config.seed).reset().obs.shape[1]
    policy = PolicyConfig(obs_size, envs.num_actions, config.hidden, config.recurrent, game)
    opt = optimiser(config.lr, config.max_grad_norm,
                    anneal_steps=config.updates * config.epochs * config.minibatches if config.anneal_lr else 0)
    run = _load(out / CHECKPOINT, policy, opt) or _fresh(policy, config, opt)
    cfg = LossConfig(config.clip, config.vf_coef, config.ent_coef)
    bar = _bar(config.updates, run.update, progress)
    last = min(config.updates, stop_after if stop_after is not None else config.updates)
    while run.update < last and not run.stopped:
        chunk_end = min(last, (run.update // config.checkpoint_every + 1) * config.checkpoint_every)
        env = envs.make(config.num_envs, _seed(config.seed, 1, run.update))
        carry = _Carry(env.reset(), config.num_envs, config.hidden)
        while run.update < chunk_end and not run.stopped:
            batch = _rollout(run.params, env, carry, config, jax.random.fold_in(jax.random.key(config.seed), run.update))
            for mb in _minibatches(batch, config, run.update):
                run.params, run.opt_state, _ = update(run.params, run.opt_state, mb, opt=opt, cfg=cfg)
            run.update += 1
            if run.update % config.eval_every == 0 or run.update == config.updates:
                _evaluate_into(run, envs, config)
                bar.set_postfix(mean_return=f"{run.curve[-1]['mean_return']:.3f}", best=f"{run.best_score:.3f}")
            bar.update(1)
        _save(out / CHECKPOINT, run, policy)
    bar.close()
    return TrainResult(run.best, policy, run.best_score, run.curve, config.seed)


def time_update(envs: Envs, config: TrainConfig, *, repeats: int = 1) -> float:
    """CPU seconds of one update of ``train`` at ``config`` (its rollout of every game, then every
    minibatch's gradient step), timed over ``repeats`` updates after an untimed one that compiles the
    network; evaluations are not counted. CPU time of this process's threads and of the processes under it
    (a contained model's worker steps the games there), so the estimate is the same on an idle and a busy
    machine. Nothing is saved. Randomness: as ``train`` with ``config.seed``."""
    config.check()
    policy = PolicyConfig(envs.make(1, config.seed).reset().obs.shape[1], envs.num_actions, config.hidden,
                          config.recurrent)
    opt = optimiser(config.lr, config.max_grad_norm)
    run = _fresh(policy, config, opt)
    cfg = LossConfig(config.clip, config.vf_coef, config.ent_coef)
    env = envs.make(config.num_envs, _seed(config.seed, 1, 0))
    carry = _Carry(env.reset(), config.num_envs, config.hidden)
    start = 0.0
    for i in range(repeats + 1):
        start = tree_cpu(reaped=False) if i == 1 else start
        batch = _rollout(run.params, env, carry, config, jax.random.fold_in(jax.random.key(config.seed), i))
        for mb in _minibatches(batch, config, i):
            run.params, run.opt_state, _ = update(run.params, run.opt_state, mb, opt=opt, cfg=cfg)
    jax.block_until_ready(run.params)
    return (tree_cpu(reaped=False) - start) / repeats


class _Carry:
    """The games' state between rollouts: the last step, the GRU state, and which rows start a new game."""

    def __init__(self, step: EnvStep, num_envs: int, hidden: int):
        self.step = step
        self.hidden = np.zeros((num_envs, hidden), np.float32)
        self.starts = np.ones(num_envs, bool)


def _rollout(params: dict[str, Any], env: Env, carry: _Carry, config: TrainConfig, key: jax.Array) -> dict[str, Any]:
    """``config.rollout`` steps of every game; the segments with their advantages and returns (GAE)."""
    rows: dict[str, list[Any]] = {k: [] for k in ("obs", "mask", "starts", "actions", "logp", "values", "rewards", "dones")}
    hidden0 = carry.hidden * ~carry.starts[:, None]
    h = hidden0
    for t in range(config.rollout):
        step = carry.step
        h = h * ~carry.starts[:, None]
        action, logp, value, h = act(params, step.obs, step.mask, h, jax.random.fold_in(key, t))
        action = np.asarray(action)
        nxt = env.step(action)
        for k, v in (("obs", step.obs), ("mask", step.mask), ("starts", carry.starts), ("actions", action),
                     ("logp", logp), ("values", value), ("rewards", _weighted(nxt.reward, config.loss_weight)),
                     ("dones", nxt.done)):
            rows[k].append(np.asarray(v))
        carry.step, carry.starts, h = nxt, nxt.done.copy(), np.asarray(h)
    carry.hidden = h
    _, _, last_value, _ = act(params, carry.step.obs, carry.step.mask, h * ~carry.starts[:, None], key)
    batch = {k: np.stack(v) for k, v in rows.items()}
    batch["adv"], batch["returns"] = _gae(batch, np.asarray(last_value), config)
    batch["hidden"] = hidden0
    return batch


def _weighted(returns: np.ndarray, loss_weight: float) -> np.ndarray:
    """``returns`` with the negative ones multiplied by ``loss_weight``."""
    return np.where(returns < 0, returns * loss_weight, returns).astype(returns.dtype)


def _gae(batch: dict[str, np.ndarray], last_value: np.ndarray, config: TrainConfig) -> tuple[np.ndarray, np.ndarray]:
    values, rewards, dones = batch["values"], batch["rewards"], batch["dones"]
    adv = np.zeros_like(values)
    running = np.zeros_like(last_value)
    for t in reversed(range(len(values))):
        next_value = last_value if t == len(values) - 1 else values[t + 1]
        alive = 1.0 - dones[t]
        delta = rewards[t] + config.gamma * next_value * alive - values[t]
        running = delta + config.gamma * config.gae_lambda * alive * running
        adv[t] = running
    return adv, adv + values


def _minibatches(batch: dict[str, np.ndarray], config: TrainConfig, update_index: int) -> list[dict[str, Any]]:
    """``epochs`` shuffled passes over the games, each split into ``minibatches`` groups of whole segments."""
    rng = np.random.default_rng(_seed(config.seed, 2, update_index))
    size = max(1, config.num_envs // config.minibatches)
    out = []
    for _ in range(config.epochs):
        order = rng.permutation(config.num_envs)
        for i in range(0, config.num_envs - size + 1, size):
            idx = order[i:i + size]
            mb = {k: jnp.asarray(v[:, idx]) for k, v in batch.items() if k != "hidden"}
            mb["hidden"] = jnp.asarray(batch["hidden"][idx])
            out.append(mb)
    return out


def evaluate(params: dict[str, np.ndarray], envs: Envs, *, games: int, seed: int, loss_weight: float = 1.0,
             max_steps: int = 10_000) -> dict[str, float]:
    """The greedy policy against random: ``games`` fresh games in the model (half in each seat), their first
    game each; ``mean_return``, ``win_rate`` (return > 0), ``loss_rate`` (return < 0), per seat too, and
    ``score``: the mean return with negative returns multiplied by ``loss_weight``; and the counts per seat,
    ``losses_seat0``, ``games_seat0`` and so on.

    Raises:
      ValueError: a game did not end within ``max_steps`` of the learner's moves.
    """
    env = envs.make(games, seed)
    step = env.reset()
    seats = step.seat.copy()
    hidden = np.zeros((games, params["w1"].shape[1]), np.float32)
    result = np.full(games, np.nan)
    for _ in range(max_steps):
        if not np.isnan(result).any():
            break
        logits, _, hidden = forward(params, step.obs, hidden)
        step = env.step(np.argmax(masked_logits(logits, step.mask), axis=1))
        fresh = step.done & np.isnan(result)
        result[fresh] = step.reward[fresh]
        hidden = hidden * ~step.done[:, None]
    if np.isnan(result).any():
        raise ValueError(f"an evaluation game did not end within {max_steps} moves of the learner")
    return summary(result, seats, loss_weight)


def summary(result: np.ndarray, seats: np.ndarray, loss_weight: float) -> dict[str, float]:
    """``evaluate``'s row from the learner's returns (one per game) and its seat in each game."""
    row = {"mean_return": float(result.mean()), "win_rate": float((result > 0).mean()),
           "loss_rate": float((result < 0).mean()), "score": float(_weighted(result, loss_weight).mean())}
    for seat in (0, 1):
        row[f"mean_return_seat{seat}"] = float(result[seats == seat].mean())
        row[f"loss_rate_seat{seat}"] = float((result[seats == seat] < 0).mean())
        row[f"losses_seat{seat}"] = int((result[seats == seat] < 0).sum())
        row[f"games_seat{seat}"] = int((seats == seat).sum())
    return row


def _evaluate_into(run: RunState, envs: Envs, config: TrainConfig) -> None:
    params = {k: np.asarray(v) for k, v in run.params.items()}
    row = evaluate(params, envs, games=config.eval_games, seed=_seed(config.seed, 3, run.update),
                   loss_weight=config.loss_weight)
    record(run, params, row, config, lambda games, seed: evaluate(params, envs, games=games, seed=seed,
                                                                  loss_weight=config.loss_weight))


def record(run: RunState, params: dict[str, np.ndarray], row: dict[str, float], config: TrainConfig,
           recheck: Callable[[int, int], dict[str, float]]) -> None:
    """Adds an evaluation's ``row`` (``summary``'s) of ``params`` to the curve and keeps them if they rank
    above the best so far (``TrainConfig.keep``). With ``TrainConfig.stop_games``, a policy that lost no game
    plays ``recheck(games, seed)`` (an evaluation of that many games, seats rotating): its counts join the
    row as ``check_losses_seat0`` and so on, and if it lost none of those either, it is kept and the run
    marked stopped."""
    row = {"update": run.update, "steps": run.update * config.num_envs * config.rollout, **row}
    if config.stop_games and row["losses_seat0"] == row["losses_seat1"] == 0:
        check = recheck(2 * config.stop_games, _seed(config.seed, 4, run.update))
        row |= {f"check_{k}": check[k] for k in SEAT_COUNTS}
    run.curve.append(row)
    run.stopped = _stops(row)
    if run.stopped or _ranks_above(row, run, config.keep):
        run.best, run.best_score, run.best_row = params, row["score"], row


def kept_row(curve: list[dict[str, float]], keep: str) -> dict[str, float]:
    """The row of the policy a run with this ``curve`` kept (``record``'s choice, replayed; ``{}`` for none)."""
    run = RunState({}, None, {}, -np.inf, 0, [])
    for row in curve:
        if _stops(row) or _ranks_above(row, run, keep):
            run.best_score, run.best_row = row["score"], row
    return run.best_row


def rank(row: dict[str, float], keep: str) -> tuple[float, ...]:
    """An evaluation row's rank by ``keep`` (``TrainConfig.keep``), higher better: ``(score,)``, or ``(-the loss
    rate of the worse seat, score)``."""
    if keep == "score":
        return (row["score"],)
    return (-max(row["loss_rate_seat0"], row["loss_rate_seat1"]), row["score"])


def _ranks_above(row: dict[str, float], run: RunState, keep: str) -> bool:
    """Whether an evaluation's ``row`` ranks above the run's best by ``keep``."""
    if keep == "score" or not run.best_row:
        return row["score"] > run.best_score
    return rank(row, keep) > rank(run.best_row, keep)


def _stops(row: dict[str, float]) -> bool:
    """Whether the row's policy lost none of its evaluation's games nor of its stop check's."""
    return all(row.get(k) == 0 for k in ("losses_seat0", "losses_seat1", "check_losses_seat0", "check_losses_seat1"))


def _seed(seed: int, stream: int, index: int) -> int:
    """A seed for one stream (games, minibatch order, evaluation) at one update, fixed by the run's seed."""
    return int(np.random.SeedSequence([seed, stream, index]).generate_state(1)[0])


def _fresh(policy: PolicyConfig, config: TrainConfig, opt: Any) -> RunState:
    params = {k: jnp.asarray(v) for k, v in init_params(policy, config.seed).items()}
    return RunState(params, opt.init(params), {}, -np.inf, 0, [])


def _save(file: Path, run: RunState, policy: PolicyConfig) -> None:
    leaves = jax.tree_util.tree_leaves(run.opt_state)
    meta = {"update": run.update, "best_score": run.best_score, "curve": run.curve,
            "policy": dataclasses.asdict(policy), "best_row": run.best_row, "stopped": run.stopped}
    arrays: dict[str, Any] = {"meta": np.array(json.dumps(meta))}
    arrays |= {f"p/{k}": np.asarray(v) for k, v in run.params.items()}
    arrays |= {f"b/{k}": np.asarray(v) for k, v in run.best.items()}
    arrays |= {f"o/{i}": np.asarray(v) for i, v in enumerate(leaves)}
    tmp = file.with_suffix(".partial.npz")
    np.savez(tmp, **arrays)
    tmp.replace(file)


def _load(file: Path, policy: PolicyConfig, opt: Any) -> RunState | None:
    """The run saved in ``file`` (``None`` when there is none); it must be of this network's shape."""
    if not file.exists():
        return None
    meta, data = read_checkpoint(file)
    if PolicyConfig(**meta["policy"]) != policy:
        raise CheckpointError(f"{file}: the checkpoint is of another network ({meta['policy']}, not "
                              f"{dataclasses.asdict(policy)})")
    params = {k[2:]: jnp.asarray(v) for k, v in data.items() if k.startswith("p/")}
    best = {k[2:]: v for k, v in data.items() if k.startswith("b/")}
    treedef = jax.tree_util.tree_structure(opt.init(params))
    leaves = [jnp.asarray(data[f"o/{i}"]) for i in range(treedef.num_leaves)]  # type: ignore[attr-defined]
    return RunState(params, jax.tree_util.tree_unflatten(treedef, leaves), best, float(meta["best_score"]),
                    int(meta["update"]), list(meta["curve"]), dict(meta.get("best_row") or {}),
                    meta.get("stopped") is True)


def read_checkpoint(file: Path, *, arrays: bool = True) -> tuple[dict[str, Any], dict[str, np.ndarray]]:
    """The meta and arrays of a training checkpoint (``_save``), read as untrusted input: the file's size and
    its archive's members, sizes and array headers are checked (``CHECKPOINT_BOUNDS``) before any array is
    inflated, on the one open file that is then loaded.

    Args:
      arrays: also load the arrays (``False``: the meta alone, the arrays ``{}``).

    Raises:
      InputLimitError: the file or its archive over a bound (names the file).
      CheckpointError: a checkpoint that does not load, or whose meta is not an object with an update count.
    """
    with open_bounded(file, CHECKPOINT_BYTES, what="checkpoint") as f:
        check_npz(f, CHECKPOINT_BOUNDS, where=f"checkpoint {file}")
        f.seek(0)
        try:
            with np.load(f, allow_pickle=False) as data:
                meta = loads_bounded(str(data["meta"]), where=f"{file}: meta", allow_nan=True)
                found = {k: data[k] for k in data.files if k != "meta"} if arrays else {}
            if not isinstance(meta, dict) or type(meta.get("update")) is not int:
                raise TypeError("its meta is not an object with an integer update count")
        except (OSError, ValueError, EOFError, KeyError, TypeError, zipfile.BadZipFile) as e:
            if isinstance(e, InputLimitError):
                raise
            raise CheckpointError(f"checkpoint {file}: not a readable checkpoint ({type(e).__name__}: "
                                  f"{str(e)[:200]})") from None
    return meta, found


def _bar(total: int, done: int, enabled: bool) -> Any:
    from tqdm import tqdm

    return tqdm(total=total, initial=done, disable=not enabled, desc="ppo", unit="update")
