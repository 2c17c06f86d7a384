"""Match transcripts: written as each match ends, small summary rows, resumable; `cwm replay` and `cwm view`."""

from __future__ import annotations

import json
import re
import shutil
import subprocess
from pathlib import Path

import pytest

from cwm import cli
from cwm.agents import Settings
from cwm.arena import identity, tournament
from cwm.arena import replay as arena_replay
from cwm.arena import transcript as arena_transcript
from cwm.arena import view as arena_view
from cwm.arena.plan import TournamentPlan, load_results
from cwm.llm.fakes import FakeOpenAI, Reply
from planners.config import SearchConfig

FAST = Settings(search=SearchConfig(num_simulations=20, rollouts=1), llm_examples=0)
MODEL = Path(__file__).resolve().parents[1] / "data" / "planners" / "ttt_model.py"
HOSTILE = '<img src=x onerror="document.title=\'owned\'"></script>'
ARTIFACTS = Path(__file__).resolve().parents[1] / "artifacts"
CHROMIUM_FLAGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking",
                  "--disable-component-update", "--disable-sync", "--no-first-run"]


def _first_legal(body):
    """The fake LLM's answer: some words (one hostile to HTML), then the first legal move it was shown; its
    first answer of each move names no move, so every move has a parse failure and a rethink."""
    if "legal moves" in body["messages"][-1]["content"]:
        return Reply(("I am not sure yet.",))
    shown = next(m["content"] for m in body["messages"] if "## Your legal moves" in m["content"])
    move = re.search(r"## Your legal moves\n(.+?)(?:, |\n)", shown).group(1)
    return Reply((f"The first free cell {HOSTILE} is fine.\nACTION: {move}",))


@pytest.fixture(scope="module")
def played(tmp_path_factory):
    out = tmp_path_factory.mktemp("see")
    with FakeOpenAI(models=("gpt-4o-mini",)) as server:
        server.script_by(_first_legal)
        mp = pytest.MonkeyPatch()
        mp.setenv("OPENAI_BASE_URL", server.base_url)
        mp.setenv("OPENAI_API_KEY", "fake-key")
        try:
            results = tournament("tic_tac_toe", ["random", "gt-mcts", f"mine=cwm:{MODEL}",
                                                 "mini=llm+legal:openai:gpt-4o-mini"], TournamentPlan(matches=1, settings=FAST), out_dir=out, executor="inline", progress=False)
        finally:
            mp.undo()
    return out, results


def test_every_match_has_a_transcript_and_the_rows_stay_small(played):
    out, results = played
    assert len(results) == 12
    files = sorted((out / "transcripts").iterdir())
    assert len(files) == 12 and {f.name for f in files} == {arena_transcript.file_name(r.key) for r in results}
    for line in (out / "matches.jsonl").read_text().splitlines():
        assert len(line) < 1500 and json.loads(line)["logs"] == []  # the LLM's words are in the transcript
    r = next(r for r in results if r.seats == ("mini", "random"))
    t = arena_replay.load(out, r)
    assert [s["action"] for s in t["steps"]] == list(r.actions) and t["returns"] == list(r.returns)
    assert all(s["player"] in (0, 1) and isinstance(s["seconds"], float) for s in t["steps"])
    assert t["steps"][0]["text"].startswith("x(") and t["steps"][-1]["state"].count("\n") == 2
    log = t["seats"][0]["log"]
    assert [e["outcome"] for e in log[:2]] == ["unreadable", "legal"]  # a parse failure, then the move
    assert "Your legal moves" in log[0]["prompt"] and "could not find your move" in log[1]["prompt"]
    assert log[1]["parsed"] == t["steps"][0]["text"] and log[1]["usage"][0] > 0 and log[1]["cost_usd"] > 0
    assert isinstance(log[1]["latency_s"], float)


def test_llm_telemetry_reaches_the_leaderboard_with_cost_per_win(played):
    out, _ = played
    board = {r["agent"]: r for r in json.loads((out / "results.json").read_text())["leaderboard"]}
    assert set(board) == {"random", "gt-mcts", "mine", "mini"}
    llm = board["mini"]
    assert llm["matches"] == 6 and llm["llm_calls"] >= 2 * 6 and llm["input_tokens"] > 0
    assert llm["cost_usd"] > 0 and (llm["cost_per_win"] is None) == (llm["wins"] == 0)
    assert all(r["rating_lo"] <= r["rating"] <= r["rating_hi"] for r in board.values())
    assert "| mini |" in (out / "leaderboard.md").read_text()


def test_a_resumed_tournament_keeps_the_transcripts(played, tmp_path):
    out, results = played
    copy = tmp_path / "copy"
    shutil.copytree(out, copy)
    before = {f.name: f.read_text() for f in (copy / "transcripts").iterdir()}
    again = tournament("tic_tac_toe", ["random", "gt-mcts"], TournamentPlan(matches=2, settings=FAST), out_dir=copy, executor="inline", progress=False)
    after = {f.name: f.read_text() for f in (copy / "transcripts").iterdir()}
    assert len(after) == 12 + 2 and all(after[name] == text for name, text in before.items())
    assert {arena_transcript.file_name(r.key) for r in again} <= set(after)


def test_hidden_information_transcripts_keep_chance_and_each_seats_observation(tmp_path):
    (r,) = tournament("leduc_poker", ["random"], TournamentPlan(matches=1, pairings=[("random", "random")]), out_dir=tmp_path, executor="inline", progress=False)[:1]
    t = arena_replay.load(tmp_path, r)
    chance = [s for s in t["steps"] if s["player"] == -1]
    assert chance and all(0 < s["chance_p"] <= 1 for s in chance)
    assert all(len(s["observations"]) == 2 and s["observations"][0] != s["observations"][1] for s in t["steps"])
    text = arena_replay.render(t)
    assert "chance:" in text and "seat 1 sees:" in text


def test_a_match_without_a_transcript_is_rebuilt_from_its_actions(played, tmp_path):
    out, results = played
    copy = tmp_path / "old"
    shutil.copytree(out, copy)
    shutil.rmtree(copy / "transcripts")  # a tournament played before transcripts were kept
    r = results[0]
    t = arena_replay.load(copy, r)
    assert [s["action"] for s in t["steps"]] == list(r.actions) and t["steps"][0]["seconds"] is None


def test_a_damaged_transcript_is_a_clear_error(played, tmp_path):
    out, results = played
    copy = tmp_path / "bad"
    shutil.copytree(out, copy)
    (copy / "transcripts" / arena_transcript.file_name(results[0].key)).write_text("{not json")
    with pytest.raises(arena_transcript.TranscriptError, match="not a transcript"):
        arena_replay.load(copy, results[0])


def test_cwm_replay_lists_and_prints_a_match(played, capsys):
    out, results = played
    assert cli.main(["replay", str(out)]) == 0
    listing = capsys.readouterr().out
    assert listing.count("\n") == 12 and "mini|random#0" in listing
    number = next(i for i, r in enumerate(load_results(out / "matches.jsonl").values(), 1) if identity.display_name(r) == "mini|random#0")
    assert cli.main(["replay", f"{out}/{number}"]) == 0
    by_number = capsys.readouterr().out
    assert cli.main(["replay", f"{out}/mini|random#0"]) == 0
    text = capsys.readouterr().out
    assert text == by_number and "seats: 0 = mini, 1 = random" in text
    assert "llm attempt 0: unreadable None" in text and "llm attempt 1: legal" in text
    assert re.search(r"\n1\. seat 0 \(mini\): x\(\d,\d\) \[\d+\.\d\d s\]\n", text)
    assert "\x1b" not in text and "returns " in text.splitlines()[-1]
    assert cli.main(["replay", f"{out}/nope#3"]) == 2
    assert "no match 'nope#3'" in capsys.readouterr().err


def test_the_page_escapes_everything_and_needs_no_network(played, tmp_path):
    out, _ = played
    page = arena_view.page(out)
    assert "<img" not in page and "</script>" not in page.split('id="matches">')[1].split("</script>")[0] + "x"
    assert not re.search(r"(src|href)=\"?(https?:)?//", page)  # nothing loaded from anywhere
    assert page.count('class="match"') == 12 and "<h2>Leaderboard</h2>" in page


def _chromium() -> str:
    found = shutil.which("chromium") or shutil.which("chromium-browser")
    if found is None:
        pytest.fail("Chromium is not installed: apt-get install chromium (.ci/system-packages.sh installs it)")
    return found


def test_the_page_in_headless_chromium_steps_to_a_board_mid_game(played, tmp_path):
    out, results = played
    page = arena_view.write(out, tmp_path / "view.html")
    index = next(i for i, r in enumerate(arena_replay.results_of(out)) if identity.display_name(r) == "mini|random#0")
    t = arena_replay.load(out, arena_replay.results_of(out)[index])
    url = f"{page.as_uri()}#m={index + 1}&s=3"  # numbered from 1, as `cwm replay DIR` lists them
    dumped = subprocess.run([_chromium(), *CHROMIUM_FLAGS, f"--user-data-dir={tmp_path / 'p1'}",
                             "--virtual-time-budget=3000", "--dump-dom", url], capture_output=True, text=True,
                            timeout=120)
    assert dumped.returncode == 0, dumped.stderr[-2000:]
    dom = dumped.stdout
    assert "<title>tic_tac_toe: arena, 12 matches</title>" in dom  # the hostile reply's handler never ran
    box = dom.split(f'id="match-{index}"')[1].split('class="match"')[0]
    board = re.search(r'<div class="board">(.*?)</div>', box, re.S).group(1)
    assert board == t["steps"][2]["state"] and board.count("x") == 2 and board.count("o") == 1
    assert "step 3 of" in box and "LLM attempt 1: legal" in box
    assert "&lt;img src=x" in box  # the reply is on the page as text
    ARTIFACTS.mkdir(exist_ok=True)
    shot = ARTIFACTS / "arena_view.png"
    subprocess.run([_chromium(), *CHROMIUM_FLAGS, f"--user-data-dir={tmp_path / 'p2'}", f"--screenshot={shot}",
                    "--window-size=1200,1000", "--virtual-time-budget=3000", url],
                   capture_output=True, timeout=120, check=True)
    assert shot.read_bytes()[:4] == b"\x89PNG"
