"""The audit finds deliberately wrong ideals (tests/data/nfg/wrong_ideals.jsonl, built by build_fixtures.py)."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

import pytest

from cwm.cli import main
from cwm.nfg import audit_file

DATA = Path(__file__).resolve().parents[1] / "data" / "nfg"

EXPECTED = [
    # (line, id, status, a phrase the reason must contain)
    (1, "ok-1", "ok", ""),
    (2, "mixed-br-as-mix", "disagree", "is a mixed strategy"),
    (3, "tft-off-by-one", "disagree", "the solver accepts 'green, blue, blue, green, green'"),
    (4, "smoothed-estimate", "disagree", "the solver accepts 'Rock: 0.6, Paper: 0.4, Scissors: 0'"),
    (5, "ambiguous-as-tft", "disagree", "the solver accepts 'ambiguous'"),
    (6, "tie-missing", "disagree", "leaves out tied best actions ['blue']"),
    (7, "ok-7", "ok", ""),
    (8, "stored-key-wrong", "disagree", "stored accepted answers 'green' differ from the solver's 'blue'"),
    (9, "", "skipped", "no formal game"),
]


@pytest.fixture(scope="module")
def findings():  # type: ignore[no-untyped-def]
    return audit_file(DATA / "wrong_ideals.jsonl")


@pytest.mark.parametrize(("line", "item", "status", "phrase"), EXPECTED, ids=[e[1] or "plain-evals" for e in EXPECTED])
def test_each_record(findings, line: int, item: str, status: str, phrase: str) -> None:  # type: ignore[no-untyped-def]
    finding = findings[line - 1]
    assert (finding.line, finding.id, finding.status) == (line, item, status)
    assert all(phrase in r for r in finding.reasons[:1]) if phrase else not finding.reasons


def test_the_generated_fixture_has_no_disagreement() -> None:
    assert {f.status for f in audit_file(DATA / "tasks_small.jsonl")} == {"ok"}


def test_cli_exit_code_and_report(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["nfg", "audit", str(DATA / "wrong_ideals.jsonl")]) == 1
    out = capsys.readouterr().out
    assert out.splitlines()[0] == "9 records: 2 ok, 6 disagree, 0 invalid, 1 skipped"
    assert "line 3 tft-off-by-one [play_strategy] disagree:" in out
    assert main(["nfg", "audit", str(DATA / "tasks_small.jsonl")]) == 0


def test_a_broken_formal_game_is_invalid(tmp_path: Path) -> None:
    text = (DATA / "wrong_ideals.jsonl").read_text().splitlines()[0].replace('"me": 0', '"me": 0, "x": 1')
    text = text.replace('"opponent_mix": {', '"opponent_mix": {"Lizard": 1, ')
    (tmp_path / "broken.jsonl").write_text(text + "\n")
    (finding,) = audit_file(tmp_path / "broken.jsonl")
    assert finding.status == "invalid" and "Lizard" in finding.reasons[0]


def _first_record() -> str:
    return (DATA / "wrong_ideals.jsonl").read_text().splitlines()[0]


def _edited(edit: Callable[[dict], None]) -> str:
    record = json.loads(_first_record())
    edit(record["nfg"])
    return json.dumps(record)


MALFORMED = [
    # (id, the line, a phrase the reason must contain)
    ("json-array", "[1, 2, 3]", "not a JSON object"),
    ("json-string", '"just text"', "not a JSON object"),
    ("not-json", '{"nfg": {', "not JSON"),
    ("mix-as-list", _edited(lambda n: n["question"].update(opponent_mix=[0.5, 0.5])), "cannot solve"),
    ("me-5", _edited(lambda n: n.update(me=5)), "me must be player 0 or 1, got 5"),
    ("me-minus-1", _edited(lambda n: n.update(me=-1)), "me must be player 0 or 1, got -1"),
    ("stored-key-not-a-key", _edited(lambda n: n["answer"].update(accepted=7)), "stored answer key"),
]


@pytest.mark.parametrize(("line", "phrase"), [m[1:] for m in MALFORMED], ids=[m[0] for m in MALFORMED])
def test_a_malformed_record_is_reported_and_the_audit_goes_on(tmp_path: Path, line: str, phrase: str) -> None:
    (tmp_path / "mixed.jsonl").write_text(line + "\n\n" + _first_record() + "\n")
    bad, good = audit_file(tmp_path / "mixed.jsonl")
    assert bad.status in ("invalid", "disagree") and phrase in bad.reasons[0], bad.reasons
    assert (good.line, good.status) == (3, "ok")  # its line in the file, counting the blank one


def test_solve_rejects_a_player_that_is_not_0_or_1() -> None:
    from cwm.nfg import MatrixGame, NfgFormatError, solve

    game = MatrixGame.from_registry("prisoners_dilemma")
    assert solve("nash", game, 1, {}).kind == "distribution"
    for me in (-1, 2, True):
        with pytest.raises(NfgFormatError, match="me must be player 0 or 1"):
            solve("nash", game, me, {})
