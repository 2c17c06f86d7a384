"""PPO's batched games: seats alternate, the opponent and chance move between the learner's turns, the
returns are the game's; a world model's games equal the ground truth's step for step, in this process and
in the sandboxed training worker."""

from __future__ import annotations

import numpy as np
import pytest

from cwm.sandbox.training import ContainedEnvs, TrainingRefused
from planners.env import EnvError


def _play(env, steps: int, seed: int = 0) -> list:
    rng = np.random.default_rng(seed)
    out = [env.reset()]
    for _ in range(steps):
        out.append(env.step([rng.choice(np.flatnonzero(m)) for m in out[-1].mask]))
    return out


def _same(a, b) -> None:
    for x, y in zip(a, b, strict=True):
        for field in ("obs", "mask", "reward", "done", "seat"):
            np.testing.assert_array_equal(getattr(x, field), getattr(y, field), err_msg=field)


@pytest.mark.parametrize("game", ["tic_tac_toe", "leduc_poker", "connect_four"])
def test_model_games_equal_the_ground_truth(game, model_envs, real_envs):
    steps = 25
    _same(_play(model_envs(game).make(16, seed=5), steps), _play(real_envs(game).make(16, seed=5), steps))


def test_seats_alternate_and_returns_are_the_learners(model_envs):
    env = model_envs("tic_tac_toe").make(8, seed=1)
    steps = _play(env, 60)
    assert list(steps[0].seat) == [0, 1] * 4
    first = steps[0].obs.reshape(8, 9, 3)
    assert (first[0::2, :, 0] == 1).all()  # seat 0 moves first: an empty board
    assert (first[1::2, :, 2].sum(axis=1) == 1).all()  # seat 1 sees the opponent's first mark
    rewards = np.concatenate([s.reward[s.done] for s in steps[1:]])
    assert set(rewards) <= {-1.0, 0.0, 1.0} and len(rewards) > 20
    for before, after in zip(steps, steps[1:]):
        flipped = after.seat != before.seat
        np.testing.assert_array_equal(flipped, after.done)  # a new game, the other seat


def test_an_illegal_learner_action_is_refused(model_envs):
    env = model_envs("tic_tac_toe").make(2, seed=0)
    step = env.reset()
    taken = int(np.flatnonzero(~step.mask[1])[0])  # seat 1's board already has a mark
    with pytest.raises(EnvError, match="game 1"):
        env.step([int(np.flatnonzero(step.mask[0])[0]), taken])


def test_contained_games_equal_local_ones(source, model_envs):
    with ContainedEnvs(source("tic_tac_toe_model.py"), source("tic_tac_toe_encoder.py"), "tic_tac_toe") as envs:
        _same(_play(envs.make(8, seed=2), 30), _play(model_envs("tic_tac_toe").make(8, seed=2), 30))


def _continue(env, step, steps: int, rng) -> list:
    out = []
    for _ in range(steps):
        step = env.step([rng.choice(np.flatnonzero(m)) for m in step.mask])
        out.append(step)
    return out


def test_the_training_batch_outlives_many_evaluation_batches(source, model_envs):
    # train() steps one batch for a whole checkpoint chunk and makes a fresh batch per evaluation (five per
    # chunk at the defaults): the worker, which keeps only a few, must drop evaluations' batches, not training's
    rng = np.random.default_rng(0)
    with ContainedEnvs(source("tic_tac_toe_model.py"), source("tic_tac_toe_encoder.py"), "tic_tac_toe") as envs:
        training = envs.make(8, seed=2)
        seen = [training.reset()]
        for seed in range(6):
            _play(envs.make(4, seed=10 + seed), 2)
            seen += _continue(training, seen[-1], 3, rng)
    local = model_envs("tic_tac_toe").make(8, seed=2)
    first = local.reset()
    _same(seen, [first, *_continue(local, first, 18, np.random.default_rng(0))])


def test_a_broken_encoder_stops_training_with_its_reason(source):
    short = "def encode(observation, player_id):\n    return [1.0] * (1 + observation['board'].count('x'))\n"
    with ContainedEnvs(source("tic_tac_toe_model.py"), short, "tic_tac_toe") as envs:
        env = envs.make(4, seed=0)
        with pytest.raises(TrainingRefused, match="encoder returned"):
            _play(env, 3)


def test_a_gated_model_does_not_start(source):
    with pytest.raises(TrainingRefused, match="static"):
        ContainedEnvs("import os\n" + source("tic_tac_toe_model.py"), source("tic_tac_toe_encoder.py"), "tic_tac_toe")


def test_a_worker_answer_of_the_wrong_shape_is_refused(source):
    with ContainedEnvs(source("tic_tac_toe_model.py"), source("tic_tac_toe_encoder.py"), "tic_tac_toe") as envs:
        env = envs.make(4, seed=0)
        good = env.reset().to_json()
        for field, bad in [("mask", [[1] * 9] * 3), ("obs", [[float("nan")] * 27] * 4), ("mask", [[0] * 9] * 4),
                           ("reward", "x")]:
            with pytest.raises(TrainingRefused, match="training worker"):
                env._checked(dict(good, **{field: bad}))
