"""experiments/arena_figure.py end to end on the smallest settings: a bundle synthesized offline (the recorded
session), a given bundle, and the direct LLM policy on a fake OpenAI-compatible server on 127.0.0.1."""

from __future__ import annotations

import csv
import importlib
import json
import shutil
import sys
from pathlib import Path

import pytest

from cwm import pipeline
from cwm.arena.types import MatchResult
from cwm.llm.fakes import FakeOpenAI

ROOT = Path(__file__).resolve().parents[2]
TINY = ["--games", "tic_tac_toe", "--matches", "3", "--sims", "50", "--rollouts", "2", "--num-test", "2",
        "--executor", "inline", "--quiet"]


def script(name: str):
    """An experiment script as a module (the repository root is appended, so the installed cwm still wins)."""
    if str(ROOT) not in sys.path:
        sys.path.append(str(ROOT))
    return importlib.import_module(f"experiments.{name}")


@pytest.fixture(scope="module")
def synthesized_run(tmp_path_factory) -> Path:
    """A figure run that synthesizes its bundle with ``--llm auto`` and no API key: the recorded session."""
    out = tmp_path_factory.mktemp("figure") / "fig"
    with pytest.MonkeyPatch.context() as mp:
        for var in pipeline.API_KEY_VARS:
            mp.delenv(var, raising=False)
        assert script("arena_figure").main([*TINY, "--out", str(out)]) == 0
    return out


def test_synthesized_bundle_plays_random_and_ground_truth(synthesized_run):
    out = synthesized_run
    record = json.loads((out / "record.json").read_text())
    assert record["experiment"] == "arena_figure" and record["seeds"] == {"tic_tac_toe": [0]}
    answered_by = pipeline.recording_provenance(pipeline.recording_for("tic_tac_toe"))["answered_by"]
    assert record["llm"]["synthesis"] == {"tic_tac_toe": answered_by}  # the shipped real-model session
    assert record["llm"]["direct_policy"] is None and record["llm"]["synthesis_request"]["temperature"] == 1.0
    assert "synthesis/initial.md" in record["prompt_hashes"]["synthesis:tic_tac_toe"]
    assert record["git_commit"] == "unknown" or len(record["git_commit"]) == 40
    bundle = record["results"]["bundles"]["tic_tac_toe"]
    assert bundle["path"] == str((out / "tic_tac_toe" / "bundle").resolve()) and bundle["train_accuracy"] == 1.0
    assert bundle["provenance_hash"] == "matches its hash" and "not vouched for" not in (out / "arena.md").read_text()
    rows = record["results"]["rows"]
    assert [(r["game"], r["opponent"], r["matches"]) for r in rows] == [
        ("tic_tac_toe", "random", 6), ("tic_tac_toe", "gt-mcts", 6)]
    vs_random = rows[0]
    assert vs_random["wins"] > vs_random["losses"] and vs_random["forfeit_rate"] == 0.0
    assert all(r["agent"] == "cwm" for r in rows)  # a name, not the machine's path to the bundle
    assert len((out / "tic_tac_toe" / "arena" / "matches.jsonl").read_text().splitlines()) == 12


def test_combined_table_csv_and_plot(synthesized_run):
    out = synthesized_run
    md = (out / "arena.md").read_text()
    assert "| game | opponent | n | CWM win [95% CI] | draw | loss |" in md
    assert "| tic_tac_toe | random | 6 |" in md and "| tic_tac_toe | gt-mcts | 6 |" in md
    assert [r["opponent"] for r in csv.DictReader((out / "arena.csv").open())] == ["random", "gt-mcts"]
    assert (out / "arena.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    assert (out / "tic_tac_toe" / "arena" / "results.md").is_file()
    rows = json.loads((out / "arena.json").read_text())["rows"]
    assert all(r["paired"]["matches"] == r["matches"] and r["paired"]["pairs"] * 2 == r["matches"] for r in rows)
    assert "## Paired comparisons" in md and all(r["paired"]["verdict"] in md for r in rows)


def test_the_report_ranks_every_agent_across_games_with_intervals(synthesized_run):
    out = synthesized_run
    board = json.loads((out / "arena.json").read_text())["leaderboard"]
    assert {r["agent"] for r in board} == {"cwm", "random", "gt-mcts"}
    assert all(r["rating_lo"] <= r["rating"] <= r["rating_hi"] and r["games"] == ["tic_tac_toe"] for r in board)
    assert [r["rating"] for r in board] == sorted((r["rating"] for r in board), reverse=True)
    assert board[-1]["agent"] == "random"  # the CWM agent beats it (above); gt-mcts plays ttt near perfectly
    assert json.loads((out / "record.json").read_text())["results"]["leaderboard"] == board
    md = (out / "arena.md").read_text()
    assert "## Leaderboard across games" in md
    for i, r in enumerate(board, 1):
        assert (f"| {i} | {r['agent']} | {r['ahead']} / {r['behind']} | - | {r['rating']:.0f} [{r['rating_lo']:.0f}, "
                f"{r['rating_hi']:.0f}] | tic_tac_toe |") in md


def test_the_leaderboard_weighs_each_game_equally_and_lists_the_games_played():
    report = script("figure_report")

    def matches(game_a: str, game_b: str, n: int, a_wins: int) -> list[MatchResult]:
        return [MatchResult(f"{game_a}{i}", (game_a, game_b), i, (1.0, -1.0) if i < a_wins else (-1.0, 1.0))
                for i in range(n)]

    by_game = {"big": matches("x", "y", 200, 190), "small": matches("y", "x", 10, 10) + matches("z", "y", 4, 2)}
    board = {r["agent"]: r for r in report.leaderboard(by_game, bootstrap=20)}
    assert board["z"]["games"] == ["small"] and board["x"]["games"] == ["big", "small"]
    # x and y are compared over both games they played, each weighing the same; z only over the small one
    h2h = {p["opponent"]: p for p in board["x"]["head_to_head"]}
    assert h2h["y"]["games"] == ["big", "small"] and h2h["z"]["games"] == ["small"]
    assert board["x"]["rated_on"] == ["small"]  # the one game every agent played
    assert board["y"]["rating"] > board["x"]["rating"]  # y won all ten of it
    assert all(r["rating_lo"] <= r["rating"] <= r["rating_hi"] for r in board.values())


def test_given_bundle_against_the_direct_llm_policy(synthesized_run, tmp_path, monkeypatch):
    bundle = synthesized_run / "tic_tac_toe" / "bundle"
    out = tmp_path / "with-llm"
    # A policy that always answers the centre: legal once for x, never for o, so it forfeits every match.
    with FakeOpenAI(default="The centre is strongest.\nACTION: x(1,1)") as server:
        monkeypatch.setenv("OPENAI_BASE_URL", server.base_url)
        monkeypatch.setenv("OPENAI_API_KEY", "fake-key")
        argv = [*TINY, "--matches", "2", "--bundles", f"tic_tac_toe={bundle}", "--direct-llm", "openai:local-model",
                "--out", str(out), "--llm", "replay:/nonexistent"]  # the given bundle means no synthesis
        assert script("arena_figure").main(argv) == 0
        assert server.request_count >= 4 * 4  # each forfeit: the answer and 3 rethink prompts
    record = json.loads((out / "record.json").read_text())
    assert not (out / "tic_tac_toe" / "synthesis").exists()
    assert record["config"]["bundles"] == [["tic_tac_toe", str(bundle.resolve())]]
    assert record["llm"]["direct_policy"]["spec"] == "openai:local-model"
    assert "policy/step.md" in record["prompt_hashes"]["direct_policy"]
    vs_llm = record["results"]["rows"][-1]
    assert vs_llm["opponent"] == "llm:openai:local-model" and vs_llm["matches"] == 4
    assert vs_llm["opponent_forfeits"] == 4 and vs_llm["win_rate"] == 1.0
    assert "| tic_tac_toe | llm:openai:local-model | 4 |" in (out / "arena.md").read_text()


@pytest.mark.parametrize("extra, message", [
    (["--seeds", "3"], "one bundle per game"),
    (["--bundles", "tic_tac_toe"], "expected GAME=PATH"),
    (["--bundles", "tic_tac_toe=/nonexistent/bundle"], "is not a bundle directory"),
], ids=["several-seeds", "bundle-without-path", "bundle-missing"])
def test_bad_flags_are_named_errors(tmp_path, capsys, extra, message):
    assert script("arena_figure").main([*TINY, "--out", str(tmp_path / "o"), *extra]) == 2
    err = capsys.readouterr().err
    assert message in err and "Traceback" not in err


@pytest.mark.parametrize("game, expected", [
    ("tic_tac_toe", ["random", "gt-mcts"]),
    ("backgammon", ["random", "gt-mcts"]),
    ("leduc_poker", ["random", "gt-ismcts", "llm:gemini"]),
    ("hand_of_war", ["random", "gt-ismcts", "llm:gemini"]),
], ids=["tic_tac_toe", "backgammon", "leduc_poker", "hand_of_war"])
def test_ground_truth_opponent_follows_the_information_type(game, expected):
    direct = "gemini" if len(expected) == 3 else None
    assert script("arena_figure").opponents(game, direct) == expected


def test_a_moved_figure_run_resumes_without_replaying(synthesized_run, tmp_path):
    """Moved, and played when the CWM agent had another label (its absolute bundle path): matches are
    found by content, so none is played again and the file is not rewritten."""
    a = tmp_path / "A"
    shutil.copytree(synthesized_run, a)
    path = a / "tic_tac_toe" / "arena" / "matches.jsonl"
    (a / "tic_tac_toe" / "arena" / "labels.json").unlink()
    old_label = f"cwm:{(a / 'tic_tac_toe' / 'bundle').resolve()}"
    rows = [json.loads(line) for line in path.read_text().splitlines()]
    for r in rows:
        r["seats"] = [old_label if s == "cwm" else s for s in r["seats"]]
    matches = "".join(json.dumps(r) + "\n" for r in rows)
    path.write_text(matches)
    b = tmp_path / "elsewhere" / "B"
    shutil.move(a, b)
    assert script("arena_figure").main([*TINY, "--out", str(b)]) == 0  # config.json still says --out A
    assert (b / "tic_tac_toe" / "arena" / "matches.jsonl").read_text() == matches
    rows = json.loads((b / "record.json").read_text())["results"]["rows"]
    assert [(r["agent"], r["opponent"], r["matches"]) for r in rows] == [
        ("cwm", "random", 6), ("cwm", "gt-mcts", 6)]
    assert str(tmp_path) not in (b / "arena.md").read_text() + (b / "arena.csv").read_text()


def test_the_paper_protocol_selects_among_syntheses_and_reports_each(tmp_path, monkeypatch):
    # three syntheses of tic-tac-toe (an OpenAI-compatible fake on 127.0.0.1 answers every prompt with the
    # hand-written reference model), sample rejection among them, a surviving model drawn per match
    model = (ROOT / "tests" / "data" / "reference" / "tic_tac_toe_model.py").read_text()
    out = tmp_path / "paper"
    with FakeOpenAI(default=f"```python\n{model}\n```") as server:
        monkeypatch.setenv("OPENAI_BASE_URL", server.base_url)
        monkeypatch.setenv("OPENAI_API_KEY", "fake-key")
        argv = [*TINY, "--matches", "2", "--num-test", "0", "--protocol", "paper", "--seeds", "3",
                "--select-games", "1", "--llm", "openai:local-model", "--out", str(out)]
        assert script("arena_figure").main(argv) == 0
        assert server.request_count == 3  # one call per synthesis
    game = out / "tic_tac_toe"
    assert sorted(p.name for p in (game / "syntheses").iterdir()) == ["seed0", "seed1", "seed2"]
    selection = json.loads((game / "selection" / "selection.json").read_text())
    assert len(selection["agents"]) == 3
    record = json.loads((out / "record.json").read_text())
    rows = record["results"]["rows"]
    syntheses = rows[0]["syntheses"]
    assert [s["seed"] for s in syntheses] == [0, 1, 2]
    kept = {Path(a["path"]).resolve() for a in selection["agents"] if a["survived"]}
    assert [s["survived"] for s in syntheses] == [Path(s["bundle"]).resolve() in kept for s in syntheses]
    drawn = sum(sum(c.values()) for s in syntheses for c in s["matches"].values())
    assert drawn == sum(r["matches"] for r in rows)  # every match names the synthesis it drew ...
    assert all(s["survived"] for s in syntheses if s["matches"])  # ... and only survivors are drawn
    text = (out / "arena.md").read_text()
    assert "## Syntheses (the paper's protocol)" in text and "| 2 |" in text


def test_the_paper_protocol_refuses_given_bundles_and_one_seed(tmp_path):
    figure = script("arena_figure")
    assert figure.main([*TINY, "--protocol", "paper", "--bundles", f"tic_tac_toe={tmp_path}",
                        "--out", str(tmp_path / "a")]) == 2
    assert figure.main([*TINY, "--protocol", "paper", "--seeds", "1", "--out", str(tmp_path / "b")]) == 2
