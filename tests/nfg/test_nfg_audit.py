"""The audit finds deliberately wrong ideals (tests/data/nfg/wrong_ideals.jsonl, built by build_fixtures.py)."""

from __future__ import annotations

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
