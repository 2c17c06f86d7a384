"""The JAX trainer: the network JAX trains is the numpy one that acts, a resumed run ends with the weights
of one that never stopped, a short run learns, and a run of seeds leaves a policy directory the
``ppo:`` agent plays and a learning-curve plot."""

from __future__ import annotations

import dataclasses

import jax
import jax.numpy as jnp  # the test extra installs JAX; a plain `pip install cwm` does not
import numpy as np
import pytest

from cwm.bundle.policy import PolicyConfig, forward, init_params, load_policy
from cwm.ppo.learner import unroll
from cwm.ppo.seeds import EnvSource, train_seeds
from cwm.ppo.train import TrainConfig, train

SMALL = TrainConfig(total_steps=8 * 16 * 4, num_envs=8, rollout=16, epochs=2, minibatches=2, hidden=32,
                    eval_every=2, eval_games=20, checkpoint_every=2)


def test_jax_unroll_matches_numpy_step_by_step():
    config = PolicyConfig(obs_size=5, num_actions=4, hidden=8, recurrent=True)
    params = init_params(config, seed=0)
    rng = np.random.default_rng(1)
    obs = rng.random((6, 3, 5)).astype(np.float32)
    starts = np.zeros((6, 3), bool)
    starts[3, 1] = True
    logits, value = unroll({k: jnp.asarray(v) for k, v in params.items()}, jnp.asarray(obs), jnp.asarray(starts),
                           jnp.zeros((3, 8)))
    h = np.zeros((3, 8), np.float32)
    for t in range(6):
        h = h * ~starts[t][:, None]
        expect_logits, expect_value, h = forward(params, obs[t], h)
        np.testing.assert_allclose(np.asarray(logits[t]), expect_logits, atol=1e-5)
        np.testing.assert_allclose(np.asarray(value[t]), expect_value, atol=1e-5)


@pytest.mark.parametrize("recurrent", [False, True])
def test_a_resumed_run_ends_where_an_unbroken_one_does(tmp_path, model_envs, recurrent):
    game = "leduc_poker" if recurrent else "tic_tac_toe"
    config = dataclasses.replace(SMALL, recurrent=recurrent)
    whole = train(model_envs(game), config, out_dir=tmp_path / "whole", progress=False)
    train(model_envs(game), config, out_dir=tmp_path / "broken", progress=False, stop_after=2)
    resumed = train(model_envs(game), config, out_dir=tmp_path / "broken", progress=False)
    assert [r["steps"] for r in resumed.curve] == [r["steps"] for r in whole.curve] == [256, 512]
    assert resumed.best_score == whole.best_score
    for name in whole.params:
        np.testing.assert_array_equal(resumed.params[name], whole.params[name])


def test_a_short_run_learns_tic_tac_toe_against_random(tmp_path, model_envs):
    """40k env steps (about 20 s here): from an untrained policy's ~0 mean return to well above it."""
    config = TrainConfig(total_steps=40_960, num_envs=64, rollout=32, hidden=64, eval_every=5, eval_games=200,
                         checkpoint_every=100, seed=1)
    result = train(model_envs("tic_tac_toe"), config, out_dir=tmp_path, progress=False)
    first, best = result.curve[0]["mean_return"], result.best_score
    assert best > 0.5 and best >= first, result.curve


def test_seeds_train_in_the_sandbox_and_leave_a_policy_and_a_plot(tmp_path, source):
    games = EnvSource("tic_tac_toe", source("tic_tac_toe_encoder.py"), source("tic_tac_toe_model.py"))
    best = train_seeds(games, SMALL, [0, 1], out_dir=tmp_path, progress=False)
    params, config, record = load_policy(tmp_path / "policy")
    assert record["seed"] == best.seed and set(record["curves"]) == {"0", "1"}
    assert config.game == "tic_tac_toe" and config.obs_size == 27
    assert record["best_score"] == max(max(r["mean_return"] for r in c) for c in record["curves"].values())
    assert (tmp_path / "curve.png").stat().st_size > 1000
    assert (tmp_path / "seed-0" / "checkpoint.npz").exists()


def test_contained_training_equals_training_in_this_process(tmp_path, source):
    """The sandbox changes where the model runs, not what it computes: the same seed, the same weights."""
    results = []
    for contained in (True, False):
        games = EnvSource("tic_tac_toe", source("tic_tac_toe_encoder.py"), source("tic_tac_toe_model.py"),
                          contained=contained)
        with games.open() as envs:
            results.append(train(envs, SMALL, out_dir=tmp_path / str(contained), progress=False))
    for name in results[0].params:
        np.testing.assert_array_equal(results[0].params[name], results[1].params[name])


def test_losses_weigh_loss_weight_times_a_win_in_the_training_reward(model_envs):
    """The rewards PPO trains on: a tic-tac-toe loss is -loss_weight, a win 1, a draw 0."""
    from cwm.ppo.train import _Carry, _rollout

    config = dataclasses.replace(SMALL, num_envs=32, rollout=16, loss_weight=4.0)
    params = {k: jnp.asarray(v) for k, v in init_params(PolicyConfig(27, 9, 32), seed=0).items()}
    env = model_envs("tic_tac_toe").make(config.num_envs, 0)
    batch = _rollout(params, env, _Carry(env.reset(), config.num_envs, config.hidden), config, jax.random.key(0))
    rewards = batch["rewards"][batch["dones"]]
    assert set(np.unique(rewards)) == {-4.0, 0.0, 1.0}, np.unique(rewards)


def test_the_evaluation_scores_losses_by_loss_weight(model_envs):
    from cwm.ppo.train import evaluate

    params = init_params(PolicyConfig(obs_size=27, num_actions=9, hidden=8), seed=0)
    row = evaluate(params, model_envs("tic_tac_toe"), games=200, seed=0, loss_weight=3.0)
    assert row["loss_rate"] > 0.05
    assert row["score"] == pytest.approx(row["win_rate"] - 3.0 * row["loss_rate"])
    assert row["loss_rate"] == pytest.approx((row["loss_rate_seat0"] + row["loss_rate_seat1"]) / 2)


@pytest.mark.parametrize("change, message", [({"minibatches": 16}, "minibatches"), ({"rollout": 0}, "rollout"),
                                             ({"loss_weight": 0.0}, "loss_weight")])
def test_settings_out_of_range_are_refused(tmp_path, model_envs, change, message):
    with pytest.raises(ValueError, match=message):
        train(model_envs("tic_tac_toe"), dataclasses.replace(SMALL, **change), out_dir=tmp_path, progress=False)


def test_an_evaluation_that_never_ends_is_refused(model_envs):
    from cwm.ppo.train import evaluate

    params = init_params(PolicyConfig(obs_size=27, num_actions=9, hidden=8), seed=0)
    with pytest.raises(ValueError, match="did not end within 2 moves"):
        evaluate(params, model_envs("tic_tac_toe"), games=4, seed=0, max_steps=2)
