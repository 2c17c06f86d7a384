"""PPO's learning step in JAX and optax: sampling actions, the clipped surrogate loss, one optimiser update.

The network is ``cwm.bundle.policy.forward`` run with ``jax.numpy``, so the trained weights act unchanged in
numpy. A recurrent policy is trained on whole rollout segments (one per environment), its GRU state
carried from the segment's start and reset at each new game (Schulman et al. 2017, PPO; the recurrent
variant as in the usual LSTM-PPO implementations). Imported only by the trainer: JAX stays optional.
"""

from __future__ import annotations

import dataclasses
import functools
from typing import Any

import jax
import jax.numpy as jnp
import optax

from cwm.bundle.policy import forward, masked_logits


@dataclasses.dataclass(frozen=True)
class LossConfig:
    """The PPO loss's coefficients (the usual defaults of Schulman et al. 2017 and later implementations).

    Attributes:
      clip: the ratio clip epsilon.
      vf_coef: the value loss's weight.
      ent_coef: the entropy bonus's weight.
    """

    clip: float = 0.2
    vf_coef: float = 0.5
    ent_coef: float = 0.01


def optimiser(lr: float, max_grad_norm: float, *, anneal_steps: int = 0) -> optax.GradientTransformation:
    """Adam with global gradient-norm clipping (PPO's usual optimiser); with ``anneal_steps`` the step size
    falls linearly to 0 over that many gradient steps."""
    rate = optax.linear_schedule(lr, 0.0, anneal_steps) if anneal_steps else lr
    return optax.chain(optax.clip_by_global_norm(max_grad_norm), optax.adam(rate, eps=1e-5))


@jax.jit
def act(params: dict[str, jax.Array], obs: jax.Array, mask: jax.Array, hidden: jax.Array,
        key: jax.Array) -> tuple[jax.Array, jax.Array, jax.Array, jax.Array]:
    """Samples one legal action per row: ``(action, log-probability, value, next hidden)``."""
    logits, value, hidden = forward(params, obs, hidden, jnp)
    logits = masked_logits(logits, mask, jnp)
    action = jax.random.categorical(key, logits)
    logp = jax.nn.log_softmax(logits)[jnp.arange(action.shape[0]), action]
    return action, logp, value, hidden


def unroll(params: dict[str, jax.Array], obs: jax.Array, starts: jax.Array,
           hidden: jax.Array) -> tuple[jax.Array, jax.Array]:
    """The logits ``[T, B, A]`` and values ``[T, B]`` along segments ``obs [T, B, D]`` from ``hidden``; the GRU
    state is zeroed where ``starts`` marks a new game."""
    if "gru_x" not in params:
        t, b = obs.shape[:2]
        logits, value, _ = forward(params, obs.reshape(t * b, -1), hidden[:0], jnp)
        return logits.reshape(t, b, -1), value.reshape(t, b)

    def cell(h: jax.Array, inputs: tuple[jax.Array, jax.Array]) -> tuple[jax.Array, tuple[jax.Array, jax.Array]]:
        x, start = inputs
        h = jnp.where(start[:, None], 0.0, h)
        logits, value, h = forward(params, x, h, jnp)
        return h, (logits, value)

    _, (logits, value) = jax.lax.scan(cell, hidden, (obs, starts))
    return logits, value


def loss(params: dict[str, jax.Array], batch: dict[str, jax.Array], cfg: LossConfig) -> tuple[jax.Array, dict[str, jax.Array]]:
    """The clipped PPO objective on one minibatch of segments (negated, to minimise), and its parts."""
    logits, value = unroll(params, batch["obs"], batch["starts"], batch["hidden"])
    logits = masked_logits(logits, batch["mask"], jnp)
    logp_all = jax.nn.log_softmax(logits)
    logp = jnp.take_along_axis(logp_all, batch["actions"][..., None], axis=-1)[..., 0]
    ratio = jnp.exp(logp - batch["logp"])
    adv = batch["adv"]
    adv = (adv - adv.mean()) / (adv.std() + 1e-8)
    policy = -jnp.minimum(ratio * adv, jnp.clip(ratio, 1 - cfg.clip, 1 + cfg.clip) * adv).mean()
    value_loss = 0.5 * ((value - batch["returns"]) ** 2).mean()
    probs = jnp.exp(logp_all)
    entropy = -jnp.sum(jnp.where(batch["mask"], probs * logp_all, 0.0), axis=-1).mean()
    total = policy + cfg.vf_coef * value_loss - cfg.ent_coef * entropy
    return total, {"policy": policy, "value": value_loss, "entropy": entropy}


@functools.partial(jax.jit, static_argnames=("opt", "cfg"))
def update(params: dict[str, jax.Array], opt_state: Any, batch: dict[str, jax.Array], *,
           opt: optax.GradientTransformation, cfg: LossConfig) -> tuple[dict[str, jax.Array], Any, dict[str, jax.Array]]:
    """One gradient step on one minibatch."""
    (_, parts), grads = jax.value_and_grad(loss, has_aux=True)(params, batch, cfg)
    updates, opt_state = opt.update(grads, opt_state, params)
    return optax.apply_updates(params, updates), opt_state, parts
