"""Both experiment scripts check every flag before they write anything: a bad value is one line on stderr,
exit status 2, and no run directory (so the corrected command can use the same ``--out``)."""

from __future__ import annotations

import importlib
import os
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
SCRIPTS = ("arena_figure", "synthesis_table")


def script(name: str):
    """An experiment script as a module (the repository root is appended, so the installed cwm still wins)."""
    if str(ROOT) not in sys.path:
        sys.path.append(str(ROOT))
    return importlib.import_module(f"experiments.{name}")


def refused(name: str, argv: list[str], out: Path, capsys) -> str:
    """Runs a script that must refuse ``argv``; its stderr, after checking it wrote nothing."""
    assert script(name).main([*argv, "--out", str(out), "--quiet"]) == 2
    err = capsys.readouterr().err
    assert err.startswith(f"{name}: error: ") and "Traceback" not in err and len(err.splitlines()) == 1
    assert not out.exists()
    return err


COUNTS = {  # flags -> the error; arena_figure refuses any --seeds but 1 with its own message (tested there)
    "matches": (["--matches", "0"], "tic_tac_toe: matches (--matches) must be a whole number of at least 1, got 0"),
    "sims": (["--sims", "0"], "tic_tac_toe: sims (--sims) must be a whole number of at least 1, got 0"),
    "rollouts": (["--rollouts", "0"], "tic_tac_toe: rollouts (--rollouts) must be a whole number of at least 1"),
    "seeds": (["--seeds", "0"], "tic_tac_toe: seeds (--seeds) must be a whole number of at least 1, got 0"),
    "budget": (["--budget", "0"], "tic_tac_toe: budget (--budget) must be a whole number of at least 1, got 0"),
    "num-train": (["--num-train", "0"], "tic_tac_toe: num_train (--num-train) must be a whole number of at least 1"),
    "train-pool": (["--train-pool", "0"], "tic_tac_toe: train_pool (--train-pool) must be a whole number of at least 1"),
    "test-transitions": (["--test-transitions", "0"],
                         "tic_tac_toe: test_transitions (--test-transitions) must be a whole number of at least 1"),
    "num-test": (["--num-test", "-1"], "tic_tac_toe: num_test (--num-test) must be a whole number of at least 0"),
    "first-seed": (["--first-seed", "-1"], "--first-seed must be at least 0, got -1"),
}
CASES = [(name, case) for name in SCRIPTS for case in COUNTS if (name, case) != ("arena_figure", "seeds")]


@pytest.mark.parametrize("name, case", CASES, ids=[f"{n}-{c}" for n, c in CASES])
def test_counts_below_their_least_value_are_refused(tmp_path, capsys, name, case):
    flags, message = COUNTS[case]
    err = refused(name, ["--games", "tic_tac_toe", "--executor", "inline", *flags], tmp_path / "o", capsys)
    assert message in err


@pytest.mark.parametrize("text, message", [
    ('{"game": "tic_tac_toe", "matches": "3"}', "matches (--matches) must be a whole number of at least 1, got '3'"),
    ('{"game": "tic_tac_toe", "test_mcts_simulations": 0}', "test_mcts_simulations must be a whole number"),
    ('{"game": "tic_tac_toe", "sims": true}', "sims (--sims) must be a whole number of at least 1, got True"),
    ('{"game": "tic_tac_toe", "num_test": "100"}', "num_test (--num-test) must be a whole number of at least 0"),
    ('{"game": "tic_tac_toe", "test_transitions": null}', "test_transitions (--test-transitions) must be a whole"),
], ids=["text-count", "no-flag-key", "bool-count", "text-games", "no-transitions"])
def test_config_file_counts_are_checked_too(tmp_path, capsys, text, message):
    path = tmp_path / "mine.json"
    path.write_text(text)
    assert message in refused("synthesis_table", ["--config", str(path)], tmp_path / "o", capsys)


def test_the_training_pool_reaches_the_synthesis_settings_of_every_script(tmp_path, monkeypatch):
    import argparse
    import types

    import cwm.synthesis
    from cwm.synthesis.settings import DEFAULT_TRAIN_POOL

    common, arena_figure, imperfect = script("common"), script("arena_figure"), script("imperfect")
    synthesis_table = script("synthesis_table")
    parser = argparse.ArgumentParser()
    common.add_common_args(parser, default_executor="inline")
    default, = common.game_configs(parser.parse_args(["--games", "tic_tac_toe"]), ())
    assert default.train_pool == DEFAULT_TRAIN_POOL  # the library's default unless a flag or config says
    leduc, = common.game_configs(parser.parse_args(["--games", "leduc_poker", "--train-pool", "2"]), ())
    seen = []

    class Stop(Exception):
        pass

    def capture(game, client, settings, **kwargs):
        seen.append(settings.train_pool)
        raise Stop

    monkeypatch.setattr(cwm.synthesis, "synthesize_world_model", capture)
    monkeypatch.setattr(cwm.synthesis, "synthesize_inference", capture)
    from cwm.pipeline import recording_for

    llm = f"replay:{recording_for('tic_tac_toe')}"
    with pytest.raises(Stop):
        arena_figure._world_model(leduc, types.SimpleNamespace(seed=0, cache=None), tmp_path / "w", llm)
    with pytest.raises(Stop):
        imperfect.synthesize_inference(leduc, seed=0, llm=llm, run_dir=tmp_path / "i", deck="open",
                                       world_model=None, cache=None)
    with pytest.raises(Stop):
        synthesis_table.synthesize(synthesis_table.SynthesisJob(leduc, 0, llm, str(tmp_path / "t")))
    assert seen == [2, 2, 2]


@pytest.fixture(scope="module")
def ttt_bundle(tmp_path_factory) -> Path:
    """A tic-tac-toe bundle of the hand-written reference model (a test fixture, not LLM output)."""
    from cwm import bundle
    from cwm.games import trajectories

    source = (ROOT / "tests" / "data" / "reference" / "tic_tac_toe_model.py").read_text()
    out = tmp_path_factory.mktemp("bundles") / "ttt"
    return bundle.export_bundle(out, game="tic_tac_toe", model_source=source,
                                train=trajectories.collect("tic_tac_toe", 2, seed=0))


@pytest.fixture
def no_api_key(monkeypatch):
    from cwm import pipeline

    for var in pipeline.API_KEY_VARS:
        monkeypatch.delenv(var, raising=False)


@pytest.mark.parametrize("name", SCRIPTS)
def test_a_game_without_an_llm_fails_before_writing(tmp_path, capsys, no_api_key, backgammon_unrecorded, name):
    err = refused(name, ["--games", "backgammon", "--seeds", "1"], tmp_path / "bg", capsys)
    assert "no LLM for 'backgammon': set GEMINI_API_KEY" in err


@pytest.mark.parametrize("name", SCRIPTS)
@pytest.mark.parametrize("flags, message", [
    (["--llm", "replay:/nonexistent/session.jsonl"], "--llm for tic_tac_toe 'replay:/nonexistent/session.jsonl': "),
    (["--llm", "claude"], "unknown LLM spec 'claude'"),
    (["--llm", "openai"], "needs an argument: 'openai:MODEL'"),
    (["--executor", "threads"], "unknown executor 'threads'"),
], ids=["missing-replay", "unknown-provider", "openai-without-model", "unknown-executor"])
def test_llm_and_executor_are_checked_before_writing(tmp_path, capsys, no_api_key, name, flags, message):
    assert message in refused(name, ["--games", "tic_tac_toe", "--seeds", "1", *flags], tmp_path / "o", capsys)


def test_synthesis_table_concurrency_is_checked(tmp_path, capsys):
    err = refused("synthesis_table", ["--games", "tic_tac_toe", "--concurrency", "0"], tmp_path / "o", capsys)
    assert "--concurrency must be at least 1, got 0" in err


def test_the_corrected_command_reuses_the_same_out(tmp_path, capsys, no_api_key):
    out = tmp_path / "fig"
    tiny = ["--games", "tic_tac_toe", "--matches", "1", "--sims", "10", "--rollouts", "1", "--num-test", "0",
            "--executor", "inline"]
    refused("arena_figure", [*tiny, "--llm", "replay:/nonexistent/session.jsonl"], out, capsys)
    assert script("arena_figure").main([*tiny, "--llm", "auto", "--out", str(out), "--quiet"]) == 0
    assert (out / "record.json").is_file()


def _tampered(ttt_bundle: Path, tmp_path: Path) -> Path:
    import shutil

    copy = Path(shutil.copytree(ttt_bundle, tmp_path / "edited"))
    (copy / "model.py").write_text((copy / "model.py").read_text() + "\n# edited\n")
    return copy


ARENA_CASES = [
    ("not-asked", "--bundles names connect_four, which is not among the games ['tic_tac_toe']"),
    ("twice", "--bundles names tic_tac_toe twice"),
    ("edited", "model.py does not match its hash in manifest.json"),
    ("other-game", "the bundle is of 'tic_tac_toe', not 'connect_four'"),
    ("imperfect-llm", "--llm for leduc_poker 'openai:some-model': the OpenAI API needs a key"),
    ("move-time-limit", "--move-time-limit must be above 0 seconds, got 0.0"),
    ("direct-llm", "--direct-llm 'gemini': Gemini needs an API key"),
]


@pytest.mark.parametrize("case, message", ARENA_CASES, ids=[case for case, _ in ARENA_CASES])
def test_arena_inputs_are_checked_before_writing(tmp_path, capsys, no_api_key, ttt_bundle, case, message):
    flags = {
        "not-asked": ["--games", "tic_tac_toe", "--bundles", f"connect_four={ttt_bundle}"],
        "twice": ["--games", "tic_tac_toe", "--bundles", f"tic_tac_toe={ttt_bundle}",
                  "--bundles", f"tic_tac_toe={ttt_bundle}"],
        "edited": ["--games", "tic_tac_toe", "--bundles", f"tic_tac_toe={_tampered(ttt_bundle, tmp_path)}"],
        "other-game": ["--games", "connect_four", "--bundles", f"connect_four={ttt_bundle}"],
        "imperfect-llm": ["--games", "leduc_poker", "--llm", "openai:some-model"],
        "move-time-limit": ["--games", "tic_tac_toe", "--move-time-limit", "0"],
        "direct-llm": ["--games", "tic_tac_toe", "--direct-llm", "gemini"],
    }[case]
    assert message in refused("arena_figure", flags, tmp_path / "o", capsys)


LLM_ENVIRONMENT = ("GEMINI_API_KEY", "GOOGLE_API_KEY", "OPENAI_API_KEY", "OPENAI_BASE_URL")


@pytest.fixture(scope="module")
def keys_at_module_setup() -> dict[str, str]:
    """The LLM variables a module-scoped fixture (like the ones that run whole experiments) sees."""
    return {var: os.environ[var] for var in LLM_ENVIRONMENT if var in os.environ}


def test_no_llm_key_reaches_these_tests(keys_at_module_setup):
    # tests/experiments/conftest.py clears them, even when the developer's shell has a key set
    from cwm import pipeline

    assert set(pipeline.API_KEY_VARS) <= set(LLM_ENVIRONMENT)
    assert keys_at_module_setup == {}
    assert not any(os.environ.get(var) for var in LLM_ENVIRONMENT)
    assert pipeline.resolve_llm("auto", "tic_tac_toe").startswith("replay:")
