"""Fast-twin synthesis (cwm.synthesis.fast) through a recorded session hand-written for this test
(tests/data/twins/fast_session: its provenance says so): the first twin has a wrong reward, the refinement
prompt shows the first diverging step, the second twin (with its own playout loop) passes the equivalence check,
its playout checked exactly, and is saved in the bundle with its evidence. Also: what a candidate's check report says, and the profile the prompts show."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from cwm import bundle
from cwm.games import trajectories
from cwm.llm.replay import ReplayClient
from cwm.sandbox.equivalence import EquivalenceSettings, check_equivalence, profile_model
from cwm.synthesis.fast import synthesize_fast
from cwm.synthesis.fast_target import LIBRARY_NOTE, LIBRARY_ROW, evidence_report, render_profile
from cwm.synthesis.settings import SynthesisSettings
from cwm.types import UsageError

DATA = Path(__file__).resolve().parents[1] / "data"
SESSION = DATA / "twins" / "fast_session"
MODEL = (DATA / "reference" / "tic_tac_toe_model.py").read_text(encoding="utf-8")
TWIN = (DATA / "twins" / "ttt_fast.py").read_text(encoding="utf-8")
FUSED = (DATA / "twins" / "ttt_fused.py").read_text(encoding="utf-8")
EQUIVALENCE = EquivalenceSettings(p=0.2, delta=0.05, simulations=20)


@pytest.fixture()
def model_bundle(tmp_path: Path) -> Path:
    return bundle.export_bundle(tmp_path / "b", game="tic_tac_toe", model_source=MODEL,
                                train=trajectories.collect("tic_tac_toe", 3, seed=0))


def test_the_recorded_session_refines_a_wrong_twin_and_saves_the_right_one(model_bundle: Path, tmp_path: Path) -> None:
    assert "hand-written for a test" in json.loads((SESSION / "provenance.json").read_text())["answered_by"]
    llm = ReplayClient(SESSION / "tic_tac_toe.jsonl")
    profile = json.loads((SESSION / "profile.json").read_text())
    result = synthesize_fast("tic_tac_toe", llm, SynthesisSettings.of("fast", budget=3), run_dir=tmp_path / "run",
                             bundle=model_bundle, equivalence=EQUIVALENCE, profile=profile)
    assert result.synthesis.solved and result.synthesis.llm_calls == 2 and result.twin == FUSED
    assert result.evidence is not None and result.evidence["verdict"] == "equivalent"
    assert result.evidence["playout"]["verdict"] == "equivalent" and result.evidence["playout"]["runs"] > 0
    loaded = bundle.load_bundle(model_bundle)
    assert loaded.sources["twin.py"] == FUSED and loaded.twin_evidence == result.evidence
    recorded = [json.loads(line)["request"]["messages"][-1]["text"] for line in
                (SESSION / "tic_tac_toe.jsonl").read_text().splitlines()]
    initial, refine = recorded
    assert "| get_legal_actions | 7643 |" in initial and "never copy a whole state deeply" in initial
    assert "def playout(state: dict, returns: list[float], rand, limit: int)" in initial
    assert "call `rand()` exactly once per move" in initial and "legal[int(u * len(legal))]" in initial
    assert "[rewards] game " in refine and "expected: [-1.0, 1.0]" in refine and "got:      [-1.0, 0.5]" in refine
    assert "diff: rewards differ: rewards[1]: expected 1, got 0.5" in refine


def test_no_twin_is_saved_when_none_passes(model_bundle: Path, tmp_path: Path) -> None:
    from cwm.llm.base import ScriptedClient

    wrong = TWIN.replace('"o": [-1.0, 1.0]', '"o": [-1.0, 0.5]')
    llm = ScriptedClient([f"```python\n{wrong}```\n"], model="scripted")
    before = (model_bundle / "manifest.json").read_bytes()
    result = synthesize_fast("tic_tac_toe", llm, SynthesisSettings.of("fast", budget=1), run_dir=tmp_path / "run",
                             bundle=model_bundle, equivalence=EQUIVALENCE,
                             profile=json.loads((SESSION / "profile.json").read_text()))
    assert result.twin is None and result.evidence is None and not result.synthesis.solved
    assert (model_bundle / "manifest.json").read_bytes() == before


def test_the_fast_target_runs_only_in_the_sandbox(model_bundle: Path, tmp_path: Path) -> None:
    with pytest.raises(UsageError, match="checked only in the sandbox"):
        synthesize_fast("tic_tac_toe", ReplayClient(SESSION / "tic_tac_toe.jsonl"),
                        SynthesisSettings.of("fast", isolate=False), run_dir=tmp_path / "run", bundle=model_bundle)
    assert not (tmp_path / "run").exists()


def test_a_candidates_report_counts_playouts_and_shows_its_first_divergence() -> None:
    wrong = TWIN.replace('"o": [-1.0, 1.0]', '"o": [-1.0, 0.5]')
    evidence = check_equivalence(MODEL, wrong, settings=EQUIVALENCE)
    report = evidence_report(evidence)
    assert report.executed == 28 and report.passed == 28 - evidence["diverging_playouts"] > 0
    assert [f.test_type for f in report.failures] == ["rewards"] and not report.all_passed
    assert evidence_report(check_equivalence(MODEL, TWIN, settings=EQUIVALENCE)).all_passed
    refused = evidence_report(check_equivalence(MODEL, "import os\n" + TWIN, settings=EQUIVALENCE))
    assert refused.executed == 0 and refused.error.startswith("refused: the twin could not be run: static:")


def test_the_profile_counts_every_contract_call_of_seeded_random_play() -> None:
    profile = profile_model(MODEL, playouts=50, cpu_s=60.0)
    assert isinstance(profile, dict) and profile["playouts"] == 50
    calls = profile["calls"]
    # every state but the initial one was reached by one apply_action and paid one get_rewards
    assert calls["apply_action"] == calls["get_rewards"] == profile["states"] - 50
    assert calls["get_initial_state"] == 51  # one per playout, and one for the number of players
    table, profiled = render_profile(profile)
    assert profiled == f"50 games ({profile['states']} states)"
    assert table.splitlines()[0] == "| function | calls | CPU ms | share | µs per call |"
    assert "get_chance_outcomes" not in table  # never called in a game without chance
    assert profile_model("import os\n" + MODEL).startswith("static: line 1: import of 'os'")
    # the library's freezing of each state apply_action returned is timed too, and shown with what makes it cheap
    assert profile["library"]["frozen"] == calls["apply_action"] and profile["library"]["freeze_s"] >= 0
    assert f"| {LIBRARY_ROW} | {calls['apply_action']} |" in table and table.endswith(LIBRARY_NOTE)


def test_a_profile_recorded_before_the_library_row_renders_as_it_was_recorded() -> None:
    # the shipped sessions' prompts showed their profiles without the row: a replay must render them the same
    old = json.loads((SESSION / "profile.json").read_text())
    assert "library" not in old
    table, _ = render_profile(old)
    assert LIBRARY_ROW not in table and LIBRARY_NOTE not in table
    first = json.loads((SESSION / "tic_tac_toe.jsonl").read_text().splitlines()[0])["request"]["messages"][0]["text"]
    assert "\n\n" + table + "\n\n" in first  # the very table the recorded prompt showed


def test_a_kept_row_changed_through_an_unbound_method_ends_the_profile() -> None:
    # the profile's timed freezing restores such a row's decoy as it refuses it, so it must report the breach
    # itself (the step's own freezing would then find nothing); in process, as the gate refuses list.append
    import types

    from cwm.sandbox.jobs import twin

    tamper = MODEL.replace("def apply_action(state, action):", "def apply_action(state, action):\n"
                           "    if state['player'] == 1:\n"
                           "        b = state['board']\n        list.append(b, 'z')\n"
                           "        return {'board': b, 'player': 0}\n", 1)
    assert tamper != MODEL
    module = types.ModuleType("tampering")
    exec(compile(tamper, "<tampering>", "exec"), module.__dict__)  # noqa: S102 (test data, in process on purpose)
    got = twin.profile(module, {"name": "m", "playouts": 3, "cpu_s": 5.0, "seed": 0, "max_steps": 100})
    assert got["error"] is not None and "the library refused the state it returned" in got["error"]
    assert "tried to change through an unbound method" in got["error"]


def test_the_profile_names_the_rule_a_returned_state_breaks_when_timing_its_freezing() -> None:
    # the profile's timed freezing of a bad state ends the profile, naming the rule
    bad = MODEL.replace("def apply_action(state, action):", "def apply_action(state, action):\n    return {'x': float('nan')}\n", 1)
    assert bad != MODEL
    got = profile_model(bad, playouts=3)
    assert isinstance(got, str) and got.startswith("error: the model broke its contract while profiled") and "nan" in got
    assert "the library refused the state it returned" in got


def test_cwm_synthesize_target_fast_replays_the_session_and_cwm_inspect_shows_the_evidence(
        model_bundle: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    from cwm.cli import main

    run = tmp_path / "run"
    run.mkdir()
    (run / "profile.json").write_bytes((SESSION / "profile.json").read_bytes())  # the profile the session showed
    assert main(["synthesize", "tic_tac_toe", "--target", "fast", "--from", str(model_bundle), "--llm",
                 f"replay:{SESSION / 'tic_tac_toe.jsonl'}", "--out", str(run), "--quiet", "--budget", "3",
                 "--detect-rate", "0.2", "--miss-probability", "0.05", "--playout-simulations", "20"]) == 0
    assert "a twin passed the equivalence check after 2 LLM calls" in capsys.readouterr().out
    assert main(["inspect", str(model_bundle)]) == 0
    shown = capsys.readouterr().out
    assert "twin evidence: equivalent: no divergence in 14 random + 14 mcts playouts" in shown
    assert main(["synthesize", "tic_tac_toe", "--target", "fast", "--out", str(tmp_path / "r2")]) != 0
    assert "--target fast needs --from BUNDLE" in capsys.readouterr().err
