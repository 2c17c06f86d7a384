"""PPO entirely in JAX on a JAX twin (``cwm.ppo.jax_train``, ``cwm.ppo.jax_env``), on the hand-written
tic-tac-toe twin (tests/fixtures/jax_twins): GAE against a hand-computed case, the games' seats and rewards
against the real game, determinism and resuming bit for bit, evaluation against the ground truth's, and
twins that break the contract refused in one line."""

from __future__ import annotations

import dataclasses
import importlib.util
import types
from pathlib import Path

import jax
import jax.numpy as jnp
import numpy as np
import pytest

from cwm import games
from cwm.bundle.policy import init_params
from cwm.ppo.jax_env import TwinContractError, TwinEnv, twin_shape
from cwm.ppo.jax_train import TwinLearner, gae, train_twin
from cwm.ppo.train import TrainConfig, evaluate, ground_truth_envs

FIXTURE = Path(__file__).resolve().parents[1] / "fixtures" / "jax_twins" / "tic_tac_toe.py"
TINY = TrainConfig(total_steps=4 * 8 * 8, num_envs=8, rollout=8, epochs=2, minibatches=2, hidden=16,
                   eval_every=2, eval_games=20, checkpoint_every=2)


def load_twin(name: str = "ttt_twin") -> types.ModuleType:
    """A fresh copy of the fixture module (tests that break it patch their own copy)."""
    spec = importlib.util.spec_from_file_location(name, FIXTURE)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def planes(observation: dict, player: int) -> list[float]:
    """The real game's observation as the twin's tensor (planes empty / o / x over the cells)."""
    board = observation["board"]
    return [float(cell == mark) for mark in (".", "o", "x") for cell in board]


def test_gae_matches_a_hand_computed_case():
    """Two games of three steps, gamma 0.9, lambda 0.8: the first ends at the last step with +1 (no
    bootstrap), the second ends at the middle step with -1 and a new game starts (the cut stops the
    bootstrap and the trace there). Worked by hand:
      game 1: delta_2 = 1 + 0.1 = 1.1;  delta_1 = 0.9 * -0.1 - 0.2 = -0.29;  delta_0 = 0.9 * 0.2 - 0.5 = -0.32
              A_2 = 1.1;  A_1 = -0.29 + 0.72 * 1.1 = 0.502;  A_0 = -0.32 + 0.72 * 0.502 = 0.04144
      game 2: delta_2 = 0.9 * 0.3 + 0.1 = 0.37;  A_1 = -1 - 0.2 = -1.2;  A_0 = -0.32 + 0.72 * -1.2 = -1.184"""
    values = jnp.array([[0.5, 0.5], [0.2, 0.2], [-0.1, -0.1]])
    rewards = jnp.array([[0.0, 0.0], [0.0, -1.0], [1.0, 0.0]])
    dones = jnp.array([[0.0, 0.0], [0.0, 1.0], [1.0, 0.0]])
    adv, returns = gae(values, rewards, dones, jnp.array([0.3, 0.3]), gamma=0.9, gae_lambda=0.8)
    np.testing.assert_allclose(adv, [[0.04144, -1.184], [0.502, -1.2], [1.1, 0.37]], rtol=1e-5)
    np.testing.assert_allclose(returns, [[0.54144, -0.684], [0.702, -1.0], [1.0, 0.27]], rtol=1e-5)


def test_env_rotates_seats_and_pays_the_real_outcome():
    """Games stepped with the first legal action against the twin's random opponent: a game in seat 1 starts
    after x's one mark; every reward is checked on OpenSpiel's game replayed to the learner's decision: a
    game the learner's move ends pays its real return, one the opponent's reply ends pays the real return
    of one of its legal replies, any other step pays 0; the game after a finished one is in the other seat."""
    twin = load_twin()
    env = TwinEnv(twin, twin_shape(twin))
    state, view = jax.jit(env.reset, static_argnums=1)(jax.random.key(0), 4)
    step = jax.jit(env.step)
    assert view["seat"].tolist() == [0, 1, 0, 1]
    assert [int((b != 0).sum()) for b in np.asarray(state["state"]["board"])] == [0, 1, 0, 1]
    ended = 0
    for t in range(40):
        before, seats = np.asarray(state["state"]["board"]), np.asarray(view["seat"])
        action = jnp.argmax(view["mask"], axis=1).astype(jnp.int32)
        state, view = step(state, action, jax.random.key(100 + t))
        assert int(view["flags"].max()) == 0
        done, reward = np.asarray(view["done"]), np.asarray(view["reward"])
        for i in range(4):
            real = _replayed(before[i])
            real.apply_action(int(action[i]))
            if not done[i]:
                assert reward[i] == 0.0 and int(view["seat"][i]) == seats[i]
                continue
            ended += 1
            assert int(view["seat"][i]) == 1 - seats[i]
            possible = ({real.returns()[seats[i]]} if real.is_terminal() else
                        {real.child(b).returns()[seats[i]] for b in real.legal_actions() if real.child(b).is_terminal()})
            assert reward[i] in possible, (before[i], int(action[i]), reward[i], possible)
    assert ended >= 8


def _replayed(board: np.ndarray):
    """OpenSpiel's tic-tac-toe at ``board`` (no line on it yet): x's and o's marks played alternately."""
    real = games.load_game("tic_tac_toe").new_initial_state()
    xs, os_ = np.flatnonzero(board == 1).tolist(), np.flatnonzero(board == 2).tolist()
    for a, b in zip(xs, os_ + [None], strict=False):
        real.apply_action(a)
        if b is not None:
            real.apply_action(b)
    return real


def test_same_seed_same_weights_and_a_resumed_run_ends_the_same(tmp_path):
    """Four updates: twice with seed 0 (bit-identical weights and curve), once stopped after two updates and
    resumed from its checkpoint (bit-identical again), once with seed 1 (different weights)."""
    first = train_twin(load_twin(), TINY, out_dir=tmp_path / "a", progress=False)
    again = train_twin(load_twin(), TINY, out_dir=tmp_path / "b", progress=False)
    train_twin(load_twin(), TINY, out_dir=tmp_path / "c", progress=False, stop_after=2)
    resumed = train_twin(load_twin(), TINY, out_dir=tmp_path / "c", progress=False)
    other = train_twin(load_twin(), dataclasses.replace(TINY, seed=1), out_dir=tmp_path / "d", progress=False)
    assert [row["update"] for row in first.curve] == [2, 4]
    for run in (again, resumed):
        assert run.curve == first.curve
        for name, value in first.params.items():
            assert np.array_equal(value, run.params[name]), name
    assert not np.array_equal(first.params["w1"], other.params["w1"])
    assert first.policy.obs_size == 27 and first.policy.num_actions == 9


def test_evaluation_agrees_with_the_ground_truths():
    """One fixed (untrained) greedy policy against random, 1,000 games on the twin in JAX and 1,000 in
    OpenSpiel through cwm's numpy evaluation (independent draws): each seat's loss rate agrees within 4.5
    standard errors of the difference of two proportions."""
    learner = TwinLearner(load_twin(), dataclasses.replace(TINY, hidden=32))
    params = init_params(learner.policy, seed=3)
    twin_row = learner.evaluate(params, games=1000, seed=5)
    real_row = evaluate(params, ground_truth_envs("tic_tac_toe", planes), games=1000, seed=6)
    for seat in (0, 1):
        p, q = twin_row[f"loss_rate_seat{seat}"], real_row[f"loss_rate_seat{seat}"]
        pooled = (p + q) / 2
        se = np.sqrt(2 * pooled * (1 - pooled) / 500)
        assert abs(p - q) <= 4.5 * se + 1e-12, (seat, p, q)
    assert 0 < twin_row["loss_rate"] < 1 and twin_row["loss_rate_seat1"] > twin_row["loss_rate_seat0"]


def _broken(**patches) -> types.ModuleType:
    twin = load_twin("broken_twin")
    for name, value in patches.items():
        setattr(twin, name, value(twin) if callable(value) and name.islower() else value)
    return twin


@pytest.mark.parametrize("patches, words", [
    ({"legal_mask": lambda t: (lambda s: (s["board"] == 0)[:8])},
     "legal_mask() must return a bool array of shape [9], got bool[8]"),
    ({"observation_tensor": lambda t: (lambda s, p: jnp.zeros((3, 9)))},
     "observation_tensor() must return a float array of shape [3, 3, 3], got float32[3, 9]"),
    ({"NUM_PLAYERS": "2"}, "NUM_PLAYERS must be an int >= 1, got str"),
    ({"OBSERVATION_SHAPE": [3, 3, 3]}, "OBSERVATION_SHAPE must be a non-empty tuple"),
    ({"step": lambda t: (lambda s, a: s | {"board": s["board"].astype(jnp.float32)})},
     "step() returns a state of another structure, shape or dtype"),
    ({"rewards": lambda t: (lambda s: s["board"][0] / 0)}, "rewards() must return a float array of shape [2]"),
], ids=["mask-length", "obs-shape", "players-str", "obs-shape-list", "step-dtype", "rewards-scalar"])
def test_twin_of_the_wrong_shape_refused_in_one_line(patches, words):
    with pytest.raises(TwinContractError) as caught:
        TwinLearner(_broken(**patches), TINY)
    assert words in str(caught.value) and "\n" not in str(caught.value)


@pytest.mark.parametrize("patches, words", [
    ({"rewards": lambda t: (lambda s: jnp.where(s["done"], jnp.nan, 0.0) * jnp.ones(2, jnp.float32))},
     "a reward that is not finite"),
    ({"legal_mask": lambda t: (lambda s: (s["board"] == 0) & ~s["done"] & (jnp.sum(s["board"] != 0) < 4))},
     "a player to move with no legal action"),
    ({"current_player": lambda t: (lambda s: jnp.where(s["done"], -4, s["player"] + 5).astype(jnp.int32))},
     "a current player that is not a seat"),
    ({"current_player": lambda t: (lambda s: jnp.int32(-1))}, "a chance node in a twin with MAX_CHANCE_OUTCOMES = 0"),
], ids=["nan-reward", "empty-mask", "player-out-of-range", "chance-without-outcomes"])
def test_twin_that_breaks_the_contract_in_play_refused_in_one_line(tmp_path, patches, words):
    """Shapes are right, so the check by tracing passes; the breach shows in the first update's games."""
    with pytest.raises(TwinContractError) as caught:
        train_twin(_broken(**patches), TINY, out_dir=tmp_path, progress=False)
    assert words in str(caught.value) and "\n" not in str(caught.value)


def _coin_twin(probs: tuple[float, float]) -> types.ModuleType:
    """A one-player game: chance draws outcome 0 or 1 by ``probs``, then the player's one move pays +1 after
    outcome 1 and -1 after outcome 0."""
    twin = types.ModuleType("coin_twin")
    twin.NUM_PLAYERS, twin.NUM_DISTINCT_ACTIONS, twin.MAX_CHANCE_OUTCOMES, twin.OBSERVATION_SHAPE = 1, 2, 2, (2,)
    twin.init = lambda: {"stage": jnp.int32(0), "coin": jnp.int32(0), "paid": jnp.zeros(1, jnp.float32)}
    twin.current_player = lambda s: jnp.array([-1, 0, -4], jnp.int32)[s["stage"]]
    twin.legal_mask = lambda s: jnp.full(2, True) & (s["stage"] == 1)
    twin.chance_probs = lambda s: jnp.array(probs, jnp.float32) * (s["stage"] == 0)
    twin.step = lambda s, a: {"stage": s["stage"] + 1, "coin": jnp.where(s["stage"] == 0, a, s["coin"]),
                              "paid": jnp.where(s["stage"] == 1, 2.0 * s["coin"] - 1.0, 0.0)[None]}
    twin.rewards = lambda s: s["paid"]
    twin.observation_tensor = lambda s, p: jnp.zeros(2, jnp.float32)
    return twin


def test_chance_is_drawn_by_its_probabilities_and_a_bad_distribution_is_refused():
    """4,096 games of the coin twin at probabilities (0.2, 0.8): the mean reward is within 5 standard errors
    of 0.6; probabilities summing to 0.5 are a breach."""
    twin = _coin_twin((0.2, 0.8))
    env = TwinEnv(twin, twin_shape(twin))
    state, view = env.reset(jax.random.key(1), 4096)
    state, view = jax.jit(env.step)(state, jnp.zeros(4096, jnp.int32), jax.random.key(2))
    assert bool(view["done"].all()) and int(view["flags"].max()) == 0
    se = np.sqrt((1 - 0.6**2) / 4096)
    assert abs(float(view["reward"].mean()) - 0.6) < 5 * se
    bad = _coin_twin((0.2, 0.3))
    _, view = TwinEnv(bad, twin_shape(bad)).reset(jax.random.key(1), 8)
    assert int(view["flags"].max()) & 8


def test_self_play_opponents_move_by_the_learners_network(tmp_path):
    """With ``opponent="self"`` the others sample from the learner's network: weights whose policy head puts
    everything on cell 8 make x open there in every game where the learner is o (random would spread the
    openings over the nine cells); a short self-play run trains; cwm's Python trainer refuses self-play."""
    config = dataclasses.replace(TINY, opponent="self")
    learner = TwinLearner(load_twin(), config)
    params = {k: jnp.asarray(v) for k, v in init_params(learner.policy, seed=0).items()}
    params["b_pi"] = params["b_pi"].at[8].set(50.0)
    state, view = jax.jit(lambda k: learner._training_env(params).reset(k, 64))(jax.random.key(3))
    boards = np.asarray(state["state"]["board"])[np.asarray(view["seat"]) == 1]
    assert len(boards) == 32 and (boards[:, 8] == 1).all() and (boards.sum(axis=1) == 1).all()
    result = train_twin(load_twin(), config, out_dir=tmp_path / "self", progress=False)
    assert [row["update"] for row in result.curve] == [2, 4]
    with pytest.raises(ValueError, match=r"\(self-play\) needs a JAX twin"):
        from cwm.ppo.train import train

        train(None, config, out_dir=tmp_path / "py", progress=False)  # type: ignore[arg-type]
