"""Each synthesis seed replays its own shipped session under ``--llm auto``: seed 0 the tier's ``GAME.jsonl``,
seed S ``seeds/GAME.seed<S>.jsonl``; a seed with none is one line naming the game, tier and seed, before any
run directory is written. The shipped folder is a temporary one holding sessions recorded here from the
reference tic-tac-toe model (a test fixture), one per seed, each answered under its own model name."""

from __future__ import annotations

import csv
import dataclasses
import importlib
import json
import shutil
import sys
import tempfile
from pathlib import Path

import pytest

from cwm import pipeline
from cwm.llm import RecordingClient, ScriptedClient
from cwm.pipeline import recordings
from cwm.synthesis import SynthesisSettings, synthesize_world_model

ROOT = Path(__file__).resolve().parents[2]
MODEL = ROOT / "tests" / "data" / "reference" / "tic_tac_toe_model.py"


def script(name: str):
    if str(ROOT) not in sys.path:
        sys.path.append(str(ROOT))
    return importlib.import_module(f"experiments.{name}")


def record(path: Path, seed: int) -> Path:
    """A one-call tic-tac-toe world-model session of ``seed`` (its prompts are that seed's), answered by the
    reference model under the name ``scripted-seed<seed>``."""
    path.parent.mkdir(parents=True, exist_ok=True)
    reply = f"Here is the module.\n\n```python\n{MODEL.read_text().strip()}\n```\n"
    llm = RecordingClient(ScriptedClient([reply], model=f"scripted-seed{seed}"), path)
    with tempfile.TemporaryDirectory() as run:
        result = synthesize_world_model("tic_tac_toe", llm, SynthesisSettings.of(
            "world_model", budget=1, seed=seed, num_test=0, isolate=False), run_dir=Path(run))
    assert result.solved and result.llm_calls == 1
    return path


@pytest.fixture(scope="module")
def shipped(tmp_path_factory) -> Path:
    """A shipped-recordings folder: spec-tier tic-tac-toe sessions of seeds 0 and 1, a rulebook-tier one of
    seed 1 only (the seed-1 session copied: only where it lies is under test there)."""
    root = tmp_path_factory.mktemp("recordings")
    record(root / "real" / "tic_tac_toe.jsonl", 0)
    seed1 = record(root / "real" / "seeds" / "tic_tac_toe.seed1.jsonl", 1)
    (root / "real" / "prose" / "seeds").mkdir(parents=True)
    shutil.copyfile(seed1, root / "real" / "prose" / "seeds" / "tic_tac_toe.seed1.jsonl")
    return root


@pytest.fixture
def packaged(shipped, monkeypatch) -> Path:
    monkeypatch.setattr(recordings, "_root", lambda: shipped)
    return shipped


def test_each_seed_finds_its_own_file_and_seed_zero_stays_where_it_was(packaged):
    assert pipeline.recording_for("tic_tac_toe") == packaged / "real" / "tic_tac_toe.jsonl"
    assert pipeline.recording_for("tic_tac_toe", seed=1) == packaged / "real" / "seeds" / "tic_tac_toe.seed1.jsonl"
    assert pipeline.recording_for("tic_tac_toe", rules="prose", seed=1) == \
        packaged / "real" / "prose" / "seeds" / "tic_tac_toe.seed1.jsonl"
    assert pipeline.recording_for("tic_tac_toe", seed=2) is None
    assert pipeline.recording_for("tic_tac_toe", rules="prose") is None  # no rulebook-tier seed 0 here
    assert pipeline.resolve_llm("auto", "tic_tac_toe", None, 1) == \
        f"replay:{packaged / 'real' / 'seeds' / 'tic_tac_toe.seed1.jsonl'}"


def test_a_seed_without_a_session_is_one_line_naming_game_tier_and_seed(packaged):
    with pytest.raises(pipeline.PipelineError) as caught:
        pipeline.resolve_llm("auto", "tic_tac_toe", "prose", 3)
    message = str(caught.value)
    assert "\n" not in message and "'tic_tac_toe'" in message and "--rules prose" in message
    assert "seed 3" in message and "seeds/tic_tac_toe.seed3.jsonl" in message


def test_synthesis_table_replays_each_seed_from_its_own_session(packaged, tmp_path):
    out = tmp_path / "run"
    argv = ["--games", "tic_tac_toe", "--seeds", "2", "--num-test", "4", "--budget", "1", "--quiet",
            "--llm", "auto", "--out", str(out)]
    assert script("synthesis_table").main(argv) == 0
    runs = {int(r["seed"]): r for r in csv.DictReader((out / "runs.csv").open(encoding="utf-8"))}
    assert runs[0]["llm"] == f"replay:{packaged / 'real' / 'tic_tac_toe.jsonl'}"
    assert runs[1]["llm"] == f"replay:{packaged / 'real' / 'seeds' / 'tic_tac_toe.seed1.jsonl'}"
    # each seed's prompts were answered, by its own session's model, in one call, with nothing left over
    assert (runs[0]["model"], runs[1]["model"]) == ("scripted-seed0", "scripted-seed1")
    assert all(r["solved"] == "True" and r["llm_calls"] == "1" for r in runs.values())


def test_synthesis_table_refuses_a_missing_seed_before_writing_anything(packaged, tmp_path, capsys):
    out = tmp_path / "run"
    argv = ["--games", "tic_tac_toe", "--seeds", "3", "--num-test", "4", "--quiet", "--llm", "auto",
            "--out", str(out)]
    assert script("synthesis_table").main(argv) == 2
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1 and "'tic_tac_toe'" in err and "--rules spec" in err and "seed 2" in err
    assert not (out / "config.json").exists()


def test_a_seed_zero_session_does_not_answer_another_seed(shipped, tmp_path):
    """Why each seed needs its own file: seed 1's first prompt is not in seed 0's session."""
    from cwm.llm import LLMError, make_client

    with pytest.raises(LLMError):
        synthesize_world_model("tic_tac_toe", make_client(f"replay:{shipped / 'real' / 'tic_tac_toe.jsonl'}"),
                               SynthesisSettings.of("world_model", budget=1, seed=1, num_test=0, isolate=False),
                               run_dir=tmp_path / "run")


def test_inference_and_arena_lookups_take_the_seed(packaged, tmp_path):
    imperfect, arena_figure = script("imperfect"), script("arena_figure")
    folder = tmp_path / "own"
    (folder / "closed" / "seeds").mkdir(parents=True)
    (folder / "closed" / "seeds" / "leduc_poker.seed4.jsonl").write_text("", encoding="utf-8")
    assert imperfect.recording_path("leduc_poker", "closed", str(folder), seed=4) == \
        folder / "closed" / "seeds" / "leduc_poker.seed4.jsonl"
    assert imperfect.recording_path("leduc_poker", "open", str(folder), seed=0) == folder / "leduc_poker.jsonl"
    missing = imperfect.game_llm("recorded", "leduc_poker", "open", str(folder), seed=2)
    assert isinstance(missing, imperfect.NoRecording)
    with pytest.raises(script("common").ExperimentError, match=r"'leduc_poker' \(open deck, --rules spec\) at seed 2"):
        imperfect.require_recording(missing, deck="open", rules="spec", seed=2)
    args = arena_figure.parser().parse_args(["--games", "tic_tac_toe", "--protocol", "paper", "--seeds", "2",
                                             "--llm", "auto"])
    configs = script("common").game_configs(args, ())
    figure = arena_figure.ArenaFigureConfig(configs, "auto", (), None, "open", None, 0, None, None, "inline",
                                            str(tmp_path / "fig"), "paper")
    assert arena_figure.paper_llms(figure, tmp_path / "fig") == {"tic_tac_toe": {
        0: f"replay:{packaged / 'real' / 'tic_tac_toe.jsonl'}",
        1: f"replay:{packaged / 'real' / 'seeds' / 'tic_tac_toe.seed1.jsonl'}"}}
    with pytest.raises(pipeline.PipelineError, match="seed 2"):
        arena_figure.paper_llms(dataclasses.replace(figure, games=tuple(
            dataclasses.replace(c, seeds=3) for c in figure.games)), tmp_path / "fig")


def test_inference_table_refuses_a_game_recorded_for_some_seeds_only(tmp_path, capsys):
    folder = tmp_path / "own"
    folder.mkdir()
    shutil.copyfile(pipeline.recording_for("leduc_poker"), folder / "leduc_poker.jsonl")  # seed 0 only
    out = tmp_path / "run"
    argv = ["--games", "leduc_poker", "--seeds", "2", "--recordings", str(folder), "--quiet", "--out", str(out)]
    assert script("inference_table").main(argv) == 2
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1 and "'leduc_poker' (open deck, --rules spec) at seed 1" in err
    assert str(folder / "seeds" / "leduc_poker.seed1.jsonl") in err and not (out / "config.json").exists()


def test_the_paper_protocol_synthesizes_each_seed_from_its_own_session(packaged, tmp_path):
    out = tmp_path / "paper"
    argv = ["--games", "tic_tac_toe", "--matches", "1", "--sims", "20", "--rollouts", "1", "--num-test", "0",
            "--executor", "inline", "--quiet", "--yes", "--protocol", "paper", "--seeds", "2", "--select-games",
            "1", "--llm", "auto", "--out", str(out)]
    assert script("arena_figure").main(argv) == 0
    syntheses = json.loads((out / "record.json").read_text())["results"]["rows"][0]["syntheses"]
    assert [s["seed"] for s in syntheses] == [0, 1]
    for seed in (0, 1):  # each bundle was synthesized by its own seed's session, in its one call
        manifest = json.loads((out / "tic_tac_toe" / "syntheses" / f"seed{seed}" / "bundle" / "manifest.json").read_text())
        assert (manifest["provenance"]["model"], manifest["provenance"]["llm_calls"]) == (f"scripted-seed{seed}", 1)


@pytest.mark.parametrize("deck, rules, seed, where", [
    ("open", "prose", 0, "prose/tic_tac_toe.jsonl"), ("open", "prose", 3, "prose/seeds/tic_tac_toe.seed3.jsonl"),
    ("closed", "spec", 2, "closed/seeds/leduc_poker.seed2.jsonl"), ("open", "spec", 1, "seeds/tic_tac_toe.seed1.jsonl")],
    ids=["prose-seed0", "prose-seed3", "closed-seed2", "spec-seed1"])
def test_shipping_a_seed_puts_it_where_the_lookup_finds_it(deck, rules, seed, where, tmp_path, monkeypatch):
    work, real = tmp_path / "work", tmp_path / "recordings" / "real"
    work.mkdir()
    (work / "recording.jsonl").write_text(f'{{"seed": {seed}}}\n', encoding="utf-8")
    (work / "provenance.json").write_text(json.dumps({"seed": seed}), encoding="utf-8")
    game = "leduc_poker" if deck == "closed" else "tic_tac_toe"
    script("real_session")._ship(game, work, deck, rules, seed, real=real)
    assert (real / where).read_bytes() == (work / "recording.jsonl").read_bytes()
    assert json.loads((real / where).with_name(Path(where).stem + ".provenance.json").read_text()) == {"seed": seed}
    assert sorted(p.relative_to(real).as_posix() for p in real.rglob("*") if p.is_file()) == sorted(
        [where, str(Path(where).with_name(Path(where).stem + ".provenance.json"))])  # nothing else written or moved
    monkeypatch.setattr(recordings, "_root", lambda: tmp_path / "recordings")
    assert pipeline.recording_for(game, deck, rules, seed) == real / where
