"""`cwm nfg audit --transcribe` checks each stored formal game against the game its own text states.

The tampered items are honest generated items whose stored game and ideal were changed together (the text
untouched), so the re-solving audit alone passes them; the cross-check must flag each, one line per item.
"""

from __future__ import annotations

import copy
import json
import re
from collections.abc import Callable
from fractions import Fraction
from pathlib import Path

import pytest

from cwm import nfg
from cwm.cli import main
from cwm.llm import ScriptedClient
from cwm.nfg import audit, crosscheck, render, transcribe
from cwm.nfg.game import MatrixGame, NfgFormatError
from cwm.nfg.tasks import FAMILIES, solve

DATA = Path(__file__).resolve().parents[1] / "data" / "nfg"
PAYOFF_FAMILIES = ("best_response_pure", "best_response_mixed", "dominant_strategy", "nash", "nash_3x3",
                   "zero_sum_maximin")  # the families whose answer depends on the payoffs


@pytest.fixture(scope="module")
def tasks() -> list[nfg.Task]:
    return nfg.generate(list(FAMILIES), 3, seed=11)


def _record(tasks: list[nfg.Task], family: str) -> dict:
    return next(t for t in tasks if t.family == family).to_json()


def _restore(record: dict, game: MatrixGame, me: int) -> dict:
    """The record with its stored game, viewpoint, ideal and answer key replaced consistently (text untouched)."""
    out = copy.deepcopy(record)
    key = solve(out["nfg"]["family"], game, me, out["nfg"]["question"])
    out["nfg"].update(game=game.to_json(), me=me, answer=key.to_json())
    out["ideal"] = key.ideal()
    return out


def tamper_payoffs(record: dict) -> dict:
    """The record with some outcomes' payoffs moved (one outcome, else all outcomes of one of your actions) so
    that the solver's answer changes, the ideal and answer key rewritten to match."""
    stored = record["nfg"]
    game, me = MatrixGame.from_json(stored["game"]), stored["me"]
    before = solve(stored["family"], game, me, stored["question"]).ideal()
    cells = [(i, j) for i in range(len(game.actions[0])) for j in range(len(game.actions[1]))]
    groups = [[c] for c in cells] + [[c for c in cells if c[me] == k] for k in range(len(game.actions[me]))]
    for group in groups:
        for delta in (7, -7, 3, -3, 20):
            table = [[list(cell) for cell in row] for row in game.payoffs]
            for i, j in group:
                table[i][j] = [table[i][j][0] + delta, table[i][j][1] - delta]
            changed = MatrixGame(game.players, game.actions, tuple(tuple(map(tuple, r)) for r in table), game.unit)
            try:
                tampered = _restore(record, changed, me)
            except NfgFormatError:
                continue
            if tampered["ideal"] != before:
                return tampered
    raise AssertionError(f"no payoff change alters the answer of {stored['id']}")


def test_the_reader_writes_each_generated_game_from_its_text_alone(tasks: list[nfg.Task]) -> None:
    for task in tasks:
        written = crosscheck.read_text(transcribe.item_text(task.to_json()))
        assert (written.game, written.me) == (task.game, task.me), task.id


def test_an_honest_file_and_its_registry_pass(tasks: list[nfg.Task], tmp_path: Path,
                                              capsys: pytest.CaptureFixture[str]) -> None:
    path = nfg.save(tmp_path / "tasks.jsonl", tasks)
    assert main(["nfg", "audit", str(path), "--transcribe"]) == 0
    assert capsys.readouterr().out.strip() == (f"{len(tasks)} records: {len(tasks)} ok, 0 disagree, 0 invalid, "
                                               "0 skipped, 0 untranscribed, 0 ambiguous, 0 mismatch")
    nfg.registry.export(tasks, tmp_path / "export", seed=11)
    samples = sorted((tmp_path / "export").rglob("samples.jsonl"))
    assert len(samples) == len(FAMILIES)
    for sample in samples:
        findings = transcribe.audit_file(sample, None)
        assert [f.status for f in findings] == ["ok"] * 3, (sample, [f.reasons for f in findings])


@pytest.mark.parametrize("family", PAYOFF_FAMILIES)
def test_a_stored_game_changed_with_its_ideal_is_flagged(tasks: list[nfg.Task], family: str) -> None:
    tampered = tamper_payoffs(_record(tasks, family))
    assert audit.audit_record(tampered).status == "ok"  # consistent with itself: the re-solve alone passes it
    finding = transcribe.audit_plain(tampered, None, line=4)
    assert finding.status == "mismatch" and finding.id == tampered["nfg"]["id"]
    assert finding.reasons[0].startswith("the stored game differs from the text: ")
    assert re.search(r"payoff when \w.* picks .* stored -?\d+, text -?\d+", finding.reasons[0]), finding.reasons


def test_the_cli_lists_each_mismatch_on_one_line_and_exits_1(tasks: list[nfg.Task], tmp_path: Path,
                                                             capsys: pytest.CaptureFixture[str]) -> None:
    honest = [_record(tasks, f) for f in PAYOFF_FAMILIES[:3]]
    records = [honest[0], tamper_payoffs(honest[1]), honest[2], tamper_payoffs(honest[0])]
    path = tmp_path / "mixed.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in records), encoding="utf-8")
    assert main(["nfg", "audit", str(path)]) == 0  # without --transcribe the tampering passes unseen
    capsys.readouterr()
    assert main(["nfg", "audit", str(path), "--transcribe"]) == 1
    lines = capsys.readouterr().out.splitlines()
    assert lines[0] == "4 records: 2 ok, 0 disagree, 0 invalid, 0 skipped, 0 untranscribed, 0 ambiguous, 2 mismatch"
    assert [ln.split(" mismatch: ")[0] for ln in lines[1:]] == [
        f"line 2 {records[1]['nfg']['id']} [{PAYOFF_FAMILIES[1]}]", f"line 4 {records[3]['nfg']['id']} [{PAYOFF_FAMILIES[0]}]"]


def _rename_action(record: dict) -> dict:
    game = MatrixGame.from_json(record["nfg"]["game"])
    me = record["nfg"]["me"]
    actions = [list(a) for a in game.actions]
    actions[me][0] = "purple" if "purple" not in actions[me] else "orange"
    return _restore(record, MatrixGame(game.players, (tuple(actions[0]), tuple(actions[1])), game.payoffs,
                                       game.unit), me)


def _swap_me(record: dict) -> dict:
    return _restore(record, MatrixGame.from_json(record["nfg"]["game"]), 1 - record["nfg"]["me"])


def _rename_player(record: dict) -> dict:
    game = MatrixGame.from_json(record["nfg"]["game"])
    return _restore(record, MatrixGame(("Zed", game.players[1]), game.actions, game.payoffs, game.unit),
                    record["nfg"]["me"])


def _other_unit(record: dict) -> dict:
    game = MatrixGame.from_json(record["nfg"]["game"])
    unit = "dollars" if game.unit == "points" else "points"
    return _restore(record, MatrixGame(game.players, game.actions, game.payoffs, unit), record["nfg"]["me"])


TAMPERS: list[tuple[str, Callable[[dict], dict], str]] = [
    ("action-renamed", _rename_action, "'s actions: stored ["),
    ("viewpoint-swapped", _swap_me, "'you': stored "),
    ("player-renamed", _rename_player, "players: stored ['Zed', "),
    ("unit-changed", _other_unit, "unit: stored "),
]


@pytest.mark.parametrize(("tamper", "phrase"), [t[1:] for t in TAMPERS], ids=[t[0] for t in TAMPERS])
def test_other_stored_changes_are_named(tasks: list[nfg.Task], tamper: Callable[[dict], dict], phrase: str) -> None:
    finding = transcribe.audit_plain(tamper(_record(tasks, "nash")), None)
    assert finding.status == "mismatch" and phrase in finding.reasons[0], finding.reasons


def test_the_same_game_stored_in_another_order_agrees(tasks: list[nfg.Task]) -> None:
    record = _record(tasks, "nash_3x3")
    game = MatrixGame.from_json(record["nfg"]["game"])
    swapped = MatrixGame((game.players[1], game.players[0]), (game.actions[1][::-1], game.actions[0]),
                         tuple(tuple((game.payoffs[i][j][1], game.payoffs[i][j][0]) for i in range(len(game.actions[0])))
                               for j in reversed(range(len(game.actions[1])))), game.unit)
    finding = transcribe.audit_plain(_restore(record, swapped, 1 - record["nfg"]["me"]), None)
    assert (finding.status, finding.reasons) == ("ok", ())


@pytest.mark.parametrize(("stored", "status"), [
    (Fraction(1, 3), "ok"),  # the text writes 0.333333: that is all it determines
    (Fraction(333333, 1000000), "ok"),
    (Fraction(1, 3) + Fraction(1, 100000), "mismatch"),  # 0.33334
], ids=["exact", "as-written", "off-in-the-fifth-digit"])
def test_fractional_payoffs_agree_up_to_the_digits_the_text_writes(stored: Fraction, status: str) -> None:
    third = Fraction(1, 3)
    text_game = MatrixGame(("Ann", "Bo"), (("up", "down"), ("left", "right")),
                           (((third, 0), (0, 1)), ((1, 0), (0, 2))), "dollars")
    key = solve("dominant_strategy", text_game, 1, {})
    record = nfg.Task("frac-0", "dominant_strategy", text_game, 1, {}, key,
                      render.messages("dominant_strategy", text_game, 1, {}, key,
                                      disguise={"style": "colours"})).to_json()
    assert "Ann gets $0.333333 and Bo gets $0." in record["input"][-1]["content"]
    stored_game = MatrixGame(text_game.players, text_game.actions,
                             (((stored, 0), (0, 1)), ((1, 0), (0, 2))), "dollars")
    finding = transcribe.audit_plain(_restore(record, stored_game, 1), None)
    assert finding.status == status, finding.reasons


def _lines(edit: Callable[[list[str]], list[str]]) -> Callable[[str], str]:
    return lambda text: "\n".join(edit(text.split("\n")))


def _outcomes(lines: list[str]) -> list[int]:
    return [k for k, ln in enumerate(lines) if ln.startswith("- If ")]


UNREADABLE: list[tuple[str, Callable[[str], str], str]] = [
    ("a-markdown-table", lambda t: re.sub(r"- If (.+?) picks (.+?) and (.+?) picks (.+?): \1 gets (.+?) and \3 gets (.+)\.",
                                          r"| \2 | \4 | \5 | \6 |", t), "no outcome lines in cwm's task format"),
    ("an-outcome-left-out", _lines(lambda ls: [ln for k, ln in enumerate(ls) if k != _outcomes(ls)[1]]),
     "states no outcome for"),
    ("an-outcome-twice", _lines(lambda ls: ls[: _outcomes(ls)[0] + 1] + ls[_outcomes(ls)[0]:]), "twice"),
    ("an-amount-in-words", lambda t: re.sub(r"gets -?\d+ points?", "gets many points", t, count=1),
     "'many points' is not an amount"),
    ("points-and-dollars", lambda t: re.sub(r"gets (-?)(\d+) points?", r"gets \1$\2", t, count=1),
     "mixes points and dollars"),
    ("a-huge-text", lambda t: t + "x" * crosscheck.MAX_TEXT, "characters, more than the"),
]


@pytest.mark.parametrize(("edit", "phrase"), [u[1:] for u in UNREADABLE], ids=[u[0] for u in UNREADABLE])
def test_a_text_that_states_no_game_is_untranscribed_not_agreeing(tasks: list[nfg.Task], edit: Callable[[str], str],
                                                                   phrase: str) -> None:
    record = _record(tasks, "best_response_pure")
    assert record["nfg"]["game"]["unit"] == "points"
    original = record["input"][-1]["content"]
    record["input"][-1]["content"] = edit(original)
    assert record["input"][-1]["content"] != original
    finding = transcribe.audit_plain(record, None)
    assert finding.status == "untranscribed" and phrase in finding.reasons[0], finding.reasons
    assert finding.reasons[0].endswith("(and no LLM to transcribe it)")
    assert "untranscribed" in audit.FAILING


FORMAL = json.loads((DATA / "plain_evals.jsonl").read_text(encoding="utf-8").splitlines()[9])  # Alice/Bob, formal
FOREIGN = re.sub(r"- If Alice picks (\w+) and Bob picks (\w+): Alice gets (\d+) points? and Bob gets (\d+) points?\.",
                 r"Alice \1, Bob \2 -> Alice \3, Bob \4", FORMAL["input"][-1]["content"])
CODE = """PLAYERS = ["Alice", "Bob"]
ME = "Alice"
ACTIONS = {"Alice": ["green", "blue"], "Bob": ["green", "blue"]}
QUESTION = "QNAME"
UNCLEAR = None

def payoff(action_0, action_1):
    return {("green", "green"): [3, 3], ("green", "blue"): [0, 5], ("blue", "green"): [5, 0],
            ("blue", "blue"): [1, 1]}[(action_0, action_1)]
"""
LLM_CASES = [
    ("agrees", CODE.replace("QNAME", "dominant_strategy"), "ok", ""),
    ("payoff-differs", CODE.replace("QNAME", "dominant_strategy").replace("[5, 0]", "[6, 0]"), "mismatch",
     "Alice's payoff when Alice picks blue and Bob picks green: stored 5, text 6"),
    ("question-differs", CODE.replace("QNAME", "best_response_pure") + "OPPONENT_ACTION = 'green'\n", "mismatch",
     "question: stored dominant_strategy, text best_response_pure"),
    ("unclear", CODE.replace("QNAME", "dominant_strategy").replace("UNCLEAR = None", "UNCLEAR = 'two readings'"),
     "ambiguous", "two readings"),
]


@pytest.mark.parametrize(("code", "status", "phrase"), [c[1:] for c in LLM_CASES], ids=[c[0] for c in LLM_CASES])
def test_a_text_in_another_form_is_transcribed_by_the_llm(code: str, status: str, phrase: str) -> None:
    assert "- If " not in FOREIGN and "Alice blue, Bob green -> Alice 5, Bob 0" in FOREIGN
    record = {**FORMAL, "input": [*FORMAL["input"][:-1], {"role": "user", "content": FOREIGN}]}
    finding = transcribe.audit_plain(record, ScriptedClient([f"```python\n{code}```"]), line=10)
    assert finding.status == status and phrase in " ".join(finding.reasons), finding.reasons


def test_the_honest_formal_record_is_read_without_the_llm() -> None:
    client = ScriptedClient([])  # any call would fail
    assert transcribe.audit_plain(FORMAL, client).status == "ok"
    assert transcribe.audit_plain(tamper_payoffs(FORMAL), client).status == "mismatch"
