"""experiments/team_figure.py on tiny Hanabi (two moves a game): a direct-LLM team recorded through the batch
relay as the real Hanabi team is (`cwm arena ... --self-play` between rounds of answers), its answers written by
a HAND-WRITTEN answerer standing in for the model (it names the player's first action, after one illegal answer
per game), shipped into a temporary folder, and replayed offline to the same team scores beside the other teams
on the same deals; a shipped session missing a reply is refused in one line."""

from __future__ import annotations

import hashlib
import importlib
import json
import re
import shutil
import sys
from pathlib import Path

import pytest

from cwm.cli import EXIT_WAITING
from cwm.cli import main as cwm_main
from cwm.llm.batch_texts import export_pending, import_answers

ROOT = Path(__file__).resolve().parents[2]
ANSWERED_BY = "first-action answerer (hand-written for a test, not a model)"
REPLAY = ["--games", "tiny_hanabi", "--num-test", "0", "--executor", "local:2", "--quiet", "--yes"]


def script():
    if str(ROOT) not in sys.path:
        sys.path.append(str(ROOT))
    return importlib.import_module("experiments.team_figure")


def answer(prompt: str) -> str:
    """Hand-written: a first prompt of player 0 gets an action that does not exist (so the agent's rethink
    and the illegal count are exercised); every other prompt names the player's first action."""
    player = int(re.findall(r"You are player (\d)", prompt)[0])
    if player == 0 and "## assistant" not in prompt:
        return "I signal with my best card.\nACTION: p0a9"
    return f"I play my first option.\nACTION: p{player}a0"


def record(work: Path) -> int:
    """Rounds of the relay until the team's matches finish: answers read in, the arena run, prompts exported
    and answered (with the hash of the text the answerer read). Returns the rounds."""
    batch, prompts, answers = work / "batch", work / "prompts", work / "answers"
    answers.mkdir(parents=True)
    command = ["arena", "tiny_hanabi", "--agents", f"direct-llm=llm:batch:{batch}", "--self-play", "--matches", "2",
               "--sims", "4", "--rollouts", "1", "--seed", "0", "--out", str(work / "arena"), "--yes",
               "--no-progress", "--executor", "inline"]
    for rounds in range(1, 12):
        if (batch / "pending.jsonl").exists():
            import_answers(batch, answers, model=ANSWERED_BY)
        if cwm_main(command) != EXIT_WAITING:
            return rounds
        shutil.rmtree(prompts, ignore_errors=True)
        for path in export_pending(batch, prompts):
            text = path.read_text(encoding="utf-8")
            (answers / path.name).write_text(answer(text), encoding="utf-8")
            (answers / f"{path.stem}.sha256").write_text(hashlib.sha256(text.encode()).hexdigest() + "\n")
    raise AssertionError("the recording did not finish in 11 rounds")


@pytest.fixture(scope="module")
def shipped(tmp_path_factory) -> tuple[Path, dict]:
    root = tmp_path_factory.mktemp("team")
    work, sessions = root / "work", root / "sessions"
    assert record(work) >= 3  # two moves a game, a rethink on the first: several rounds
    figure = script()
    assert figure.main(["--games", "tiny_hanabi", "--work", str(work), "--ship", "--sessions", str(sessions),
                        "--relay-by", "person"]) == 0
    return sessions, json.loads((sessions / "tiny_hanabi" / "provenance.json").read_text())


def test_a_shipped_team_session_says_who_answered_and_holds_its_deals(shipped) -> None:
    sessions, provenance = shipped
    assert provenance["answered_by"] == ANSWERED_BY and provenance["relay"] == "relay-hashed"
    assert provenance["replies"] == provenance["prompts_hashed"] > 4  # every reply's prompt hash matched
    assert provenance["arena"]["seed"] == 0 and provenance["arena"]["settings"]["search"]["num_simulations"] == 4
    assert [d["index"] for d in provenance["deals"]] == [0, 1] and provenance["batch_folder"] == "batch"
    assert len({d["deal"] for d in provenance["deals"]}) == 2 and all(d["moves"] >= 4 for d in provenance["deals"])
    assert sorted(p.name for p in (sessions / "tiny_hanabi").iterdir()) == ["pending.jsonl", "provenance.json",
                                                                           "replies.jsonl"]


def test_the_replay_plays_the_recorded_deals_to_the_same_scores_beside_the_other_teams(shipped, tmp_path) -> None:
    sessions, provenance = shipped
    out = tmp_path / "replay"
    assert script().main([*REPLAY, "--sessions", str(sessions), "--out", str(out)]) == 0
    row = json.loads((out / "teams.json").read_text())["rows"][0]
    teams = {t["team"]: t for t in row["teams"]}
    assert set(teams) == {"direct-llm+direct-llm", "random+random", "cwm+cwm", "cwm+random",
                          "gt-ismcts+gt-ismcts"}
    recorded = [d["score"] for d in provenance["deals"]]
    assert teams["direct-llm+direct-llm"]["mean_score"] == pytest.approx(sum(recorded) / len(recorded))
    assert all(t["deals"] == 2 for t in teams.values())  # every team on the two recorded deals
    assert teams["cwm+random"]["matches"] == 4  # a mixed team plays both seat orders of each deal
    dealt = {(r["index"], r["deal"]) for r in map(json.loads, (out / "tiny_hanabi" / "arena" / "matches.jsonl")
                                                  .read_text().splitlines())}
    assert dealt == {(d["index"], d["deal"]) for d in provenance["deals"]}
    llm = row["direct_llm"]
    assert llm["moves_asked"] == 4 and llm["illegal_per_move"] == 0.5 and llm["forfeits_per_match"] == 0.0
    assert llm["calls_per_match"] == 3.0  # two moves, one rethink
    assert "cwm+direct-llm" in row["absent"] and "not replayable" in row["absent"]["cwm+direct-llm"]
    text = (out / "teams.md").read_text()
    assert "| direct-llm+direct-llm | 2 (2) |" in text and "0.500 illegal" in text and ANSWERED_BY in text


def test_a_missing_reply_is_refused_in_one_line_and_the_recorded_settings_are_kept(shipped, tmp_path, capsys) -> None:
    sessions, _ = shipped
    broken = tmp_path / "sessions"
    shutil.copytree(sessions, broken)
    replies = (broken / "tiny_hanabi" / "replies.jsonl").read_text().splitlines(keepends=True)
    (broken / "tiny_hanabi" / "replies.jsonl").write_text("".join(replies[:-1]))
    capsys.readouterr()
    assert script().main([*REPLAY, "--sessions", str(broken), "--out", str(tmp_path / "a")]) == 2
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1 and "no reply for 1 request(s)" in err and "asks no model" in err
    assert script().main([*REPLAY, "--sessions", str(sessions), "--sims", "9", "--out", str(tmp_path / "b")]) == 2
    assert "--sims 9" in capsys.readouterr().err
    assert script().main(["--games", "tic_tac_toe", "--sessions", str(sessions), "--out", str(tmp_path / "c")]) == 2
    assert "not cooperative" in capsys.readouterr().err


def test_a_replay_that_ends_a_recorded_deal_otherwise_is_refused(shipped, tmp_path, capsys) -> None:
    sessions, recorded = shipped
    changed = tmp_path / "sessions"
    shutil.copytree(sessions, changed)
    provenance = json.loads(json.dumps(recorded))
    provenance["deals"][1]["score"] += 1.0  # as if the recording had scored one more point on deal 1
    (changed / "tiny_hanabi" / "provenance.json").write_text(json.dumps(provenance))
    capsys.readouterr()
    assert script().main([*REPLAY, "--sessions", str(changed), "--out", str(tmp_path / "a")]) == 2
    assert "deal 1 replayed as" in capsys.readouterr().err


def test_a_team_whose_planner_cannot_play_the_game_is_a_line_saying_why(shipped, tmp_path, monkeypatch) -> None:
    figure = script()
    sessions, _ = shipped
    first = tmp_path / "first"  # a replay that synthesizes the CWM agent's bundle; the next one is given it
    assert figure.main([*REPLAY, "--sessions", str(sessions), "--out", str(first)]) == 0
    monkeypatch.setattr(figure.arena_figure, "opponents", lambda game, llm: ["random", "gt-mcts"])
    out = tmp_path / "replay"
    given = f"tiny_hanabi={first / 'tiny_hanabi' / 'bundle'}"
    assert figure.main([*REPLAY, "--sessions", str(sessions), "--bundles", given, "--out", str(out)]) == 0
    assert not (out / "tiny_hanabi" / "bundle").exists()  # the given bundle played, none was synthesized
    row = json.loads((out / "teams.json").read_text())["rows"][0]
    assert "gt-mcts+gt-mcts" not in {t["team"] for t in row["teams"]}
    assert "gt-mcts cannot play tiny_hanabi" in row["absent"]["gt-mcts+gt-mcts"]


def test_the_planner_teams_at_a_rollout_cut_off_play_the_recorded_deals_as_rows_of_their_own(shipped, tmp_path
                                                                                             ) -> None:
    sessions, provenance = shipped
    out = tmp_path / "replay"
    assert script().main([*REPLAY, "--sessions", str(sessions), "--out", str(out),
                          "--planner-max-rollout-steps", "1"]) == 0
    row = json.loads((out / "teams.json").read_text())["rows"][0]
    teams = {t["team"]: t for t in row["teams"]}
    capped = {"cwm-cut1+cwm-cut1", "cwm-cut1+random", "gt-ismcts-cut1+gt-ismcts-cut1"}
    assert set(teams) == capped | {"direct-llm+direct-llm", "random+random", "cwm+cwm", "cwm+random",
                                   "gt-ismcts+gt-ismcts"} and row["planner_max_rollout_steps"] == 1
    assert all(teams[t]["deals"] == 2 for t in capped) and teams["cwm-cut1+random"]["matches"] == 4
    arena = out / "tiny_hanabi" / "arena-cut1"
    config = json.loads((arena / "config.json").read_text())
    assert config["settings"]["search"]["max_rollout_steps"] == 1  # the cut-off is stated in the settings
    assert config["deals"] == [d["deal"] for d in provenance["deals"]]
    played = [json.loads(line) for line in (arena / "matches.jsonl").read_text().splitlines()]
    assert {(r["index"], r["deal"]) for r in played} == {(d["index"], d["deal"]) for d in provenance["deals"]}
    assert {s for r in played for s in r["seats"]} == {"cwm-cut1", "gt-ismcts-cut1", "random"}  # no LLM, no random team
    compared = {(c["team"], c["other"]) for c in row["comparisons"]} | {(c["other"], c["team"]) for c in row["comparisons"]}
    assert all(("direct-llm+direct-llm", t) in compared for t in capped)  # paired with the LLM team's deals
    assert all(c["deals"] == 2 for c in row["comparisons"])
    assert "`-cut1`: the planner under the same settings with a rollout cut-off of 1" in (out / "teams.md").read_text()
    assert script().main([*REPLAY, "--sessions", str(sessions), "--out", str(tmp_path / "b"),
                          "--planner-max-rollout-steps", "0"]) == 2
