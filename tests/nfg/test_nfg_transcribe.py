"""Auditing a plain evals file (input and ideal only) by transcription, offline from hand-written replies.

tests/data/nfg/plain_evals.jsonl holds twelve records (built by build_fixtures.py); the replies in
transcribe_replay.jsonl were written by hand (tests/data/nfg/transcriptions/) and recorded under the model
name "hand-written". The replay client keys each reply by its request, so a reply answers only its own item.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from cwm.cli import main
from cwm.llm import ScriptedClient, make_client
from cwm.llm.replay import read_replay
from cwm.nfg import route, transcribe
from cwm.nfg.audit import report
from cwm.sandbox import Limits, Sandbox

DATA = Path(__file__).resolve().parents[1] / "data" / "nfg"
PLAIN, REPLAY = DATA / "plain_evals.jsonl", DATA / "transcribe_replay.jsonl"

PLAIN_EXPECTED = [
    # (line, status, transcribed family, a phrase the first reason must contain)
    (1, "ok", "best_response_pure", ""),
    (2, "disagree", "best_response_pure", "ideal 'red' is wrong: the solver accepts 'white'"),
    (3, "ok", "dominant_strategy", ""),
    (4, "disagree", "best_response_mixed", "is a mixed strategy"),
    (5, "disagree", "play_strategy", "the solver accepts 'green, blue, green, green'"),
    (6, "ok", "nash", ""),
    (7, "ok", "estimate_mixed", ""),  # the ideal "(0, 0.5, 0.5)" over actions 1, 2, 3
    (8, "untranscribed", "", "import of 'os' is not allowed"),
    (9, "ambiguous", "", "payoff when Alice picks green and Bob picks blue is not stated"),
    (10, "ok", "dominant_strategy", ""),  # a formal game: re-solved and checked against its text, no LLM
    (11, "invalid", "", "input must be a string or a list"),
    (12, "untranscribed", "", "names ['grey'], which the item text never mentions"),
]


@pytest.fixture(scope="module")
def sandbox():  # type: ignore[no-untyped-def]
    with Sandbox(limits=Limits(wall_s=5.0, cpu_s=5.0, per_call_s=1.0)) as box:
        yield box


@pytest.fixture(scope="module")
def findings(sandbox):  # type: ignore[no-untyped-def]
    return transcribe.audit_file(PLAIN, make_client(f"replay:{REPLAY}"), sandbox=sandbox, workers=3)


def test_the_replies_are_labelled_hand_written() -> None:
    entries = read_replay(REPLAY)
    assert len(entries) == 10 and {e["model"] for e in entries} == {"hand-written"}


@pytest.mark.parametrize(("line", "status", "family", "phrase"), PLAIN_EXPECTED, ids=[f"line-{e[0]}" for e in PLAIN_EXPECTED])
def test_each_plain_record(findings, line: int, status: str, family: str, phrase: str) -> None:  # type: ignore[no-untyped-def]
    finding = findings[line - 1]
    assert (finding.line, finding.status, finding.family) == (line, status, family), finding.reasons
    assert phrase in finding.reasons[0] if phrase else not finding.reasons


def test_exactly_the_wrong_ideals_disagree(findings) -> None:  # type: ignore[no-untyped-def]
    assert [f.line for f in findings if f.status == "disagree"] == [2, 4, 5]
    assert all(f.transcription is not None for f in findings if f.status in ("ok", "disagree") and f.line != 10)


def test_the_report_shows_the_transcription(findings) -> None:  # type: ignore[no-untyped-def]
    text = report(findings, transcribed=True)
    assert text.splitlines()[0] == "12 records: 5 ok, 3 disagree, 1 invalid, 0 skipped, 2 untranscribed, 1 ambiguous, 0 mismatch"
    block = text.split("line 2 ")[1].split("line 4 ")[0]
    assert "transcribed as best_response_pure for Ben (player 1)" in block
    assert "white     | 2, 1 | 2, 0   | 2, 2" in block
    assert "line 1 " not in text  # agreeing records are not listed


def test_cli_audit_transcribes_in_the_sandbox(capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch) -> None:
    used: list[object] = []
    original = route.run_job

    def spy(source, payload, *, sandbox=None, budget_s=route.IN_PROCESS_BUDGET_S):  # type: ignore[no-untyped-def]
        used.append(sandbox)
        return original(source, payload, sandbox=sandbox, budget_s=budget_s)

    monkeypatch.setattr(route, "run_job", spy)
    assert main(["nfg", "audit", str(PLAIN), "--transcribe", "--llm", f"replay:{REPLAY}", "--json"]) == 1
    rows = [json.loads(line) for line in capsys.readouterr().out.splitlines()]
    assert [r["status"] for r in rows if r["status"] == "disagree"] == ["disagree"] * 3
    assert rows[1]["transcription"]["game"]["players"] == ["Ana", "Ben"] and "def payoff" in rows[1]["transcription"]["code"]
    assert len(used) == 10 and all(isinstance(box, Sandbox) for box in used)  # no untrusted code ran in-process


def test_cli_in_process_is_an_explicit_choice(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["nfg", "audit", str(PLAIN), "--transcribe", "--llm", f"replay:{REPLAY}", "--in-process"]) == 1
    assert capsys.readouterr().out.startswith("12 records: 5 ok, 3 disagree")


def test_cli_llm_without_transcribe_is_a_one_line_error(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["nfg", "audit", str(PLAIN), "--llm", "replay:x.jsonl"]) == 2
    err = capsys.readouterr().err
    assert "--llm is only used with --transcribe" in err and len(err.strip().splitlines()) == 1


def test_without_an_llm_plain_records_are_untranscribed_not_passed(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["nfg", "audit", str(PLAIN), "--transcribe"]) == 1
    out = capsys.readouterr().out
    assert out.startswith("12 records: 1 ok, 0 disagree, 1 invalid, 0 skipped, 10 untranscribed, 0 ambiguous, 0 mismatch")
    assert out.count("no formal game, and no LLM to transcribe the text") == 10


def test_a_request_the_recording_lacks_is_untranscribed_not_passed(tmp_path: Path) -> None:
    record = json.loads(PLAIN.read_text().splitlines()[0])
    record["input"][-1]["content"] = record["input"][-1]["content"].replace("3 points", "4 points")
    finding = transcribe.audit_plain(record, make_client(f"replay:{REPLAY}"), line=1)
    assert finding.status == "untranscribed" and "ReplayMissError" in finding.reasons[0]


GAME = """PLAYERS = ["Alice", "Bob"]
ME = "Alice"
ACTIONS = {"Alice": ["green", "blue"], "Bob": ["green", "blue"]}

def payoff(action_0, action_1):
    return {("green", "green"): [3, 3], ("green", "blue"): [0, 5], ("blue", "green"): [5, 0],
            ("blue", "blue"): [1, 1]}[(action_0, action_1)]
"""
BROKEN = [
    ("no-question-asked", GAME + "QUESTION = None\nUNCLEAR = None", "asks none of the questions"),
    ("unknown-question", GAME + "QUESTION = 'bargaining'\nUNCLEAR = None", "is not one of"),
    ("data-missing", GAME + "QUESTION = 'best_response_pure'\nUNCLEAR = None", "does not define OPPONENT_ACTION"),
    ("no-question-name", GAME + "UNCLEAR = None", "does not define QUESTION"),
    ("does-not-solve", GAME.replace("[5, 0]", "[2, 0]") + "QUESTION = 'dominant strategy'\nUNCLEAR = None",
     "has no strictly dominant action"),
]


@pytest.mark.parametrize(("code", "phrase"), [b[1:] for b in BROKEN], ids=[b[0] for b in BROKEN])
def test_a_transcription_that_fails_is_listed_with_its_reason(code: str, phrase: str) -> None:
    record = json.loads(PLAIN.read_text().splitlines()[0])
    finding = transcribe.audit_plain(record, ScriptedClient([f"```python\n{code}\n```"]), line=1)
    assert finding.status == "untranscribed" and phrase in finding.reasons[0], finding.reasons


def test_the_request_holds_the_item_and_every_question_name() -> None:
    record = json.loads(PLAIN.read_text().splitlines()[0])
    request = transcribe.request(record)
    assert record["input"][-1]["content"] in request.last_user_text
    assert "[system] You answer questions about two-player games" in request.last_user_text
    for family in ("best_response_pure", "classify_partner", "play_strategy", "zero_sum_maximin", "nash_3x3"):
        assert f"`{family}`" in request.last_user_text
    assert "{{" not in request.last_user_text and request.temperature == 0.0
