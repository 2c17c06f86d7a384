"""Bit-for-bit reruns: an agent is its content, so two exports of one synthesis are one agent, and the same
``cwm run`` into two folders plays the same matches, record for record."""

from __future__ import annotations

import hashlib
import json
import shutil
from pathlib import Path

import pytest

from cwm.agents import parse_agent_spec
from cwm.agents.fingerprint import agent_fingerprint, former_fingerprint
from cwm.bundle import export_run
from cwm.cli import main
from cwm.llm import make_client
from cwm.pipeline import recording_for
from cwm.synthesis import SynthesisSettings, synthesize_world_model

TINY = ["--num-test", "4", "--matches", "2", "--sims", "30", "--rollouts", "1", "--executor", "local:2",
        "--quiet", "--no-twins", "--ppo-steps", "0"]  # the twin and PPO stages: tests/pipeline/test_run_twins.py
# Fields of a match record that measure this run's machine, not the match (each with why it may differ):
RUN_SPECIFIC = {"duration_s": "the match's wall-clock seconds"}
RUN_SPECIFIC_STATS = {"move_wall_s": "a CWM move's wall-clock seconds in its worker",
                      "move_cpu_s": "a CWM move's CPU seconds in its worker (load and scheduling move them)"}


def _fingerprint(bundle: Path) -> str:
    return agent_fingerprint(parse_agent_spec(f"cwm:{bundle}"))


@pytest.fixture(scope="module")
def synthesis(tmp_path_factory) -> Path:
    run = tmp_path_factory.mktemp("synth") / "run"
    client = make_client(f"replay:{recording_for('tic_tac_toe')}")
    synthesize_world_model("tic_tac_toe", client, SynthesisSettings.of("world_model", num_test=0), run_dir=run)
    return run


def test_two_exports_of_one_synthesis_are_one_agent(synthesis, tmp_path):
    moved = shutil.copytree(synthesis, tmp_path / "elsewhere" / "run")  # the run recorded at another place
    first, second = export_run(synthesis, tmp_path / "b1"), export_run(moved, tmp_path / "b2")
    manifests = [json.loads((b / "manifest.json").read_text()) for b in (first, second)]
    assert manifests[0]["provenance"]["run_dir"] != manifests[1]["provenance"]["run_dir"]  # the manifests differ
    assert (first / "manifest.json").read_bytes() != (second / "manifest.json").read_bytes()
    assert _fingerprint(first) == _fingerprint(second)
    assert _fingerprint(first).startswith("cwm bundle-sha256:")


def test_what_an_agent_is_changes_its_identity_and_nothing_else_does(synthesis, tmp_path):
    bundle = export_run(synthesis, tmp_path / "b")
    before = _fingerprint(bundle)
    manifest = json.loads((bundle / "manifest.json").read_text())
    stamped = manifest | {"created_at": "2001-01-01T00:00:00+00:00", "cwm_version": "0.0.0",
                          "provenance": manifest["provenance"] | {"llm": "another claim", "run_dir": "/x"}}
    (bundle / "manifest.json").write_text(json.dumps(stamped, indent=4))  # other bytes, other key order
    assert _fingerprint(bundle) == before
    edited = (bundle / "model.py").read_bytes() + b"\n# one more line\n"
    (bundle / "model.py").write_bytes(edited)
    stamped["files"]["model.py"] = hashlib.sha256(edited).hexdigest()
    (bundle / "manifest.json").write_text(json.dumps(stamped))
    assert _fingerprint(bundle) != before
    stamped["files"]["check_report.json"] = "0" * 64  # any file the bundle holds, not only its code
    (bundle / "manifest.json").write_text(json.dumps(stamped))
    assert len({before, _fingerprint(bundle)}) == 2


def _records(run: Path) -> dict[str, dict]:
    rows = [json.loads(line) for line in (run / "arena" / "matches.jsonl").read_text().splitlines()]
    return {row["key"]: row for row in rows}


def _without_run_specific(row: dict) -> dict:
    kept = {k: v for k, v in row.items() if k not in RUN_SPECIFIC}
    kept["stats"] = [{k: v for k, v in s.items() if k not in RUN_SPECIFIC_STATS} for s in row["stats"]]
    return kept


@pytest.fixture(scope="module")
def two_runs(tmp_path_factory, no_api_keys) -> tuple[Path, Path]:
    base = tmp_path_factory.mktemp("reruns")
    for name in ("a", "b"):
        assert main(["run", "tic_tac_toe", "--out", str(base / name), *TINY]) == 0
    return base / "a", base / "b"


def test_the_same_run_into_two_folders_plays_the_same_matches(two_runs):
    a, b = two_runs
    first, second = _records(a), _records(b)
    assert len(first) == 2 * 2 * 2 and set(first) == set(second)  # 2 matches x 2 seat orders x 2 opponents
    for key, row in first.items():
        assert _without_run_specific(row) == _without_run_specific(second[key]), key
    played = [r for r in first.values() if "cwm" in r["seats"]]
    assert played and all(r["actions"] for r in played)
    assert any(s.get("simulations") for r in played for s in r["stats"])  # the CWM agent searched
    assert (a / "arena" / "results.md").read_text() == (b / "arena" / "results.md").read_text()
    assert (a / "bundle" / "manifest.json").read_bytes() != (b / "bundle" / "manifest.json").read_bytes()


def test_an_arena_recorded_under_the_former_manifest_hash_is_refused_in_one_line(two_runs, tmp_path, capsys,
                                                                                  no_api_keys):
    run = shutil.copytree(two_runs[0], tmp_path / "old")
    spec = parse_agent_spec(f"cwm:{run / 'bundle'}")
    former, now = former_fingerprint(spec), agent_fingerprint(spec)
    assert former is not None and former != now
    matches = run / "arena" / "matches.jsonl"
    matches.write_text(matches.read_text().replace(now, former))  # as an older cwm wrote it
    rows = matches.read_text()
    capsys.readouterr()
    assert main(["run", "tic_tac_toe", "--out", str(run), *TINY]) != 0
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "recorded under the fingerprint an older cwm gave it" in err[0] and "arena/ aside" in err[0]
    assert matches.read_text() == rows  # nothing played or rewritten
    assert main(["replay", str(run / "arena")]) == 0  # still readable
