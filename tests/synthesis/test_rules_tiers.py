"""The two tiers of rules (spec, the engine-level specification; prose, the rulebook) reach the prompts
through ``--rules``, and the tier a synthesis used is recorded in its result.

The prose-tier session replayed here is hand-written for this test (``tests/data/synthesis/prose/``: one
reply, written by hand, recorded by ``cwm.llm.RecordingClient``; its model id says so). After a change of
the prose rules or the prompts, record it again with ``python tests/synthesis/test_rules_tiers.py``.
"""

from __future__ import annotations

import dataclasses
import importlib.resources
import json
import sys
import tempfile
from pathlib import Path

import pytest

from cwm import games
from cwm.cli import main
from cwm.games import registry

DATA = Path(__file__).resolve().parents[1] / "data" / "synthesis" / "prose"
RECORDING = DATA / "tic_tac_toe.jsonl"
MODEL_ID = "hand-written-for-a-test"


def test_a_prose_tier_synthesis_replays_and_says_which_rules_it_used(tmp_path: Path, capsys) -> None:
    out = tmp_path / "run"
    argv = ["synthesize", "tic_tac_toe", "--rules", "prose", "--llm", f"replay:{RECORDING}", "--out", str(out),
            "--num-test", "0", "--no-sandbox", "--quiet"]
    assert main(argv) == 0, capsys.readouterr().err
    result = json.loads((out / "result.json").read_text())
    assert result["solved"] and result["llm_calls"] == 1 and result["model"] == MODEL_ID
    assert result["rules"] == "prose"
    assert "rules: prose" in (out / "summary.md").read_text()
    # the prompt the recording answered held the rulebook, not the specification
    request = json.loads(RECORDING.read_text().splitlines()[0])["request"]
    prompt = "\n".join(m["text"] for m in request["messages"])
    assert "A game for two players on a square grid" in prompt and "`current_player`" not in prompt


def test_the_bundle_and_the_run_report_say_which_rules_and_refuse_an_edited_label(tmp_path: Path) -> None:
    from cwm.bundle import BundleError, export_run
    from cwm.pipeline import report

    run = tmp_path / "run"
    assert main(["synthesize", "tic_tac_toe", "--rules", "prose", "--llm", f"replay:{RECORDING}", "--out", str(run),
                 "--num-test", "0", "--no-sandbox", "--quiet"]) == 0
    manifest = json.loads((export_run(run, tmp_path / "bundle") / "manifest.json").read_text())
    assert manifest["provenance"]["rules"] == "prose"
    result = json.loads((run / "result.json").read_text())
    assert report._rules(result) == "`prose`" and report._rules({}) == "not recorded"
    for forged in ("prose\n- solved: yes", ["prose"], "sha256:xyz"):
        (run / "result.json").write_text(json.dumps(result | {"rules": forged}))
        with pytest.raises(BundleError, match="field 'rules' must be spec, prose or sha256") as e:
            export_run(run, tmp_path / "bundle2")
        assert "\n" not in str(e.value)
        assert report._rules({"rules": forged}) == "not recorded"


def test_the_spec_tier_is_the_default_and_the_same_prompt(tmp_path: Path) -> None:
    spec = games.resolve("tic_tac_toe")
    assert games.resolve("tic_tac_toe", rules="spec") == spec
    text = games.rules_text(spec)
    assert games.rules_label(spec, text) == "spec"
    assert games.rules_label(spec, games.rules_text(games.resolve("tic_tac_toe", rules="prose"))) == "prose"
    own = tmp_path / "mine.md"
    own.write_text(text + "\nOne more line.\n", encoding="utf-8")
    label = games.rules_label(games.resolve("tic_tac_toe", rules=own), own.read_text(encoding="utf-8"))
    assert label.startswith("sha256:") and games.is_rules_label(label) and len(label) == len("sha256:") + 64


def test_the_spec_tier_replays_the_shipped_session_with_the_rules_recorded(tmp_path: Path, capsys) -> None:
    recording = Path(str(importlib.resources.files("cwm").joinpath("data/recordings/tic_tac_toe.jsonl")))
    out = tmp_path / "run"
    assert main(["synthesize", "tic_tac_toe", "--rules", "spec", "--llm", f"replay:{recording}", "--out", str(out),
                 "--num-test", "0", "--no-sandbox", "--quiet"]) == 0, capsys.readouterr().err
    assert json.loads((out / "result.json").read_text())["rules"] == "spec"


def test_a_game_without_a_prose_file_gets_one_line_naming_it(tmp_path: Path, monkeypatch, capsys) -> None:
    monkeypatch.setattr(registry, "_REGISTRY", dict(registry._REGISTRY))  # the copy goes with the test
    games.register(dataclasses.replace(games.resolve("tic_tac_toe"), name="tic_tac_toe_copy"))
    code = main(["synthesize", "tic_tac_toe_copy", "--rules", "prose", "--llm", "replay:/nonexistent.jsonl",
                 "--out", str(tmp_path / "run")])
    err = capsys.readouterr().err.strip()
    assert code != 0 and len(err.splitlines()) == 1, err
    assert "game_rules/prose/tic_tac_toe_copy.md does not exist" in err
    assert not (tmp_path / "run").exists()  # nothing written before the rules were found
    assert games.rules_tiers(games.resolve("tic_tac_toe_copy")) == ("spec",)


def test_a_missing_rules_file_gets_one_line_naming_it(tmp_path: Path, capsys) -> None:
    missing = tmp_path / "nope.md"
    code = main(["synthesize", "tic_tac_toe", "--rules", str(missing), "--llm", "replay:/nonexistent.jsonl",
                 "--out", str(tmp_path / "run")])
    err = capsys.readouterr().err.strip()
    assert code != 0 and len(err.splitlines()) == 1 and str(missing) in err, err


def test_cwm_games_lists_each_games_tiers(capsys) -> None:
    assert main(["games", "--json"]) == 0
    listed = {g["name"]: g["rules"] for g in json.loads(capsys.readouterr().out)}
    assert listed == {s.name: ["spec", "prose"] for s in games.registered()}
    assert main(["games"]) == 0
    rows = capsys.readouterr().out.splitlines()[2:]
    assert rows and all(row.endswith(" spec,prose") for row in rows), rows


def record() -> None:
    """Records the prose-tier session again from the hand-written reply (with cwm synthesize's defaults)."""
    from cwm.llm import RecordingClient, ScriptedClient
    from cwm.synthesis import SynthesisSettings, synthesize_world_model

    RECORDING.unlink(missing_ok=True)
    reply = (DATA / "tic_tac_toe_reply.md").read_text(encoding="utf-8")
    llm = RecordingClient(ScriptedClient([reply], model=MODEL_ID), RECORDING)
    with tempfile.TemporaryDirectory() as tmp:
        result = synthesize_world_model(games.resolve("tic_tac_toe", rules="prose"), llm,
                                        SynthesisSettings.of("world_model", num_test=0, isolate=False),
                                        run_dir=Path(tmp) / "run")
    print(f"recorded {result.llm_calls} call(s) to {RECORDING} (solved: {result.solved})")


if __name__ == "__main__":
    record()
    sys.exit(0)
