"""A bundle carries a JAX twin (jax_twin.py) with its equivalence evidence (jax_twin_evidence.json): saved only
with evidence that vouches for it, re-verified at load (its fingerprints, its target, a bound at least
MIN_BOUND) and checked against the model along the stored games; refused with a one-line error otherwise;
`cwm inspect` shows it."""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

import pytest

from cwm import bundle
from cwm.bundle.twin import JAX_TWIN_EVIDENCE, JAX_TWIN_FILE, save_twin
from cwm.commands.bundle import describe
from cwm.games import action_codec, resolve
from cwm.sandbox import Limits
from cwm.sandbox.equivalence import EquivalenceSettings
from cwm.sandbox.jax_equivalence import check_jax_equivalence

TWIN = (Path(__file__).resolve().parents[1] / "fixtures" / "jax_twins" / "ttt_reference.py").read_text()
SETTINGS = EquivalenceSettings(p=0.2, delta=0.05, simulations=10,
                               limits=Limits(wall_s=120.0, cpu_s=60.0, memory_mb=2048, per_call_s=5.0))


@pytest.fixture(scope="module")
def evidence(ttt_source: str) -> dict:
    return check_jax_equivalence(ttt_source, TWIN, codec=action_codec(resolve("tic_tac_toe")), settings=SETTINGS)


@pytest.fixture()
def with_twin(exported: Path, evidence: dict) -> Path:
    return save_twin(exported, TWIN, evidence, provenance={"answered_by": "hand-written for a test"}, target="jax")


def test_a_jax_twin_with_its_evidence_loads_and_is_shown(with_twin: Path, evidence: dict) -> None:
    assert evidence["verdict"] == "equivalent", evidence["reason"]
    manifest = json.loads((with_twin / "manifest.json").read_text())
    assert {JAX_TWIN_FILE, JAX_TWIN_EVIDENCE} <= set(manifest["files"])
    assert manifest["provenance"]["jax_twin"]["twin_sha256"] == evidence["twin_sha256"]
    loaded = bundle.load_bundle(with_twin)
    assert loaded.jax_twin == TWIN and loaded.jax_twin_evidence == evidence
    assert JAX_TWIN_FILE not in loaded.sources  # never loaded as a Python module
    text = describe(loaded)
    assert "jax_twin.py: " in text and f"jax twin evidence: equivalent: {evidence['reason']}" in text
    assert "jax twin observation tensors: not compared" in text


def test_a_jax_twin_edited_after_its_evidence_is_refused(with_twin: Path, rehashed) -> None:
    rehashed(with_twin, JAX_TWIN_FILE, (TWIN + "\n# edited\n").encode())
    with pytest.raises(bundle.BundleError) as e:
        bundle.load_bundle(with_twin)
    assert str(e.value).startswith(f"{with_twin}: jax_twin.py is refused: the evidence's twin_sha256 does not match")
    assert "\n" not in str(e.value)


def test_python_twin_evidence_does_not_vouch_for_a_jax_twin(with_twin: Path, rehashed, evidence: dict) -> None:
    forged = {k: v for k, v in evidence.items() if k != "target"}
    rehashed(with_twin, JAX_TWIN_EVIDENCE, json.dumps(forged).encode())
    with pytest.raises(bundle.BundleError, match="about a 'python' twin, not a jax twin"):
        bundle.load_bundle(with_twin)


def test_evidence_weaker_than_the_minimum_bound_is_refused(with_twin: Path, rehashed, evidence: dict) -> None:
    forged = dict(evidence, bound=dict(evidence["bound"], p=0.5, delta=0.5, playouts_per_kind=5))
    rehashed(with_twin, JAX_TWIN_EVIDENCE, json.dumps(forged).encode())
    with pytest.raises(bundle.BundleError, match="weaker than p <= 0.2, delta <= 0.05"):
        bundle.load_bundle(with_twin)


def test_self_certified_evidence_for_a_wrong_jax_twin_is_refused_by_the_stored_games(with_twin: Path, rehashed,
                                                                                     evidence: dict) -> None:
    wrong = TWIN.replace("jnp.array([1.0, -1.0])", "jnp.array([-1.0, 1.0])", 1)  # a win for x scored as a loss
    assert wrong != TWIN
    rehashed(with_twin, JAX_TWIN_FILE, wrong.encode())
    forged = dict(evidence, twin_sha256=hashlib.sha256(wrong.encode()).hexdigest())
    rehashed(with_twin, JAX_TWIN_EVIDENCE, json.dumps(forged).encode())
    with pytest.raises(bundle.BundleError) as e:
        bundle.load_bundle(with_twin)
    assert "jax_twin.py fails the stored games: stored game" in str(e.value) and "rewards(state)" in str(e.value)
    assert "\n" not in str(e.value)


def test_a_jax_twin_without_evidence_is_refused(with_twin: Path) -> None:
    manifest = json.loads((with_twin / "manifest.json").read_text())
    del manifest["files"][JAX_TWIN_EVIDENCE]
    (with_twin / JAX_TWIN_EVIDENCE).unlink()
    (with_twin / "manifest.json").write_text(json.dumps(manifest))
    with pytest.raises(bundle.BundleError, match="jax_twin.py is in the bundle without jax_twin_evidence.json"):
        bundle.load_bundle(with_twin)


def test_a_contained_agent_values_leaves_by_the_jax_twin_s_batched_rollouts(with_twin: Path) -> None:
    import pyspiel

    from cwm.agents import bundle_agent
    from cwm.agents.worker import WorkerAgent
    from cwm.types import AgentError
    from planners import SearchConfig

    loaded = bundle.load_bundle(with_twin)
    game = pyspiel.load_game("tic_tac_toe")
    state = game.new_initial_state()
    for action in (0, 3, 1, 4):  # x(0,0) o(1,0) x(0,1) o(1,1): x wins at (0,2), or o wins at (1,2) next
        state.apply_action(action)
    unasked = bundle_agent(loaded, SearchConfig(num_simulations=20, rollouts=2), seed=0)
    assert isinstance(unasked, WorkerAgent) and not unasked.jax_rollouts  # opt-in: slower than rollouts on a CPU
    unasked.close()
    agent = bundle_agent(loaded, SearchConfig(num_simulations=200, rollouts=8), seed=0, jax_rollouts=True)
    assert isinstance(agent, WorkerAgent) and agent.jax_rollouts and agent.planned_on == "model.py"
    try:
        assert agent.step(state) == 2
    finally:
        agent.close()
    # the worker really loads the JAX twin: one whose constants disagree with the game cannot start it
    broken = {**loaded.sources, "jax_twin.py": TWIN.replace("NUM_DISTINCT_ACTIONS = 9", "NUM_DISTINCT_ACTIONS = 8")}
    agent = WorkerAgent(broken, "tic_tac_toe", SearchConfig(num_simulations=20, rollouts=2), seed=0)
    try:
        with pytest.raises(AgentError, match="NUM_DISTINCT_ACTIONS is 8"):
            agent.step(state)
    finally:
        agent.close()
    # use_twin=False: the model's own rollouts, the JAX twin unused
    plain = WorkerAgent(broken, "tic_tac_toe", SearchConfig(num_simulations=20, rollouts=2), seed=0, use_twin=False)
    try:
        assert not plain.jax_rollouts and plain.step(state) in state.legal_actions()
    finally:
        plain.close()
