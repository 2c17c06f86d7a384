"""experiments/synthesis_table.py end to end on the smallest settings, offline (the recorded session)."""

from __future__ import annotations

import csv
import importlib
import json
import math
import sys
from pathlib import Path

import pytest

import prompts
from cwm import games, pipeline

ROOT = Path(__file__).resolve().parents[2]
CONFIGS = sorted((ROOT / "experiments" / "configs").glob("*.json"))


def script(name: str):
    """An experiment script as a module (the repository root is appended, so the installed cwm still wins)."""
    if str(ROOT) not in sys.path:
        sys.path.append(str(ROOT))
    return importlib.import_module(f"experiments.{name}")


def recording() -> str:
    """The scripted tic-tac-toe demo (three replies: a buggy program, a partial fix, a correct one)."""
    path = pipeline.recording_for("tic_tac_toe")
    assert path is not None
    return f"replay:{path.parent.parent / path.name if path.parent.name == 'real' else path}"


TINY = ["--games", "tic_tac_toe", "--seeds", "1", "--num-test", "4", "--budget", "10", "--quiet"]


@pytest.fixture(scope="module")
def table_run(tmp_path_factory) -> Path:
    out = tmp_path_factory.mktemp("table") / "run"
    assert script("synthesis_table").main([*TINY, "--llm", recording(), "--out", str(out)]) == 0
    return out


def test_record_holds_config_llm_prompt_hashes_seeds_commit_and_results(table_run):
    record = json.loads((table_run / "record.json").read_text())
    assert record["experiment"] == "synthesis_table" and record["id"] == "run"
    (game,) = record["config"]["games"]
    assert (game["game"], game["num_test"], game["budget"], game["num_train"], game["strategy"]) == (
        "tic_tac_toe", 4, 10, 5, "tree")
    assert record["llm"]["models"] == ["scripted-tic-tac-toe"]
    assert record["llm"]["request"]["temperature"] == 1.0 and record["llm"]["tree"]["c"] == 5.0
    assert record["prompt_hashes"]["synthesis/initial.md"] == prompts.prompt_hash("synthesis/initial.md")
    assert record["seeds"] == {"tic_tac_toe": [0]}
    assert record["git_commit"] == "unknown" or len(record["git_commit"]) == 40
    assert record["command"][0] == "experiments/synthesis_table.py" and "--seeds" in record["command"]
    (row,) = record["results"]["rows"]
    assert (row["game"], row["seeds"], row["solved"]) == ("tic_tac_toe", 1, 1)
    assert row["train_accuracy"] == 1.0 and row["test_accuracy"] == 1.0
    # the scripted session needs three replies (buggy, partial fix, correct): all three calls count
    assert row["calls_to_best"] == 3 and row["llm_calls"] == 3
    assert row["paper_llm_calls"] == 2.0 and row["paper_test_accuracy"] == 1.0
    (run,) = record["results"]["runs"]
    assert Path(run["run_dir"], "result.json").is_file() and run["seed"] == 0


def test_tables_in_markdown_json_and_csv(table_run):
    md = (table_run / "table.md").read_text()
    assert "| game | seeds | solved | train acc. | test acc. | LLM calls to reach |" in md
    assert "| tic_tac_toe | 1 | 1/1 | 1.0000 | 1.0000 | 3.0 | 3.0 | 0.00 | 1 / 1 / 2 |" in md
    rows = list(csv.DictReader((table_run / "table.csv").open()))
    assert [(r["game"], float(r["train_accuracy"]), float(r["calls_to_best"])) for r in rows] == [
        ("tic_tac_toe", 1.0, 3.0)]
    runs = list(csv.DictReader((table_run / "runs.csv").open()))
    assert [(r["game"], r["seed"], r["model"]) for r in runs] == [("tic_tac_toe", "0", "scripted-tic-tac-toe")]
    assert json.loads((table_run / "table.json").read_text())["rows"][0]["test_accuracy"] == 1.0
    assert "- tic_tac_toe: scripted demo (hand-written replies)" in md


def test_a_perfect_held_out_accuracy_is_printed_with_the_error_rate_its_checks_bound(table_run):
    (run,) = json.loads((table_run / "record.json").read_text())["results"]["runs"]
    checked = json.loads((Path(run["run_dir"]) / "test_report.json").read_text())["report"]["transitions_total"]
    assert run["test_accuracy"] == 1.0 and run["test_checked"] == checked > 0
    md = (table_run / "table.md").read_text()
    bound = next(line for line in md.splitlines() if line.startswith("- tic_tac_toe, seed 0: held-out (0 of "))
    assert bound.startswith(f"- tic_tac_toe, seed 0: held-out (0 of {checked:,} wrong: error rate < ") and "at 95%" in bound
    assert float(bound.split("< ")[1].split(" ")[0]) == pytest.approx(math.log(20) / checked, rel=0.02)
    games = len((Path(run["run_dir"]) / "test.jsonl").read_text().splitlines())
    assert run["test_games"] == games > 0  # and per game, the bound that needs only independent games
    per_game = bound.split(f"0 of {games} games wrong: < ")[1].split(" ")[0]
    assert float(per_game) == pytest.approx(math.log(20) / games, rel=0.02) and float(per_game) > math.log(20) / checked
    summary = (Path(run["run_dir"]) / "summary.md").read_text()
    assert f"train 1.0000, test 1.0000 (0 of {checked:,} wrong" in summary  # training was selected for: no bound
    assert f"0 of {games} games wrong" in summary


def test_a_real_model_session_says_who_answered_it(tmp_path):
    real = pipeline.recording_for("tic_tac_toe")
    assert real is not None and real.parent.name == "real"
    out = tmp_path / "real"
    assert script("synthesis_table").main([*TINY, "--llm", f"replay:{real}", "--out", str(out)]) == 0
    md = (out / "table.md").read_text()
    answered_by = pipeline.recording_provenance(real)["answered_by"]
    assert f"- tic_tac_toe: real model: {answered_by}, " in md
    assert "| tic_tac_toe | 1 | 1/1 | 1.0000 | 1.0000 | 1.0 | 1.0 | 0.00 | 1 / 1 / 2 |" in md


def test_rerun_resumes_without_new_calls_and_other_settings_are_refused(table_run, capsys):
    calls = sorted(p.name for p in (table_run / "synthesis" / "tic_tac_toe-seed0" / "calls").iterdir())
    main = script("synthesis_table").main
    assert main([*TINY, "--llm", recording(), "--out", str(table_run)]) == 0
    assert sorted(p.name for p in (table_run / "synthesis" / "tic_tac_toe-seed0" / "calls").iterdir()) == calls
    assert main([*TINY, "--llm", recording(), "--out", str(table_run), "--num-test", "6"]) == 2
    assert "holds a run with other settings (games differ)" in capsys.readouterr().err


def test_auto_llm_without_a_key_or_a_recording_fails_before_writing(tmp_path, monkeypatch, capsys,
                                                                   backgammon_unrecorded):
    for var in pipeline.API_KEY_VARS:
        monkeypatch.delenv(var, raising=False)
    main = script("synthesis_table").main
    assert main(["--games", "backgammon", "--seeds", "1", "--out", str(tmp_path / "bg"), "--quiet"]) == 2
    err = capsys.readouterr().err
    assert "set GEMINI_API_KEY" in err and "Traceback" not in err
    assert not (tmp_path / "bg").exists()


@pytest.mark.parametrize("path", CONFIGS, ids=[p.stem for p in CONFIGS])
def test_each_shipped_config_loads_and_names_its_registered_game(path):
    common = script("common")
    config = common.load_game_config(path)
    assert games.resolve(config.game).name == path.stem
    assert (config.num_train, config.budget, config.strategy) == (5, 500, "tree")
    # held-out sets sized by transitions (the paper's 10,000), MCTS share at the library's per-game default
    assert (config.test_transitions, config.num_test, config.test_mcts_simulations) == (10_000, None, None)
    assert (config.seeds, config.matches, config.sims, config.rollouts) == (5, 50, 1000, 10)
    assert config.paper["llm_calls"] is not None


def test_every_paper_game_has_a_config():
    common = script("common")
    assert sorted(p.stem for p in CONFIGS) == sorted(
        common.PERFECT_INFORMATION_GAMES + common.IMPERFECT_INFORMATION_GAMES)


def test_config_flag_and_overrides(tmp_path):
    common = script("common")
    parser = script("synthesis_table").parser()
    args = parser.parse_args(["--config", str(ROOT / "experiments/configs/connect_four.json"), "--games",
                              "tic_tac_toe", "--budget", "7", "--sims", "20"])
    configs = common.game_configs(args, common.PERFECT_INFORMATION_GAMES)
    assert [(c.game, c.budget, c.sims, c.test_transitions, c.num_test) for c in configs] == [
        ("connect_four", 7, 20, 10_000, None), ("tic_tac_toe", 7, 20, 10_000, None)]
    default = common.game_configs(parser.parse_args([]), common.PERFECT_INFORMATION_GAMES)
    assert [c.game for c in default] == list(common.PERFECT_INFORMATION_GAMES)


@pytest.mark.parametrize("text, message", [
    ('{"game": "tic_tac_toe", "budgett": 3}', "unknown key(s) ['budgett']"),
    ('{"budget": 3}', "at least a 'game' key"),
    ("{not json", "not valid JSON"),
], ids=["misspelt-key", "no-game", "not-json"])
def test_bad_config_files_are_named_errors(tmp_path, capsys, text, message):
    path = tmp_path / "bad.json"
    path.write_text(text)
    assert script("synthesis_table").main(["--config", str(path), "--out", str(tmp_path / "o")]) == 2
    err = capsys.readouterr().err
    assert message in err and str(path) in err


def _curve(*points):
    from cwm.synthesis import CurvePoint

    return tuple(CurvePoint(calls, rate, rate) for calls, rate in points)


@pytest.mark.parametrize("points, best, calls, expected", [
    (((1, 0.5), (2, 0.9), (3, 0.9), (4, 0.9)), 0.9, 4, 2),  # found at call 2, budget spent after
    (((1, 1.0),), 1.0, 1, 1),                                # solved at once
    (((1, 0.0), (2, 0.0)), 0.0, 2, 1),                        # nothing usable: the first call
    ((), 0.0, 3, 3),                                          # no curve: every call
], ids=["later-calls-no-better", "first-call", "never-usable", "no-curve"])
def test_calls_to_best_counts_calls_until_the_best_program(points, best, calls, expected):
    from types import SimpleNamespace

    result = SimpleNamespace(curve=_curve(*points), train_pass_rate=best, llm_calls=calls)
    assert script("synthesis_table").calls_to_best(result) == expected


def test_rows_are_means_over_seeds_with_deviation():
    mod, common = script("synthesis_table"), script("common")
    runs = [{"config_game": "connect_four", "game": "connect_four", "solved": s, "train_accuracy": tr,
             "test_accuracy": te, "calls_to_best": c, "llm_calls": n, "cost_usd": 0.5}
            for s, tr, te, c, n in [(True, 1.0, 0.99, 2, 2), (False, 0.9, None, 9, 10), (True, 1.0, 0.97, 4, 4)]]
    (row,) = mod.table_rows(runs, [common.GameConfig("connect_four", paper={"llm_calls": 2.0})])
    assert (row["seeds"], row["solved"], row["calls_to_best"], row["llm_calls"]) == (3, 2, 5.0, 16 / 3)
    assert row["train_accuracy"] == pytest.approx(2.9 / 3) and row["test_accuracy"] == pytest.approx(0.98)
    assert row["calls_to_best_sd"] == pytest.approx(3.605551, rel=1e-6) and row["paper_llm_calls"] == 2.0
    md = mod.markdown([row], llm="gemini")
    assert "| connect_four | 3 | 2/3 | 0.9667 ± 0.0577 | 0.9800 ± 0.0141 | 5.0 ± 3.6 |" in md
    assert "| — / — / 2 |" in md
    assert "held-out (0 of" not in md  # no program with a perfect held-out accuracy


def test_the_held_out_bound_is_per_program_and_only_for_a_perfect_one():
    mod, common = script("synthesis_table"), script("common")
    runs = [{"config_game": "connect_four", "game": "connect_four", "seed": seed, "solved": True, "train_accuracy": 1.0,
             "test_accuracy": test, "test_checked": checked, "calls_to_best": 1, "llm_calls": 1, "cost_usd": 0.0}
            for seed, test, checked in [(0, 1.0, 300), (1, 0.99, 300), (2, 1.0, 600)]]
    runs[2]["test_games"] = 30  # seed 2 counted its held-out games; the others are from before they were counted
    md = mod.markdown(mod.table_rows(runs, [common.GameConfig("connect_four")]), llm="gemini")
    bounds = [line for line in md.splitlines() if "held-out (0 of" in line]
    assert bounds == ["- connect_four, seed 0: held-out (0 of 300 wrong: error rate < 0.01 at 95%)",
                      "- connect_four, seed 2: held-out (0 of 600 wrong: error rate < 0.005 per check if checks fail "
                      "independently; 0 of 30 games wrong: < 0.1 per game; at 95%)"]


def test_runs_size_their_held_out_set_by_the_configs_transitions(tmp_path, monkeypatch):
    """No --num-test: the run's held-out set is sized by test_transitions (config or flag), from the cache."""
    monkeypatch.setenv("CWM_CACHE_DIR", str(tmp_path / "cache"))
    out = tmp_path / "run"
    argv = ["--games", "tic_tac_toe", "--seeds", "1", "--budget", "10", "--quiet", "--llm", recording(),
            "--test-transitions", "60", "--out", str(out)]
    assert script("synthesis_table").main(argv) == 0
    (game,) = json.loads((out / "record.json").read_text())["config"]["games"]
    assert (game["test_transitions"], game["num_test"]) == (60, None)
    lines = (out / "synthesis" / "tic_tac_toe-seed0" / "test.jsonl").read_text().splitlines()
    steps = sum(len(json.loads(line)["steps"]) for line in lines)
    assert 60 <= steps < 60 + 2 * 9  # the shortest prefix of games per share reaching its half
    assert list((tmp_path / "cache").rglob("*")), "the held-out set was not shared through the cache"
