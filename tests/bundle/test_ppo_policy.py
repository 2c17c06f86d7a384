"""The numpy PPO policy: its files are checked as untrusted input, it plays only legal moves, the GRU
remembers the sequence and forgets it at reset, and ``ppo:DIR`` plays in the arena with its encoder contained."""

from __future__ import annotations

import json

import numpy as np
import pytest

from cwm import arena, games
from cwm.agents.base import RandomAgent
from cwm.agents.ppo import PPOAgent
from cwm.agents.specs import AgentSpecError, make_agent
from cwm.bundle.policy import PolicyConfig, PolicyError, forward, init_params, load_policy, save_policy_dir

TTT = PolicyConfig(obs_size=27, num_actions=9, hidden=32, game="tic_tac_toe")


def test_policy_files_round_trip(tmp_path, source):
    params = init_params(TTT, seed=4)
    save_policy_dir(tmp_path, params, TTT, encoder_source=source("tic_tac_toe_encoder.py"), extra={"seed": 4})
    loaded, config, extra = load_policy(tmp_path)
    assert config == TTT and extra == {"seed": 4}
    for name, value in params.items():
        np.testing.assert_array_equal(loaded[name], value)


def _rewrite(tmp_path, change) -> None:
    with np.load(tmp_path / "policy.npz") as data:
        arrays = {k: data[k] for k in data.files}
    change(arrays)
    np.savez(tmp_path / "policy.npz", **arrays)


@pytest.mark.parametrize("change, message", [
    (lambda a: a.pop("w2"), "do not match"),
    (lambda a: a.update(w1=np.zeros((3, 3), np.float32)), "'w1'"),
    (lambda a: a.update(b1=np.full(32, np.nan, np.float32)), "'b1'"),
    (lambda a: a.update(config=np.array("{not json")), "config"),
    (lambda a: a.update(config=np.array(json.dumps({"config": {"obs_size": 27}}))), "config"),
])
def test_bad_policy_files_are_refused_by_name(tmp_path, source, change, message):
    save_policy_dir(tmp_path, init_params(TTT, seed=0), TTT, encoder_source=source("tic_tac_toe_encoder.py"))
    _rewrite(tmp_path, change)
    with pytest.raises(PolicyError, match=message):
        load_policy(tmp_path)


def test_a_pickled_policy_is_refused(tmp_path):
    np.savez(tmp_path / "policy.npz", config=np.array([{"a": 1}], dtype=object))
    with pytest.raises(PolicyError, match="not a readable policy"):
        load_policy(tmp_path)


def test_the_gru_remembers_and_reset_forgets(encode):
    config = PolicyConfig(obs_size=22, num_actions=3, hidden=16, recurrent=True, game="leduc_poker")
    params = init_params(config, seed=1)
    obs = np.random.default_rng(0).random((2, 22)).astype(np.float32)
    h0 = np.zeros((1, 16), np.float32)
    _, _, h1 = forward(params, obs[:1], h0)
    logits_fresh, _, _ = forward(params, obs[1:], h0)
    logits_after, _, _ = forward(params, obs[1:], h1)
    assert not np.allclose(logits_fresh, logits_after)  # the same observation reads differently after another
    agent = PPOAgent(params, config, encode("leduc_poker"), "leduc_poker")
    agent.hidden = h1
    agent.reset()
    assert not agent.hidden.any()


def test_an_untrained_policy_plays_legal_moves_against_random(encode):
    agent = PPOAgent(init_params(TTT, seed=2), TTT, encode("tic_tac_toe"), "tic_tac_toe", greedy=False, seed=0)
    for seat in (0, 1):
        agents = [agent, RandomAgent(seed=seat)] if seat == 0 else [RandomAgent(seed=seat), agent]
        for i in range(10):
            result = arena.play_match(games.load_game("tic_tac_toe"), agents, seed=i)
            assert result.forfeit_seat is None, result


def test_the_ppo_spec_plays_with_a_contained_encoder(tmp_path, source):
    save_policy_dir(tmp_path, init_params(TTT, seed=3), TTT, encoder_source=source("tic_tac_toe_encoder.py"))
    agent = make_agent(f"ppo:{tmp_path}", "tic_tac_toe", seed=0)
    try:
        result = arena.play_match(games.load_game("tic_tac_toe"), [agent, RandomAgent(seed=1)], seed=0)
    finally:
        agent.close()
    assert result.forfeit_seat is None, result
    with pytest.raises(AgentSpecError, match="trained for tic_tac_toe"):
        make_agent(f"ppo:{tmp_path}", "connect_four")


def test_a_failing_contained_encoder_forfeits(tmp_path):
    broken = "def encode(observation, player_id):\n    return [0.0] * 27 if player_id else observation['nope']\n"
    save_policy_dir(tmp_path, init_params(TTT, seed=3), TTT, encoder_source=broken)
    agent = make_agent(f"ppo:{tmp_path}", "tic_tac_toe", seed=0)
    try:
        result = arena.play_match(games.load_game("tic_tac_toe"), [agent, RandomAgent(seed=1)], seed=0)
    finally:
        agent.close()
    assert result.forfeit_seat == 0 and "KeyError" in result.reason, result


def test_acting_and_the_library_never_import_jax():
    import subprocess
    import sys

    code = ("import sys, cwm, planners, cwm.agents.specs, cwm.agents.ppo, planners.puct, planners.env, "
            "cwm.checks.encoder, cwm.sandbox.training; print(sorted(m for m in sys.modules if m.split('.')[0] "
            "in ('jax', 'optax')))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.strip() == "[]"


def test_each_ppo_spec_builds_its_own_agent(tmp_path, source):
    save_policy_dir(tmp_path, init_params(TTT, seed=3), TTT, encoder_source=source("tic_tac_toe_encoder.py"))
    first, second = (make_agent(f"ppo:{tmp_path}", "tic_tac_toe", seed=0) for _ in range(2))
    assert first is not second  # an agent holds a match's state (its GRU, its encoder's worker)


def test_the_network_is_data_below_the_agents():
    """The network and its files live in cwm.bundle.policy, which (like the planners) imports no agent."""
    import subprocess
    import sys

    code = ("import sys, cwm.bundle.policy, planners, planners.puct; "
            "print(sorted(m for m in sys.modules if m.startswith('cwm.agents')))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.strip() == "[]"


@pytest.mark.parametrize("name, new", [("PolicyConfig", "PolicyConfig"), ("forward", "forward"),
                                       ("load_policy", "load_policy"), ("save_policy", "save_policy_dir"),
                                       ("ENCODER_FILE", "ENCODER_FILE"), ("PolicyError", "PolicyError")])
def test_the_network_s_former_names_still_import_with_a_warning(name, new):
    import cwm.agents.ppo
    import cwm.bundle.policy

    with pytest.warns(DeprecationWarning, match=f"cwm.bundle.policy.{new}"):
        old = getattr(cwm.agents.ppo, name)
    assert old is getattr(cwm.bundle.policy, new)
