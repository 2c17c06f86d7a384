"""PPO entirely in JAX on a JAX twin: the games, the network and the learning step in one jitted update.

``train_twin`` trains the same policy as ``cwm.ppo.train.train`` (same ``TrainConfig``, network, loss,
optimiser, checkpoint, curve and ``TrainResult``), PureJaxRL-style (Lu et al. 2022): one update is one
jitted function, a ``lax.scan`` over ``rollout`` steps of ``num_envs`` vmapped games
(``cwm.ppo.jax_env.TwinEnv``: auto-reset, chance drawn with explicit keys, the opponent inside the scan:
random, or with ``TrainConfig.opponent="self"`` the learner's own network sampling the others' moves;
seats rotating game by game), then GAE (Schulman et al. 2016) as a reverse ``lax.scan``, then
``epochs`` passes of ``minibatches`` gradient steps over shuffled whole segments. Nothing crosses to the
host during an update but its breach flags (checked after each; a breach refuses the twin in one line).
Evaluation (greedy against random, both seats) runs in JAX too, as one ``lax.while_loop``.

Randomness: update ``u``'s rollout and minibatch order come from ``jax.random.fold_in(key(seed), u)``; the
games restart at every checkpoint from a key fixed by the update count, so a resumed run ends with exactly
the weights of one that never stopped, and the same seed gives the same weights bit for bit.

The twin is LLM-written: the caller must run this where the twin may run (a hardened worker with JAX);
here it is a function of the twin module (trusted fixtures and tests call it in-process).
"""

from __future__ import annotations

import functools
import time
import types
from pathlib import Path
from typing import Any

import jax
import jax.numpy as jnp
import numpy as np

from cwm.bundle.policy import PolicyConfig, forward, masked_logits
from cwm.ppo.jax_env import TwinContractError, TwinEnv, breach_message, twin_shape
from cwm.ppo.learner import LossConfig, act, optimiser, update
from cwm.ppo.train import (
    CHECKPOINT,
    RunState,
    TrainConfig,
    TrainResult,
    _bar,
    _fresh,
    _load,
    _save,
    _seed,
    record,
    summary,
)


def train_twin(twin: types.ModuleType, config: TrainConfig, *, out_dir: str | Path | None, game: str = "",
               progress: bool = True, stop_after: int | None = None) -> TrainResult:
    """Trains (or resumes, from ``out_dir/checkpoint.npz``) one seed on a JAX twin, entirely in JAX.

    Args:
      twin: the twin module (checked by ``cwm.ppo.jax_env.twin_shape`` first).
      config: the run's settings (``TrainConfig``; ``num_envs`` must be a multiple of ``minibatches``).
      out_dir: where checkpoints go (``None``: none are written or read, as in a sandbox child).
      game: recorded in the policy's config.
      progress: show a progress bar.
      stop_after: stop (with a checkpoint) after this many updates in all: for tests of resuming.

    Raises:
      TwinContractError: the twin breaks its contract (at the check, or in play: one line).
    """
    learner = TwinLearner(twin, config, game=game)
    out = None if out_dir is None else Path(out_dir)
    if out is not None:
        out.mkdir(parents=True, exist_ok=True)
    run = (out and _load(out / CHECKPOINT, learner.policy, learner.opt)) or _fresh(learner.policy, config, learner.opt)
    bar = _bar(config.updates, run.update, progress)
    last = min(config.updates, stop_after if stop_after is not None else config.updates)
    while run.update < last and not run.stopped:
        chunk_end = min(last, (run.update // config.checkpoint_every + 1) * config.checkpoint_every)
        carry = learner.start(jax.random.key(_seed(config.seed, 1, run.update)), run.params)
        while run.update < chunk_end and not run.stopped:
            run.params, run.opt_state, carry = learner.update(run.params, run.opt_state, carry, run.update)
            run.update += 1
            if run.update % config.eval_every == 0 or run.update == config.updates:
                _evaluate_into(run, learner, config)
                bar.set_postfix(mean_return=f"{run.curve[-1]['mean_return']:.3f}", best=f"{run.best_score:.3f}")
            bar.update(1)
        if out is not None:
            _save(out / CHECKPOINT, run, learner.policy)
    bar.close()
    return TrainResult(run.best, learner.policy, run.best_score, run.curve, config.seed)


class TwinLearner:
    """One run's jitted pieces on a twin: ``start`` (fresh games), ``update`` (one PPO update) and
    ``evaluate`` (greedy against random).

    Raises:
      TwinContractError: the twin breaks its contract (``twin_shape``).
      ValueError: ``config`` out of range, or ``num_envs`` not a multiple of ``minibatches``.
    """

    def __init__(self, twin: types.ModuleType, config: TrainConfig, *, game: str = ""):
        config.check()
        if config.num_envs % config.minibatches:
            raise ValueError(f"TrainConfig.num_envs ({config.num_envs}) must be a multiple of minibatches "
                             f"({config.minibatches}) to train on a JAX twin")
        self.shape = twin_shape(twin)
        self.env = TwinEnv(twin, self.shape)
        self.config = config
        self.policy = PolicyConfig(self.shape.obs_size, self.shape.num_actions, config.hidden, config.recurrent, game)
        self.opt = optimiser(config.lr, config.max_grad_norm,
                             anneal_steps=config.updates * config.epochs * config.minibatches if config.anneal_lr else 0)
        self.loss = LossConfig(config.clip, config.vf_coef, config.ent_coef)
        self._update = jax.jit(self._update_fn)
        self._start = jax.jit(self._start_fn)
        self._evaluate = jax.jit(self._evaluate_fn, static_argnames=("games", "max_steps"))

    def start(self, key: jax.Array, params: Any) -> dict[str, Any]:
        """Fresh games for a chunk of updates (in self-play the opening moves of the others are ``params``'):
        the rollout's carry."""
        carry, flags = self._start(key, params)
        _refuse(flags)
        return carry  # type: ignore[no-any-return]

    def update(self, params: Any, opt_state: Any, carry: dict[str, Any], index: int) -> tuple[Any, Any, dict[str, Any]]:
        """Update ``index``: rollout, GAE, minibatch epochs; refuses the twin on a breach."""
        key = jax.random.fold_in(jax.random.key(self.config.seed), index)
        params, opt_state, carry, flags = self._update(params, opt_state, carry, key)
        _refuse(flags)
        return params, opt_state, carry

    def evaluate(self, params: dict[str, np.ndarray], *, games: int, seed: int, max_steps: int = 10_000) -> dict[str, float]:
        """``cwm.ppo.train.evaluate``'s row for the greedy policy against random on the twin (``games`` fresh
        games, seats rotating, the first game of each).

        Raises:
          ValueError: a game did not end within ``max_steps`` of the learner's moves.
        """
        result, seats, flags = self._evaluate({k: jnp.asarray(v) for k, v in params.items()},
                                              jax.random.key(seed), games=games, max_steps=max_steps)
        _refuse(flags)
        result = np.asarray(result, np.float64)
        if np.isnan(result).any():
            raise ValueError(f"an evaluation game did not end within {max_steps} moves of the learner")
        return summary(result, np.asarray(seats), self.config.loss_weight)

    def _start_fn(self, key: jax.Array, params: Any) -> tuple[dict[str, Any], jax.Array]:
        env, view = self._training_env(params).reset(key, self.config.num_envs)
        hidden = jnp.zeros((self.config.num_envs, self.config.hidden), jnp.float32)
        carry = {"env": env, "view": view, "hidden": hidden, "starts": jnp.ones(self.config.num_envs, bool)}
        return carry, _any_flags(view["flags"])

    def _update_fn(self, params: Any, opt_state: Any, carry: dict[str, Any],
                   key: jax.Array) -> tuple[Any, Any, dict[str, Any], jax.Array]:
        k_roll, k_last, k_order = jax.random.split(key, 3)
        hidden0 = carry["hidden"] * ~carry["starts"][:, None]
        carry = carry | {"hidden": hidden0}
        carry, rows = jax.lax.scan(functools.partial(self._rollout_step, params), carry,
                                   jax.random.split(k_roll, self.config.rollout))
        view = carry["view"]
        _, _, last_value, _ = act(params, view["obs"], view["mask"], carry["hidden"] * ~carry["starts"][:, None], k_last)
        flags = _any_flags(rows.pop("flags"))
        rows["adv"], rows["returns"] = gae(rows["values"], rows["rewards"], rows["dones"], last_value,
                                           gamma=self.config.gamma, gae_lambda=self.config.gae_lambda)
        params, opt_state = self._epochs(params, opt_state, rows, hidden0, k_order)
        return params, opt_state, carry, flags

    def _rollout_step(self, params: Any, carry: dict[str, Any], key: jax.Array) -> tuple[dict[str, Any], dict[str, Any]]:
        view, starts = carry["view"], carry["starts"]
        k_act, k_env = jax.random.split(key)
        hidden = carry["hidden"] * ~starts[:, None]
        action, logp, value, hidden = act(params, view["obs"], view["mask"], hidden, k_act)
        env, nxt = self._training_env(params).step(carry["env"], action.astype(jnp.int32), k_env)
        reward = nxt["reward"]
        reward = jnp.where(reward < 0, reward * self.config.loss_weight, reward)
        row = {"obs": view["obs"], "mask": view["mask"], "starts": starts, "actions": action, "logp": logp,
               "values": value, "rewards": reward, "dones": nxt["done"].astype(jnp.float32), "flags": nxt["flags"]}
        return {"env": env, "view": nxt, "hidden": hidden, "starts": nxt["done"]}, row

    def _training_env(self, params: Any) -> TwinEnv:
        """The games the learner trains in: against random, or (self-play) against ``params``' sampled moves
        (the network without memory: a recurrent one starts from a zero state at every move)."""
        if self.config.opponent == "random":
            return self.env

        def opponent(obs: jax.Array, mask: jax.Array, key: jax.Array) -> jax.Array:
            hidden = jnp.zeros((1, self.config.hidden), jnp.float32)
            logits, _, _ = forward(params, obs[None], hidden, jnp)
            return jax.random.categorical(key, masked_logits(logits, mask[None], jnp))[0]

        return TwinEnv(self.env.twin, self.shape, opponent=opponent)

    def _epochs(self, params: Any, opt_state: Any, rows: dict[str, jax.Array], hidden0: jax.Array,
                key: jax.Array) -> tuple[Any, Any]:
        """``epochs`` shuffled passes over the games, each ``minibatches`` gradient steps on whole segments."""
        config = self.config
        size = config.num_envs // config.minibatches

        def step(state: tuple[Any, Any], idx: jax.Array) -> tuple[tuple[Any, Any], None]:
            mb = {k: v[:, idx] for k, v in rows.items()} | {"hidden": hidden0[idx]}
            params, opt_state, _ = update(state[0], state[1], mb, opt=self.opt, cfg=self.loss)
            return (params, opt_state), None

        def epoch(state: tuple[Any, Any], k: jax.Array) -> tuple[tuple[Any, Any], None]:
            order = jax.random.permutation(k, config.num_envs).reshape(config.minibatches, size)
            return jax.lax.scan(step, state, order)[0], None

        (params, opt_state), _ = jax.lax.scan(epoch, (params, opt_state), jax.random.split(key, config.epochs))
        return params, opt_state

    def _evaluate_fn(self, params: Any, key: jax.Array, *, games: int,
                     max_steps: int) -> tuple[jax.Array, jax.Array, jax.Array]:
        k_reset, k_play = jax.random.split(key)
        env, view = self.env.reset(k_reset, games)
        seats = view["seat"]

        def playing(c: tuple[Any, ...]) -> jax.Array:
            return jnp.isnan(c[3]).any() & (c[4] < max_steps)

        def move(c: tuple[Any, ...]) -> tuple[Any, ...]:
            env, view, hidden, result, i, flags = c
            logits, _, hidden = forward(params, view["obs"], hidden, jnp)
            action = jnp.argmax(masked_logits(logits, view["mask"], jnp), axis=1).astype(jnp.int32)
            env, view = self.env.step(env, action, jax.random.fold_in(k_play, i))
            fresh = view["done"] & jnp.isnan(result)
            result = jnp.where(fresh, view["reward"], result)
            return env, view, hidden * ~view["done"][:, None], result, i + 1, flags | _any_flags(view["flags"])

        hidden = jnp.zeros((games, self.config.hidden), jnp.float32)
        start = (env, view, hidden, jnp.full(games, jnp.nan, jnp.float32), jnp.int32(0), _any_flags(view["flags"]))
        _, _, _, result, _, flags = jax.lax.while_loop(playing, move, start)
        return result, seats, flags


def gae(values: jax.Array, rewards: jax.Array, dones: jax.Array, last_value: jax.Array, *, gamma: float,
        gae_lambda: float) -> tuple[jax.Array, jax.Array]:
    """Generalised advantage estimation (Schulman et al. 2016) over ``[T, B]`` arrays as a reverse scan:
    ``(advantages, returns = advantages + values)``; a step with ``done`` cuts the bootstrap."""

    def back(carry: tuple[jax.Array, jax.Array], x: tuple[jax.Array, ...]) -> tuple[tuple[jax.Array, jax.Array], jax.Array]:
        running, next_value = carry
        value, reward, done = x
        alive = 1.0 - done
        delta = reward + gamma * next_value * alive - value
        running = delta + gamma * gae_lambda * alive * running
        return (running, value), running

    _, adv = jax.lax.scan(back, (jnp.zeros_like(last_value), last_value), (values, rewards, dones), reverse=True)
    return adv, adv + values


def _any_flags(flags: jax.Array) -> jax.Array:
    return jax.lax.reduce(flags.reshape(-1), jnp.int32(0), jax.lax.bitwise_or, (0,))


def _refuse(flags: jax.Array) -> None:
    found = int(flags)
    if found:
        raise TwinContractError(breach_message(found))


def _evaluate_into(run: RunState, learner: TwinLearner, config: TrainConfig) -> None:
    params = {k: np.asarray(v) for k, v in run.params.items()}
    row = learner.evaluate(params, games=config.eval_games, seed=_seed(config.seed, 3, run.update))
    record(run, params, row, config, lambda games, seed: learner.evaluate(params, games=games, seed=seed))


def time_twin_update(twin: types.ModuleType, config: TrainConfig, *, repeats: int = 1) -> tuple[float, int]:
    """CPU seconds of one ``train_twin`` update at ``config`` (after an untimed one that compiles), and the
    environment steps (learner decisions) it trains on. CPU time of this process (all its threads: XLA's
    included), so the figure does not depend on the machine's load. Randomness: as ``train_twin`` with
    ``config.seed``."""
    learner = TwinLearner(twin, config)
    run = _fresh(learner.policy, config, learner.opt)
    carry = learner.start(jax.random.key(config.seed), run.params)
    params, opt_state, carry = learner.update(run.params, run.opt_state, carry, 0)
    jax.block_until_ready(params)
    start = time.process_time()
    for i in range(repeats):
        params, opt_state, carry = learner.update(params, opt_state, carry, i + 1)
    jax.block_until_ready(params)
    return (time.process_time() - start) / repeats, config.num_envs * config.rollout


__all__ = ["TwinContractError", "TwinLearner", "gae", "time_twin_update", "train_twin"]
