"""A bundle's PPO policy: saved with its encoder and covered by the manifest's hashes, read back as untrusted
input (every array checked, one-line errors naming the file and array), and played by ``ppo:BUNDLE``."""

from __future__ import annotations

import io
import json
from pathlib import Path

import numpy as np
import pytest

from cwm import bundle, games
from cwm.agents.ppo import PPOAgent
from cwm.agents.specs import Settings, make_agent
from cwm.bundle.policy import PolicyConfig, init_params, policy_bytes, save_policy
from cwm.contract import ENCODER_API
from cwm.sandbox import load_source
from planners.config import SearchConfig

DATA = Path(__file__).resolve().parents[1] / "data"
ENCODER = (DATA / "reference" / "tic_tac_toe_encoder.py").read_text(encoding="utf-8")
TTT = PolicyConfig(obs_size=27, num_actions=9, hidden=16, game="tic_tac_toe")


@pytest.fixture()
def with_policy(exported: Path) -> Path:
    save_policy(exported, init_params(TTT, seed=3), TTT, encoder_source=ENCODER, record={"seed": 3},
                provenance={"seeds": [3], "best_seed": 3})
    return exported


def test_a_saved_policy_loads_back_with_its_encoder_and_is_hashed(with_policy):
    loaded = bundle.load_bundle(with_policy)
    assert loaded.policy is not None
    assert loaded.policy.config == TTT and loaded.policy.record == {"seed": 3}
    assert loaded.policy.encoder_source == ENCODER
    for name, value in init_params(TTT, seed=3).items():
        np.testing.assert_array_equal(loaded.policy.params[name], value)
    manifest = json.loads((with_policy / "manifest.json").read_text())
    assert {"policy.npz", "encoder.py"} <= set(manifest["files"])
    assert manifest["provenance"]["ppo"] == {"seeds": [3], "best_seed": 3}
    assert manifest["provenance"]["llm"] == "hand-written fixture"  # the rest of the provenance stays


def test_a_bundle_without_a_policy_has_none(exported):
    assert bundle.load_bundle(exported).policy is None


def test_editing_the_weights_is_detected_by_the_hash(with_policy):
    other = policy_bytes(init_params(TTT, seed=4), TTT)
    (with_policy / "policy.npz").write_bytes(other)
    with pytest.raises(bundle.BundleError, match="policy.npz does not match its hash"):
        bundle.load_bundle(with_policy)


def _arrays(path: Path) -> dict[str, np.ndarray]:
    with np.load(io.BytesIO((path / "policy.npz").read_bytes())) as data:
        return {k: data[k] for k in data.files}


def _npz(arrays: dict[str, np.ndarray]) -> bytes:
    buffer = io.BytesIO()
    np.savez(buffer, **arrays)
    return buffer.getvalue()


@pytest.mark.parametrize("change, message", [
    (lambda a: a.update(w_pi=np.full((16, 9), np.inf, np.float32)), "policy.npz: array 'w_pi'"),
    (lambda a: a.update(b2=np.zeros(5, np.float32)), "policy.npz: array 'b2'"),
    (lambda a: a.update(w1=np.zeros((27, 16), np.int64)), "policy.npz: array 'w1'"),
    (lambda a: a.pop("w_v"), "policy.npz: arrays .* do not match"),
    (lambda a: a.update(config=np.array(json.dumps({"config": {"obs_size": "27", "num_actions": 9}}))),
     "config field 'obs_size'"),
    (lambda a: a.update(config=np.array(json.dumps({"config": {"obs_size": 27, "num_actions": 9, "hidden": 16,
                                                                "game": "connect_four"}}))),
     "trained for 'connect_four'"),
], ids=["infinite", "shape", "integers", "missing", "config-type", "other-game"])
def test_a_forged_policy_is_refused_in_one_line_naming_it(with_policy, rehashed, change, message):
    arrays = _arrays(with_policy)
    change(arrays)
    rehashed(with_policy, "policy.npz", _npz(arrays))
    with pytest.raises(bundle.BundleError, match=message) as caught:
        bundle.load_bundle(with_policy)
    assert "\n" not in str(caught.value) and str(with_policy) in str(caught.value)


def test_a_pickle_in_the_policy_is_never_loaded(with_policy, rehashed):
    rehashed(with_policy, "policy.npz", _npz({"config": np.array([{"x": 1}], dtype=object)}))
    with pytest.raises(bundle.BundleError, match="policy.npz: not a readable policy file"):
        bundle.load_bundle(with_policy)


def test_a_policy_of_another_action_count_is_refused(with_policy, rehashed):
    wide = PolicyConfig(obs_size=27, num_actions=7, hidden=16, game="tic_tac_toe")
    rehashed(with_policy, "policy.npz", policy_bytes(init_params(wide, seed=0), wide))
    with pytest.raises(bundle.BundleError, match="has 7 actions; tic_tac_toe has 9"):
        bundle.load_bundle(with_policy)


def test_a_policy_without_its_encoder_is_refused(with_policy, set_manifest):
    files = json.loads((with_policy / "manifest.json").read_text())["files"]
    del files["encoder.py"]
    set_manifest(with_policy, files=files)
    (with_policy / "encoder.py").unlink()
    with pytest.raises(bundle.BundleError, match="lists policy.npz but no encoder.py"):
        bundle.load_bundle(with_policy)


def test_a_policy_for_another_game_is_not_saved(exported):
    c4 = PolicyConfig(obs_size=126, num_actions=7, hidden=8, game="connect_four")
    with pytest.raises(bundle.BundleError, match="trained for connect_four"):
        save_policy(exported, init_params(c4, seed=0), c4, encoder_source=ENCODER, record={}, provenance={})
    assert not (exported / "policy.npz").exists()


def _states(count: int) -> list:
    game, rng, found = games.load_game("tic_tac_toe"), np.random.default_rng(0), []
    while len(found) < count:
        state = game.new_initial_state()
        while not state.is_terminal():
            found.append(state.clone())
            state.apply_action(int(rng.choice(state.legal_actions())))
    return found[:count]


def test_ppo_bundle_plays_the_bundles_policy_with_its_encoder_contained(with_policy):
    agent = make_agent(f"ppo:{with_policy}", "tic_tac_toe")
    encode = load_source(ENCODER, name="ttt_encoder", api=ENCODER_API).encode
    direct = PPOAgent(init_params(TTT, seed=3), TTT, encode, "tic_tac_toe")
    try:
        moves = [agent.step(s) for s in _states(12)]
    finally:
        agent.close()
    assert moves == [direct.step(s) for s in _states(12)]
    assert all(m in s.legal_actions() for m, s in zip(moves, _states(12)))


def test_ppo_bundle_without_a_policy_says_how_to_train_one(exported):
    with pytest.raises(bundle.BundleError, match="holds no PPO policy .*cwm train ppo"):
        make_agent(f"ppo:{exported}", "tic_tac_toe")


def test_the_cwm_agent_still_plans_on_a_bundle_with_a_policy(with_policy):
    agent = make_agent(f"cwm:{with_policy}", "tic_tac_toe", settings=Settings(search=SearchConfig(num_simulations=20)))
    state = games.load_game("tic_tac_toe").new_initial_state()
    try:
        assert agent.step(state) in state.legal_actions()
    finally:
        getattr(agent, "close", lambda: None)()


def test_a_policy_naming_a_module_game_is_refused_without_importing_it(tmp_path):
    from cwm.agents.specs import AgentSpecError
    from cwm.bundle.policy import save_policy_dir

    marker = tmp_path / "imported"
    evil = tmp_path / "evil.py"
    evil.write_text(f"open({str(marker)!r}, 'w').close()\n", encoding="utf-8")
    config = PolicyConfig(obs_size=27, num_actions=9, hidden=8, game=f"{evil}:evil")
    save_policy_dir(tmp_path / "policy", init_params(config, seed=0), config, encoder_source=ENCODER)
    with pytest.raises(AgentSpecError, match="trained for"):
        make_agent(f"ppo:{tmp_path / 'policy'}", "tic_tac_toe")
    assert not marker.exists()  # the file's game string named a module: it was compared, never imported
