"""PPO trained inside the world model beats random in the real game, each within the
number of environment steps (learner decisions) its config states. Marked ``long`` (4-30 minutes each, with the
machine's load): not run by default or in CI; ``python -m pytest tests/ppo -m long``.

Trained in the hand-written tic-tac-toe and Leduc models and in the oracle CWM of connect four, with the
hand-written encoders; played in the real OpenSpiel game against ``RandomAgent``, in both seats.
"""

from __future__ import annotations

import numpy as np
import pytest

from cwm import arena, games
from cwm.agents.base import RandomAgent
from cwm.agents.ppo import PPOAgent
from cwm.ppo.train import TrainConfig, train  # JAX: the test extra installs it


def _real_returns(result, encode, game: str, games_per_seat: int) -> dict[int, np.ndarray]:
    """The trained policy's returns against random in the real game, per seat."""
    agent = PPOAgent(result.params, result.policy, encode(game), game)
    real = games.load_game(game)
    out = {}
    for seat in (0, 1):
        returns = []
        for i in range(games_per_seat):
            agents = [agent, RandomAgent(seed=i)] if seat == 0 else [RandomAgent(seed=i), agent]
            outcome = arena.play_match(real, agents, seed=10_000 * seat + i)
            assert outcome.forfeit_seat is None, outcome
            returns.append(outcome.returns[seat])
        out[seat] = np.asarray(returns)
    return out


@pytest.mark.long
@pytest.mark.timeout(3600)
def test_tic_tac_toe_against_random(tmp_path, model_envs, encode):
    """2M env steps (4 to 20 minutes here, with the load), a loss weighing 4 wins in the reward and the
    choice of the best policy (against random the payoff-best second player loses 0.74% of its games:
    benchmarks/best_reply.py), entropy bonus 0.2, the best of evaluations over 1,000 games in the model.
    The issue's bar: no losses in 200 games in either seat (the recorded run's policy never loses against
    random: its exact loss rate is 0 in both seats)."""
    config = TrainConfig(total_steps=2_048_000, num_envs=128, rollout=32, ent_coef=0.2, loss_weight=4.0,
                         eval_every=10, eval_games=1000, seed=0)
    result = train(model_envs("tic_tac_toe"), config, out_dir=tmp_path, progress=False)
    for seat, returns in _real_returns(result, encode, "tic_tac_toe", 200).items():
        assert (returns < 0).sum() == 0, (seat, int((returns < 0).sum()), result.curve[-3:])


@pytest.mark.long
@pytest.mark.timeout(3600)
def test_leduc_positive_payoff_against_random(tmp_path, model_envs, encode):
    """300k env steps with the GRU; the bar: the mean payoff's 95% interval above 0 over 500 games per seat."""
    config = TrainConfig(total_steps=300_000, num_envs=64, rollout=32, recurrent=True, eval_every=10, seed=0)
    result = train(model_envs("leduc_poker"), config, out_dir=tmp_path, progress=False)
    returns = np.concatenate(list(_real_returns(result, encode, "leduc_poker", 500).values()))
    half = 1.96 * returns.std(ddof=1) / np.sqrt(len(returns))
    assert returns.mean() - half > 0, (returns.mean(), half, result.curve[-3:])


@pytest.mark.long
@pytest.mark.timeout(3600)
def test_connect_four_wins_nine_in_ten_against_random(tmp_path, model_envs, encode):
    """300k env steps in the oracle CWM; the bar: >= 90% wins in each seat over 100 games per seat."""
    config = TrainConfig(total_steps=300_000, num_envs=64, rollout=32, eval_every=10, seed=0)
    result = train(model_envs("connect_four"), config, out_dir=tmp_path, progress=False)
    for seat, returns in _real_returns(result, encode, "connect_four", 100).items():
        assert (returns > 0).mean() >= 0.9, (seat, (returns > 0).mean(), result.curve[-3:])


@pytest.mark.long
@pytest.mark.timeout(3600)
def test_tic_tac_toe_in_jax_on_the_twin_against_random(tmp_path):
    """PPO entirely in JAX on the hand-written tic-tac-toe twin (tests/fixtures/jax_twins), the tic-tac-toe
    test's settings; the policy, which reads the twin's observation tensor, plays the real game through an
    encoder giving the same planes. The same bar: no losses in 200 games in either seat."""
    import importlib.util
    from pathlib import Path

    from cwm.ppo.jax_train import train_twin

    spec = importlib.util.spec_from_file_location(
        "ttt_twin", Path(__file__).resolve().parents[1] / "fixtures" / "jax_twins" / "tic_tac_toe.py")
    twin = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(twin)
    config = TrainConfig(total_steps=2_048_000, num_envs=128, rollout=32, ent_coef=0.2, loss_weight=4.0,
                         eval_every=10, eval_games=1000, seed=0)
    result = train_twin(twin, config, out_dir=tmp_path, game="tic_tac_toe", progress=False)

    def planes(observation, player):
        return [float(cell == mark) for mark in (".", "o", "x") for cell in observation["board"]]

    for seat, returns in _real_returns(result, lambda game: planes, "tic_tac_toe", 200).items():
        assert (returns < 0).sum() == 0, (seat, int((returns < 0).sum()), result.curve[-3:])
