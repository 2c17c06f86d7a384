"""A bundle carries a twin with its equivalence evidence (cwm.bundle.twin): saved only with evidence that vouches
for it, re-verified at load against the exact bytes of model.py and twin.py, refused with a one-line error
otherwise; planning workers plan on it (unless told not to), and `cwm inspect` shows the evidence."""

from __future__ import annotations

import json
from pathlib import Path

import pyspiel
import pytest

from cwm import bundle
from cwm.agents import bundle_agent
from cwm.agents.worker import WorkerAgent
from cwm.bundle.twin import TWIN_EVIDENCE, TWIN_FILE, save_twin
from cwm.commands.bundle import describe
from cwm.sandbox import Limits
from cwm.sandbox.equivalence import EquivalenceSettings, check_equivalence
from planners import SearchConfig

DATA = Path(__file__).resolve().parents[1] / "data"
TWIN = (DATA / "twins" / "ttt_fast.py").read_text(encoding="utf-8")
SETTINGS = EquivalenceSettings(p=0.2, delta=0.05, simulations=20,
                               limits=Limits(wall_s=60.0, cpu_s=60.0, memory_mb=1024, per_call_s=1.0))


@pytest.fixture(scope="module")
def evidence(ttt_source: str) -> dict:
    return check_equivalence(ttt_source, TWIN, settings=SETTINGS)


@pytest.fixture()
def with_twin(exported: Path, evidence: dict) -> Path:
    return save_twin(exported, TWIN, evidence, provenance={"answered_by": "hand-written for a test"})


def test_a_twin_with_its_evidence_loads_and_is_shown(with_twin: Path, evidence: dict) -> None:
    assert evidence["verdict"] == "equivalent", evidence["reason"]
    manifest = json.loads((with_twin / "manifest.json").read_text())
    assert {TWIN_FILE, TWIN_EVIDENCE} <= set(manifest["files"])
    assert manifest["provenance"]["twin"]["twin_sha256"] == evidence["twin_sha256"]
    assert manifest["provenance"]["twin"]["answered_by"] == "hand-written for a test"
    loaded = bundle.load_bundle(with_twin)
    assert loaded.twin_evidence == evidence and loaded.sources[TWIN_FILE] == TWIN
    text = describe(loaded)
    assert "twin.py: " in text and f"twin evidence: equivalent: {evidence['reason']}" in text
    assert "does not prove: equality" in text


def test_planning_workers_use_the_twin_unless_told_not_to(with_twin: Path) -> None:
    loaded = bundle.load_bundle(with_twin)
    config = SearchConfig(num_simulations=50, rollouts=1)
    state = pyspiel.load_game("tic_tac_toe").new_initial_state()
    for use_twin, file in ((True, TWIN_FILE), (False, "model.py")):
        agent = bundle_agent(loaded, config, seed=0, use_twin=use_twin)
        assert isinstance(agent, WorkerAgent) and agent.planned_on == file
        try:
            assert agent.step(state) in state.legal_actions()
        finally:
            agent.close()
    # a twin beside an inference or value module (which read the model's own states) is not used
    assert WorkerAgent({"model.py": "", TWIN_FILE: "", "value.py": ""}, "tic_tac_toe").planned_on == "model.py"


def test_a_twin_plans_with_its_playout_only_where_its_evidence_checked_it(exported: Path, ttt_source: str,
                                                                         rehashed) -> None:
    fused = (DATA / "twins" / "ttt_fused.py").read_text(encoding="utf-8")
    evidence = check_equivalence(ttt_source, fused, settings=SETTINGS)
    assert evidence["verdict"] == "equivalent" and evidence["playout"]["verdict"] == "equivalent"
    made = save_twin(exported, fused, evidence, provenance={"answered_by": "hand-written for a test"})
    loaded = bundle.load_bundle(made)
    assert loaded.sources[TWIN_FILE] == fused and "agrees exactly in" in describe(loaded)
    assert bundle_agent(loaded, seed=0).twin_playout and not bundle_agent(loaded, seed=0, use_twin=False).twin_playout
    # evidence with no playout record: the twin loads, and its planner steps it (its playout is never called)
    rehashed(made, TWIN_EVIDENCE, json.dumps(dict(evidence, playout=None)).encode())
    stepped = bundle_agent(bundle.load_bundle(made), seed=0)
    assert stepped.planned_on == TWIN_FILE and not stepped.twin_playout
    rehashed(made, TWIN_EVIDENCE, json.dumps(dict(evidence, playout=dict(evidence["playout"], verdict="refused"))).encode())
    with pytest.raises(bundle.BundleError, match="twin.py is refused: the evidence's record of the twin's playout is "
                                                 "not a passing check of it"):
        bundle.load_bundle(made)


def test_a_twin_edited_after_its_evidence_is_refused(with_twin: Path, rehashed) -> None:
    rehashed(with_twin, TWIN_FILE, (TWIN + "\n# edited\n").encode())  # the manifest's hash made to match
    with pytest.raises(bundle.BundleError) as e:
        bundle.load_bundle(with_twin)
    assert str(e.value).startswith(f"{with_twin}: twin.py is refused: the evidence's twin_sha256 does not match")
    assert "\n" not in str(e.value)


def test_evidence_of_another_model_is_refused(with_twin: Path, rehashed, evidence: dict) -> None:
    forged = dict(evidence, reference_sha256="0" * 64)
    rehashed(with_twin, TWIN_EVIDENCE, json.dumps(forged).encode())
    with pytest.raises(bundle.BundleError, match="reference_sha256 does not match the model's bytes"):
        bundle.load_bundle(with_twin)


def test_self_certified_evidence_for_a_wrong_twin_is_refused_at_load(with_twin: Path, rehashed,
                                                                     evidence: dict) -> None:
    """Evidence anyone can write (the right fingerprints, verdict 'equivalent') for a twin that never passed the
    check: the loader checks the twin on the stored trajectories as it checks the model, and refuses it."""
    wrong = TWIN.replace("\"x\": [1.0, -1.0]", "\"x\": [-1.0, 1.0]", 1)  # a win for x scored as a loss
    assert wrong != TWIN
    forged = dict(evidence, twin_sha256=__import__("hashlib").sha256(wrong.encode()).hexdigest())
    rehashed(with_twin, TWIN_FILE, wrong.encode())
    rehashed(with_twin, TWIN_EVIDENCE, json.dumps(forged).encode())
    with pytest.raises(bundle.BundleError) as e:
        bundle.load_bundle(with_twin)
    assert "twin.py fails stored-trajectory checks its model passes" in str(e.value) and "\n" not in str(e.value)


@pytest.mark.parametrize("bound, said", [
    ({"p": 0.99, "delta": 0.99, "playouts_per_kind": 1}, "weaker than p <= 0.2, delta <= 0.05"),
    ({"p": 0.05, "delta": 0.01, "playouts_per_kind": 3}, "fewer than its bound needs"),
])
def test_evidence_with_a_weak_or_inconsistent_bound_is_refused(with_twin: Path, rehashed, evidence: dict,
                                                               bound: dict, said: str) -> None:
    forged = dict(evidence, bound=dict(evidence["bound"], **bound))
    rehashed(with_twin, TWIN_EVIDENCE, json.dumps(forged).encode())
    with pytest.raises(bundle.BundleError, match=said):
        bundle.load_bundle(with_twin)


def test_a_twin_without_evidence_is_refused(with_twin: Path) -> None:
    manifest = json.loads((with_twin / "manifest.json").read_text())
    del manifest["files"][TWIN_EVIDENCE]
    (with_twin / TWIN_EVIDENCE).unlink()
    (with_twin / "manifest.json").write_text(json.dumps(manifest))
    with pytest.raises(bundle.BundleError, match="twin.py is in the bundle without twin_evidence.json"):
        bundle.load_bundle(with_twin)


def test_unreadable_evidence_is_refused(with_twin: Path, rehashed) -> None:
    rehashed(with_twin, TWIN_EVIDENCE, b"{not json")
    with pytest.raises(bundle.BundleError, match="twin_evidence.json: not readable JSON"):
        bundle.load_bundle(with_twin)


def test_a_divergent_twin_is_not_saved(exported: Path, ttt_source: str) -> None:
    wrong = TWIN.replace('"o": [-1.0, 1.0]', '"o": [-1.0, 0.5]')
    evidence = check_equivalence(ttt_source, wrong, settings=SETTINGS)
    before = (exported / "manifest.json").read_bytes()
    with pytest.raises(bundle.BundleError, match="the twin was not saved: the evidence's verdict is 'divergent'"):
        save_twin(exported, wrong, evidence)
    assert (exported / "manifest.json").read_bytes() == before and not (exported / TWIN_FILE).exists()


def test_a_twin_cannot_be_exported_without_evidence(tmp_path: Path, ttt_source: str, train) -> None:
    with pytest.raises(bundle.BundleError, match="bundle files may be"):
        bundle.export_bundle(tmp_path / "b", game="tic_tac_toe", model_source=ttt_source, train=train,
                             extra_sources={TWIN_FILE: TWIN})


def test_the_twin_benchmark_times_the_model_the_twin_and_mctsbot_on_the_same_positions(benchmark_module) -> None:
    import argparse

    bench = benchmark_module("bench_twin")
    states = bench.positions(2)
    assert all(not s.is_terminal() for s in states)
    model = (DATA / "reference" / "tic_tac_toe_model.py").read_text(encoding="utf-8")
    per_move = bench.timed_moves(model, TWIN, states, argparse.Namespace(sims=20, rollouts=1, repeats=1, game="tic_tac_toe",
                                                                         moves_per_reading=2))
    # timed once each, two moves a reading in the same engine (CPU clocks tick in 10 ms steps here, so a
    # 20-simulation move may read 0)
    assert set(per_move) == {"model", "twin", "mctsbot", "gt-mcts"} and all(0 <= t < 60 for t in per_move.values())
    fused = (DATA / "twins" / "ttt_fused.py").read_text(encoding="utf-8")  # with playout: also timed stepped
    per_move = bench.timed_moves(model, fused, states[:1], argparse.Namespace(sims=20, rollouts=1, repeats=1,
                                                                             game="tic_tac_toe", moves_per_reading=1), playout=True)
    assert set(per_move) == {"model", "twin", "stepped", "mctsbot", "gt-mcts"}
    per_move = bench.timed_moves(model, fused, states[:1], argparse.Namespace(sims=20, rollouts=1, repeats=1,
                                                                             game="tic_tac_toe", moves_per_reading=1), playout=True,
                                 skip=("model", "mctsbot"))
    assert set(per_move) == {"twin", "stepped", "gt-mcts"}
    with pytest.raises(SystemExit, match="--skip takes"):  # the twin is what is timed: it cannot be left out
        bench.timed_moves(model, fused, states[:1], argparse.Namespace(sims=20, rollouts=1, repeats=1,
                                                                      game="tic_tac_toe", moves_per_reading=1), skip=("twin",))


def test_the_benchmark_positions_of_a_game_with_chance_are_seeded_player_decisions(benchmark_module) -> None:
    bench = benchmark_module("bench_twin")
    states = bench.positions(40, "backgammon")
    assert all(not s.is_chance_node() and not s.is_terminal() for s in states)
    assert len({str(s) for s in states}) > 20  # seeded random openings and dice, not one position over again
    assert [str(s) for s in states] == [str(s) for s in bench.positions(40, "backgammon")]  # and reproducible
    # the first roll decides who moves first, so both players' decisions are timed
    assert {s.current_player() for s in states} == {0, 1}
