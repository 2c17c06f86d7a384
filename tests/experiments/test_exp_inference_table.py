"""experiments/inference_table.py (Tables 1 and 2) on the smallest settings, offline: sessions recorded in the
test from the hand-written reference world models and inference functions (and a Leduc inference mutant), so
every number in the tables is measured, and games without a recording are rows saying so."""

from __future__ import annotations

import csv
import json
import sys
from pathlib import Path

import pytest

HERE = Path(__file__).resolve().parent
if str(HERE) not in sys.path:  # CI imports tests in importlib mode: their folder is not on the path
    sys.path.append(str(HERE))
from sessions import (  # noqa: E402
    LEDUC_INFERENCE,
    LEDUC_MODEL,
    QUADRANTO_INFERENCE,
    QUADRANTO_MODEL,
    record_closed,
    record_open,
)
from test_exp_validation import refused, script  # noqa: E402

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "data" / "reference"))
import leduc_poker_inference_mutants as mutants  # noqa: E402

SMALL = ["--num-test", "4", "--budget", "1", "--posterior-games", "4", "--posterior-states", "6",
         "--posterior-draws", "200", "--quiet"]
MISSING = ("bargaining", "gin_rummy", "hand_of_war")


@pytest.fixture(scope="module")
def recordings(tmp_path_factory) -> Path:
    """Open-deck sessions of Leduc and Quadranto, a closed-deck one of Leduc; none for the other three games."""
    folder = tmp_path_factory.mktemp("recordings")
    record_open(folder, "leduc_poker", LEDUC_MODEL.read_text(), LEDUC_INFERENCE.read_text())
    record_open(folder, "quadranto", QUADRANTO_MODEL.read_text(), QUADRANTO_INFERENCE.read_text())
    record_closed(folder, "leduc_poker", LEDUC_MODEL.read_text() + "\n\n" + LEDUC_INFERENCE.read_text())
    return folder


@pytest.fixture(scope="module")
def table1(recordings, tmp_path_factory) -> Path:
    out = tmp_path_factory.mktemp("table1") / "run"
    assert script("inference_table").main([*SMALL, "--recordings", str(recordings), "--out", str(out)]) == 0
    return out


def rows_of(out: Path) -> dict[str, dict]:
    return {r["game"]: r for r in json.loads((out / "table.json").read_text())["rows"]}


def test_table1_measures_the_reference_programs(table1):
    rows = rows_of(table1)
    for game in ("leduc_poker", "quadranto"):
        r = rows[game]
        assert (r["seeds"], r["transition_train"], r["transition_test"]) == (1, 1.0, 1.0)
        assert (r["inference_train"], r["inference_test"], r["posterior_accuracy"]) == (1.0, 1.0, 1.0)
        # a right belief: finite draws measure a small distance, whose interval holds zero
        assert r["posterior_lo"] == 0.0 and 0.0 < r["posterior_tv"] < 0.2 and r["posterior_hi"] > r["posterior_tv"]
        assert (r["world_model_calls_to_best"], r["inference_calls_to_best"], r["llm_calls"]) == (1, 1, 2)
    assert rows["leduc_poker"]["paper_inference_test_accuracy"] == 1.0
    report = json.loads((table1 / "open" / "leduc_poker-seed0" / "posterior.json").read_text())
    assert len(report["states"]) == 6 and report["draws"] == 200 and report["tv"] == rows["leduc_poker"]["posterior_tv"]
    # 200 draws at 6 states cannot see a small error: the table says how large one it could see
    assert rows["leduc_poker"]["posterior_detectable"] == report["detectable"] > 0.2
    line = next(x for x in (table1 / "table.md").read_text().splitlines() if x.startswith("| leduc_poker |"))
    r = rows["leduc_poker"]
    assert f"{r['posterior_tv']:.3f} [0.000, {r['posterior_hi']:.3f}], {report['detectable']:.3f} |" in line


def test_a_detectable_distance_sizes_the_draws_of_each_state(recordings, tmp_path):
    out = tmp_path / "run"
    argv = [*SMALL, "--games", "leduc_poker", "--posterior-detect", "0.2", "--recordings", str(recordings)]
    assert script("inference_table").main([*argv, "--out", str(out)]) == 0
    r = rows_of(out)["leduc_poker"]
    report = json.loads((out / "open" / "leduc_poker-seed0" / "posterior.json").read_text())
    assert all(s["draws"] > 200 and s["detectable"] <= 0.2 for s in report["states"])  # more draws, finer sight
    assert r["posterior_detectable"] == report["detectable"] <= 0.2 and r["posterior_tv"] < 0.1


def test_games_without_a_recording_are_rows_saying_so(table1, recordings):
    rows = rows_of(table1)
    md = (table1 / "table.md").read_text()
    for game in MISSING:
        assert rows[game]["status"] == "no recording" and rows[game]["inference_test"] is None
        assert rows[game]["recording"] == str(recordings / f"{game}.jsonl")
        assert f"| {game} | no recording (`{recordings / f'{game}.jsonl'}`) |" in md
    assert "| leduc_poker | 1 | 1.0000 | 1.0000 | 1.0000 | 1.0000 | " in md
    assert [r["game"] for r in csv.DictReader((table1 / "table.csv").open())] == [
        "bargaining", "leduc_poker", "gin_rummy", "quadranto", "hand_of_war"]


def test_record_and_resume(table1, recordings, capsys):
    record = json.loads((table1 / "record.json").read_text())
    assert record["experiment"] == "inference_table" and record["config"]["deck"] == "open"
    assert record["seeds"] == {g: [0] for g in ("bargaining", "leduc_poker", "gin_rummy", "quadranto", "hand_of_war")}
    assert {"synthesis/initial.md", "inference/initial.md"} <= set(record["prompt_hashes"])
    assert record["llm"]["models"] == ["scripted-leduc_poker", "scripted-quadranto"]
    run = table1 / "open" / "leduc_poker-seed0"
    before = {p: p.stat().st_mtime_ns for p in (run / "posterior.json", run / "row.json")}
    calls = sorted(p.name for p in (run / "inference" / "calls").iterdir())
    main = script("inference_table").main
    assert main([*SMALL, "--recordings", str(recordings), "--out", str(table1)]) == 0
    assert {p: p.stat().st_mtime_ns for p in before} == before  # the saved row, not a new posterior check
    assert sorted(p.name for p in (run / "inference" / "calls").iterdir()) == calls
    assert main([*SMALL, "--recordings", str(recordings), "--out", str(table1), "--posterior-draws", "50"]) == 2
    assert "holds a run with other settings (posterior differ)" in capsys.readouterr().err


@pytest.mark.parametrize("mutant", ["always_same_deal", "deals_card_twice"])
def test_a_wrong_inference_function_scores_lower(tmp_path, mutant):
    folder = tmp_path / "recordings"
    folder.mkdir()
    record_open(folder, "leduc_poker", LEDUC_MODEL.read_text(), mutants.source(mutant))
    out = tmp_path / "run"
    assert script("inference_table").main([*SMALL, "--games", "leduc_poker", "--recordings", str(folder),
                                           "--out", str(out)]) == 0
    r = rows_of(out)["leduc_poker"]
    assert r["transition_test"] == 1.0 and r["llm_calls"] == 2
    if mutant == "always_same_deal":  # every history replays: only the posterior sees the point-mass belief
        assert r["inference_train"] == r["inference_test"] == r["posterior_accuracy"] == 1.0
        assert r["posterior_lo"] > 0.3
    else:  # now and then a card dealt twice: reconstruction fails on some views, and draws are invalid
        assert r["inference_train"] < 1.0 and r["posterior_accuracy"] < 1.0 and r["posterior_lo"] > 0.0


def test_table2_closed_deck(recordings, tmp_path):
    out = tmp_path / "table2"
    argv = ["--deck", "closed", "--num-test", "3", "--budget", "1", "--recordings", str(recordings), "--quiet"]
    assert script("inference_table").main([*argv, "--out", str(out)]) == 0
    rows = rows_of(out)
    leduc = rows["leduc_poker"]
    assert (leduc["solved"], leduc["inference_train"], leduc["inference_test"], leduc["llm_calls"]) == (1, 1.0, 1.0, 1)
    assert leduc["paper_closed_inference_test_accuracy"] == 0.97
    (run,) = [r for r in json.loads((out / "table.json").read_text())["runs"] if r["game"] == "leduc_poker"]
    assert set(run["inference_by_type"]) == {"inference", "inference_terminal", "random_play"}
    assert all(rows[g]["status"] == "no recording" for g in (*MISSING, "quadranto"))
    md = (out / "table.md").read_text()
    assert "| leduc_poker | 1 | 1/1 | 1.0000 | 1.0000 | 1.0 | 1.0 | 0.97 |" in md
    assert f"| quadranto | no recording (`{recordings / 'closed' / 'quadranto.jsonl'}`) |" in md


def test_closed_deck_mutant_scores_lower(tmp_path):
    folder = tmp_path / "recordings"
    record_closed(folder, "leduc_poker", LEDUC_MODEL.read_text() + "\n\n" + mutants.source("ignores_observed_card"))
    out = tmp_path / "run"
    argv = ["--deck", "closed", "--games", "leduc_poker", "--num-test", "3", "--budget", "1", "--quiet"]
    assert script("inference_table").main([*argv, "--recordings", str(folder), "--out", str(out)]) == 0
    r = rows_of(out)["leduc_poker"]
    assert r["solved"] == 0 and r["inference_train"] < 0.9 and r["inference_test"] < 0.9


@pytest.mark.parametrize("flags, message", [
    (["--games", "tic_tac_toe"], "tic_tac_toe has perfect information"),
    (["--games", "leduc_poker", "--posterior-draws", "0"], "--posterior-draws must be at least 1, got 0"),
    (["--games", "leduc_poker", "--posterior-detect", "0"], "--posterior-detect must be a distance in (0, 1], got 0.0"),
    (["--games", "leduc_poker", "--budget", "0"], "leduc_poker: budget (--budget) must be a whole number"),
    (["--games", "leduc_poker", "--llm", "openai"], "needs an argument: 'openai:MODEL'"),
    (["--games", "leduc_poker", "--executor", "threads"], "unknown executor 'threads'"),
], ids=["perfect-information", "posterior-draws", "posterior-detect", "budget", "llm", "executor"])
def test_bad_flags_are_refused_before_writing(tmp_path, capsys, flags, message):
    assert message in refused("inference_table", flags, tmp_path / "o", capsys)


def test_the_shipped_recordings_prefer_a_real_session_to_a_scripted_demo(tmp_path):
    """With no --recordings the tables replay what ``cwm run`` replays: a real model's session where one
    ships (``real/``, ``real/closed/``), else the scripted demo; a folder given is taken as it is."""
    from experiments import imperfect

    shipped = imperfect.recordings_folder(None)
    for game in ("leduc_poker", "quadranto"):
        assert imperfect.recording_path(game, "open") == shipped / "real" / f"{game}.jsonl"
        assert imperfect.recording_path(game, "closed") == shipped / "real" / "closed" / f"{game}.jsonl"
        assert imperfect.recording_path(game, "open", str(shipped)) == shipped / f"{game}.jsonl"
    # every registered game ships a real session; a user's game ships none: the scripted folder's path
    assert imperfect.recording_path("kuhn_poker", "open") == shipped / "kuhn_poker.jsonl"
    assert not imperfect.recording_path("kuhn_poker", "open").exists()
    assert imperfect.recording_path("bargaining", "closed") == shipped / "real" / "closed" / "bargaining.jsonl"
