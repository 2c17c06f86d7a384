"""Encoder synthesis end to end with hand-written scripted replies: a variable-length first candidate fails
the fixed-length check and is refined into a passing one, which the bundle keeps as encoder.py under its
manifest's hash; a hostile candidate (it reads the environment and writes a file) is refused by the gate,
and behind the gate the sandbox hides the environment and refuses the write; reruns resume; the CLI writes
the encoder too."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from cwm.bundle import export_bundle, load_bundle
from cwm.bundle.files import BundleError, read_trajectories, sha256
from cwm.cli import main
from cwm.games import trajectories
from cwm.llm import ScriptedClient
from cwm.sandbox import Sandbox
from cwm.sandbox.box import ENCODER_GAMES_JOB as ENCODER_JOB
from cwm.sandbox.checkers import sandbox_check_encoder
from cwm.synthesis import SynthesisSettings
from cwm.synthesis.encoder import synthesize_encoder
from cwm.synthesis.extract import extract_code
from cwm.types import UsageError

DATA = Path(__file__).resolve().parents[1] / "data"
TTT = (DATA / "reference" / "tic_tac_toe_model.py").read_text()
REPLIES = {name: (DATA / "encoder" / "replies" / f"{name}.md").read_text() for name in ("initial", "refine", "hostile")}
PASSING = extract_code(REPLIES["refine"], required=("encode",)).candidates[0]
MARKER = Path("/tmp/cwm-encoder-hostile-marker")


@pytest.fixture(scope="module")
def ttt_games() -> list:
    return trajectories.collect("tic_tac_toe", 3, seed=0)


@pytest.fixture()
def bundle(tmp_path: Path, ttt_games: list) -> Path:
    return export_bundle(tmp_path / "bundle", game="tic_tac_toe", model_source=TTT, train=ttt_games,
                         provenance={"llm": "hand-written fixture"})


def _run(bundle: Path, run_dir: Path, llm: ScriptedClient, **kw):
    return synthesize_encoder("tic_tac_toe", llm, SynthesisSettings.of("encoder", **{"budget": 3, **kw}), run_dir=run_dir,
                              bundle=bundle)


@pytest.fixture(scope="module")
def finished(tmp_path_factory, ttt_games):
    root = tmp_path_factory.mktemp("encoder-run")
    made = export_bundle(root / "bundle", game="tic_tac_toe", model_source=TTT, train=ttt_games)
    llm = ScriptedClient([REPLIES["initial"], REPLIES["refine"]])
    return _run(made, root / "run", llm), llm, root / "run"


def test_a_variable_length_encoder_is_refined_into_one_the_bundle_keeps(finished) -> None:
    result, llm, _ = finished
    first, second = (call.messages[0].text for call in llm.calls)
    assert len(llm.calls) == 2 and first.startswith("Write an observation encoder")
    assert '{"board": [".", ".", ".", ".", ".", ".", ".", ".", "."], "current_player": "x"}' in first
    assert "if cell != \".\"]" in second and "[encoder_fixed_length]" in second
    assert "encoder_fixed_length 2/54" in second  # every observation counted, the two empty boards pass
    assert result.synthesis.solved and result.encoder == PASSING
    bundle = Path(result.bundle)
    manifest = json.loads((bundle / "manifest.json").read_text())
    assert (bundle / "encoder.py").read_text() == PASSING
    assert manifest["files"]["encoder.py"] == sha256(PASSING.encode())
    assert manifest["provenance"]["encoder"]["node"] == result.synthesis.best_node
    loaded = load_bundle(bundle)
    assert loaded.sources["encoder.py"] == PASSING
    assert sandbox_check_encoder(PASSING, read_trajectories(bundle, "tic_tac_toe")).ok


def test_every_prompt_reply_and_report_is_saved_and_a_rerun_resumes(finished) -> None:
    result, _, run = finished
    assert sorted(p.name for p in (run / "calls").glob("*.prompt.md")) == ["000000.prompt.md", "000001.prompt.md"]
    for name in ("result.json", "summary.md", "encoder.json"):
        assert (run / name).is_file(), name
    silent = ScriptedClient([])
    again = _run(Path(result.bundle), run, silent)
    assert silent.calls == [] and again.encoder == result.encoder


def test_an_edited_encoder_fails_the_bundle_hash(bundle, tmp_path) -> None:
    result = _run(bundle, tmp_path / "run", ScriptedClient([REPLIES["refine"]]))
    assert result.encoder == PASSING
    (bundle / "encoder.py").write_text(PASSING + "\nEXTRA = 1\n")
    with pytest.raises(BundleError, match="encoder.py does not match its hash"):
        load_bundle(bundle)


def test_a_hostile_encoder_is_refused_and_refined_and_nothing_leaks(bundle, tmp_path, monkeypatch) -> None:
    monkeypatch.setenv("CWM_ENCODER_TEST_SECRET", "hunter2")
    MARKER.unlink(missing_ok=True)
    llm = ScriptedClient([REPLIES["hostile"], REPLIES["refine"]])
    result = _run(bundle, tmp_path / "run", llm)
    hostile = result.synthesis.nodes[0]
    assert hostile.error.startswith("static: line 4: import of 'os' is not allowed") and not hostile.solved
    assert not hostile.expandable and "os.environ" not in llm.calls[1].messages[0].text  # a fresh start, not it
    assert result.encoder == PASSING and result.synthesis.nodes[1].solved and not MARKER.exists()
    saved = " ".join(p.read_text(errors="replace") for p in (tmp_path / "run").rglob("*") if p.is_file())
    assert "hunter2" not in saved


def test_behind_the_gate_the_sandbox_hides_the_environment_and_refuses_writes(ttt_games, tmp_path,
                                                                               monkeypatch) -> None:
    monkeypatch.setenv("CWM_ENCODER_TEST_SECRET", "hunter2")
    marker = tmp_path / "marker"
    source = (  # with the gate off, reaches os through random's module globals
        "import random\n\n"
        "def encode(observation, player_id):\n"
        "    os = random.Random.seed.__globals__['_os']\n"
        "    found = {k: v for k, v in os.environ.items() if 'SECRET' in k}\n"
        "    try:\n"
        f"        os.write(os.open({str(marker)!r}, os.O_WRONLY | os.O_CREAT), b'x')\n"
        "        wrote = 'wrote'\n"
        "    except OSError as e:\n"
        "        wrote = 'refused: ' + str(e)\n"
        "    raise ValueError(f'found {found}; {wrote}')\n")
    with Sandbox() as box:
        ran = box.run(ENCODER_JOB, source, {"trajectories": ttt_games, "call_s": 0.005}, gate=False)
    assert ran.ok, ran.error
    got = ran.value["failures"][0]["got"]
    assert got.startswith("ValueError: found {}; refused: sandbox: opening") and "hunter2" not in got
    assert not marker.exists() and os.environ["CWM_ENCODER_TEST_SECRET"] == "hunter2"


def test_no_passing_candidate_leaves_the_bundle_unchanged(bundle, tmp_path) -> None:
    before = {p.name: p.read_bytes() for p in bundle.iterdir()}
    result = _run(bundle, tmp_path / "run", ScriptedClient([REPLIES["initial"]]), budget=1)
    assert result.encoder is None and not result.synthesis.solved
    assert {p.name: p.read_bytes() for p in bundle.iterdir()} == before


def test_bad_settings_are_refused_before_the_run_folder_exists(bundle, tmp_path) -> None:
    with pytest.raises(UsageError, match="shown must be an integer >= 1"):
        _run(bundle, tmp_path / "run", ScriptedClient([]), shown=0)
    assert not (tmp_path / "run").exists()


def test_the_cli_writes_the_encoder_into_the_bundle(bundle, tmp_path, monkeypatch, capsys) -> None:
    import cwm.commands.synthesize

    monkeypatch.setattr(cwm.commands.synthesize, "make_client",
                        lambda *a, **k: ScriptedClient([REPLIES["initial"], REPLIES["refine"]]))
    argv = ["synthesize", "tic_tac_toe", "--target", "encoder", "--from", str(bundle), "--out", str(tmp_path / "run"),
            "--budget", "3", "--quiet"]
    assert main(argv) == 0
    assert "an encoder passed every check after 2 LLM calls" in capsys.readouterr().out
    assert (bundle / "encoder.py").read_text() == PASSING


def test_the_cli_refuses_an_encoder_target_without_its_bundle(tmp_path, capsys) -> None:
    argv = ["synthesize", "tic_tac_toe", "--target", "encoder", "--out", str(tmp_path / "run"), "--llm", "replay:none"]
    assert main(argv) == 2
    assert "--target encoder needs --from BUNDLE" in capsys.readouterr().err
