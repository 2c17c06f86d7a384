"""Both contestants offline: scripted replies, the recorded replay file, the sandboxed CWM route, the CLI."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from cwm.cli import main
from cwm.llm import ScriptedClient, make_client
from cwm.nfg import CwmContestant, DirectContestant, Task, evaluate, generate_one, load, summarise, wilson
from cwm.nfg.route import request_text
from cwm.sandbox import Limits, Sandbox

DATA = Path(__file__).resolve().parents[1] / "data" / "nfg"
# What build_fixtures.py scripted: (contestant, family) -> status; every other item is correct.
NOT_CORRECT = {("direct", "estimate_mixed"): "wrong", ("direct", "nash"): "unparseable",
               ("cwm", "best_response_pure"): "wrong", ("cwm", "classify_partner"): "unparseable"}


@pytest.fixture(scope="module")
def small() -> list[Task]:
    return load(DATA / "tasks_small.jsonl")


@pytest.fixture(scope="module")
def sandbox():  # type: ignore[no-untyped-def]
    with Sandbox(limits=Limits(wall_s=5.0, cpu_s=5.0, per_call_s=1.0)) as box:
        yield box


def _code(body: str) -> str:
    return f"Sure.\n\n```python\n{body}\n```\n"


RPS_CODE = """
PLAYERS = ["Alice", "Bob"]
ME = "Bob"
ACTIONS = {"Alice": ["red", "blue", "green"], "Bob": ["red", "blue", "green"]}
BEATS = {"red": "green", "blue": "red", "green": "blue"}

def payoff(action_0, action_1):
    if action_0 == action_1:
        return [0, 0]
    return [1, -1] if BEATS[action_0] == action_1 else [-1, 1]
"""


def _rps_task() -> Task:
    """A best-response-to-a-pure-choice task whose game the RPS_CODE above transcribes (Bob vs Alice's red)."""
    from cwm.nfg import MatrixGame, render, solve

    row = [[0, -1, 1], [1, 0, -1], [-1, 1, 0]]
    game = MatrixGame.from_tables(["Alice", "Bob"], [["red", "blue", "green"]] * 2, row, [[-v for v in r] for r in row])
    question = {"opponent_action": "red"}
    key = solve("best_response_pure", game, 1, question)
    disguise = {"style": "colours", "unit": "points", "probabilities": "percent"}
    messages = render.messages("best_response_pure", game, 1, question, key, disguise=disguise)
    return Task("rps", "best_response_pure", game, 1, question, key, messages, disguise)


def test_direct_messy_reply_is_parsed_and_scored() -> None:
    task = _rps_task()
    client = ScriptedClient(["Red ties and green loses, so I would choose blue because paper covers rock.",
                             "I would choose green."])
    first, second = evaluate([task, task], [DirectContestant(client)])
    assert (first.status, second.status) == ("correct", "wrong")
    assert client.calls[0].system and client.calls[0].last_user_text == task.user_text
    assert client.calls[0].temperature == 0.0


def test_direct_llm_failure_is_an_error_not_a_wrong_answer() -> None:
    (result,) = evaluate([_rps_task()], [DirectContestant(ScriptedClient([]))])
    assert result.status == "error" and "has only 0 replies" in result.detail


def test_cwm_request_holds_the_task_text_and_the_family_api() -> None:
    task = generate_one("play_strategy", 0, seed=0)
    system, user = request_text(task)
    assert task.user_text in user
    assert "def payoff(action_0: str, action_1: str)" in user and "PARTNER_HISTORY" in user
    assert "tit-for-tat, suspicious-tit-for-tat, grim-trigger, win-stay-lose-shift" in user
    assert "{{" not in user and "solver does the rest" in system


@pytest.mark.parametrize("use_sandbox", [True, False], ids=["sandbox", "in-process"])
def test_cwm_route_solves_the_transcribed_game(sandbox, use_sandbox: bool) -> None:  # type: ignore[no-untyped-def]
    task = _rps_task()
    client = ScriptedClient([_code(RPS_CODE + '\nOPPONENT_ACTION = "red"')])
    (result,) = evaluate([task], [CwmContestant(client, sandbox=sandbox if use_sandbox else None,
                                                in_process=not use_sandbox)])
    assert result.status == "correct", result.detail
    assert result.parsed is not None and result.parsed.value == frozenset({"blue"})


BROKEN = [
    ("no-code", "I think blue is best.", "contains no code"),
    ("forbidden-import", _code("import os\n" + RPS_CODE + '\nOPPONENT_ACTION = "red"'), "'os'"),
    ("missing-data", _code(RPS_CODE), "OPPONENT_ACTION"),
    ("payoff-raises", _code(RPS_CODE.replace("BEATS[action_0]", "BEATS[action_0 + 'x']") + '\nOPPONENT_ACTION = "red"'),
     "KeyError"),
    ("unknown-action", _code(RPS_CODE + '\nOPPONENT_ACTION = "rock"'), "rock"),
    ("renamed-actions", _code(RPS_CODE.replace('"blue"', '"navy"').replace("blue", "navy") + '\nOPPONENT_ACTION = "red"'),
     "navy"),
    ("endless-loop", _code(RPS_CODE.replace("    if action_0 == action_1:", "    while True:\n        pass\n"
                                            "    if action_0 == action_1:") + '\nOPPONENT_ACTION = "red"'), "time"),
]


@pytest.mark.parametrize(("reply", "phrase"), [b[1:] for b in BROKEN], ids=[b[0] for b in BROKEN])
def test_cwm_route_failures_are_unparseable_with_the_reason(sandbox, reply: str, phrase: str) -> None:  # type: ignore[no-untyped-def]
    (result,) = evaluate([_rps_task()], [CwmContestant(ScriptedClient([reply]), sandbox=sandbox)])
    assert result.status == "unparseable"
    assert phrase.lower() in result.detail.lower(), result.detail


def test_both_contestants_through_the_replay_client(small: list[Task], sandbox) -> None:  # type: ignore[no-untyped-def]
    client = make_client(f"replay:{DATA / 'replay.jsonl'}")
    results = evaluate(small, [DirectContestant(client), CwmContestant(client, sandbox=sandbox)], workers=3)
    got = {(r.contestant, r.family): r.status for r in results}
    assert got == {(c, t.family): NOT_CORRECT.get((c, t.family), "correct") for c in ("direct", "cwm") for t in small}
    totals = {r.contestant: r for r in summarise(results) if r.family == "all"}
    assert (totals["direct"].correct, totals["direct"].wrong, totals["direct"].unparseable) == (5, 1, 1)
    assert (totals["cwm"].correct, totals["cwm"].wrong, totals["cwm"].unparseable) == (5, 1, 1)


@pytest.mark.parametrize("extra", [[], ["--in-process"]], ids=["sandbox", "in-process"])
def test_cli_eval_writes_json_and_markdown(tmp_path: Path, capsys: pytest.CaptureFixture[str], extra: list[str]) -> None:
    out = tmp_path / "run"
    code = main(["nfg", "eval", str(DATA / "tasks_small.jsonl"), "--llm", f"replay:{DATA / 'replay.jsonl'}",
                 "--contestant", "both", "--out", str(out), "--workers", "2", *extra])
    assert code == 0
    data = json.loads((out / "results.json").read_text())
    assert data["record"]["contestants"] == ["direct", "cwm"] and data["record"]["sandbox"] is (not extra)
    assert data["record"]["prompt_hashes"]["nfg/cwm/request.md"]
    rows = {(r["contestant"], r["family"]): r for r in data["summary"]}
    assert rows[("direct", "all")]["correct"] == 5 and rows[("cwm", "all")]["unparseable"] == 1
    assert rows[("direct", "nash")]["unparseable"] == 1
    low, high = rows[("direct", "all")]["ci95"]
    assert (low, high) == pytest.approx(wilson(5, 7))
    table = (out / "results.md").read_text()
    assert "| direct | all | 7 | 0.714 | [0.359, 0.918] | 5 | 1 | 1 | 0 |" in table
    assert len((out / "items.jsonl").read_text().splitlines()) == 14
    csv_lines = (out / "results.csv").read_text().splitlines()
    assert csv_lines[0].startswith("contestant,family,n,accuracy,ci95_low,ci95_high,correct")
    assert "direct,all,7,0.7143,0.3589,0.9178,5,1,1,0" in csv_lines
    assert "results:" in capsys.readouterr().out


def test_cli_generate_then_audit(tmp_path: Path) -> None:
    tasks, plain = tmp_path / "tasks.jsonl", tmp_path / "evals.jsonl"
    assert main(["nfg", "generate", "--families", "nash,play_strategy", "--n", "3", "--seed", "5",
                 "--out", str(tasks), "--evals-out", str(plain)]) == 0
    assert len(tasks.read_text().splitlines()) == 6 and len(plain.read_text().splitlines()) == 6
    assert main(["nfg", "audit", str(tasks)]) == 0


def test_cli_unknown_family_is_a_clear_error(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["nfg", "generate", "--families", "nash,poker", "--out", str(tmp_path / "x.jsonl")]) == 2
    assert "unknown ['poker']" in capsys.readouterr().err


@pytest.mark.parametrize(("k", "n", "low", "high"), [(5, 10, 0.2366, 0.7634), (0, 7, 0.0, 0.3543), (10, 10, 0.7225, 1.0)])
def test_wilson_interval(k: int, n: int, low: float, high: float) -> None:
    assert wilson(k, n) == pytest.approx((low, high), abs=1e-4)


PD_NUMBERS_CODE = """
PLAYERS = ["Carla", "Dev"]
ME = "Carla"
ACTIONS = {"Carla": [3, 1], "Dev": [3, 1]}
PAY = {(3, 3): [3, 3], (3, 1): [0, 5], (1, 3): [5, 0], (1, 1): [1, 1]}

def payoff(action_0, action_1):
    return PAY[(action_0, action_1)]
"""
# The numbers disguise: the LLM writes action names as integers, and the strategy in its own spelling.
NUMBERS_DATA = [
    ("best_response_pure", {"opponent_action": "3"}, "OPPONENT_ACTION = 3", frozenset({"1"})),
    ("best_response_mixed", {"opponent_mix": {"3": "1/2", "1": "1/2"}}, "OPPONENT_MIX = {3: 0.5, 1: 0.5}",
     frozenset({"1"})),
    ("estimate_mixed", {"opponent_history": ["3", "1", "1", "1"]}, "OPPONENT_HISTORY = [3, 1, 1, 1]", (0.25, 0.75)),
    ("play_strategy", {"strategy": "tit-for-tat", "partner_history": ["1", "1", "3"],
                       "roles": {"cooperate": "3", "defect": "1"}},
     'STRATEGY = "Tit for tat"\nPARTNER_HISTORY = [1, 1, 3]\nCOOPERATE = 3\nDEFECT = 1', ("3", "1", "1")),
    ("play_strategy", {"strategy": "win-stay-lose-shift", "partner_history": ["3", "3"],
                       "roles": {"cooperate": "3", "defect": "1"}},
     'STRATEGY = "Win_Stay_Lose_Shift"\nPARTNER_HISTORY = [3, 3]\nCOOPERATE = 3\nDEFECT = 1', ("3", "3")),
    ("classify_partner", {"history": [["3", "1"], ["1", "1"], ["3", "1"], ["1", "1"], ["3", "1"], ["3", "1"]],
                          "roles": {"cooperate": "3", "defect": "1"}, "tremble": "1/20"},
     "HISTORY = [[3, 1], [1, 1], [3, 1], [1, 1], [3, 1], [3, 1]]\nCOOPERATE = 3\nDEFECT = 1\nTREMBLE = 0.05",
     frozenset({"always-defect"})),
]


def _pd_numbers_task(family: str, question: dict) -> Task:
    from cwm.nfg import MatrixGame, render, solve

    game = MatrixGame.from_tables(["Carla", "Dev"], [["3", "1"]] * 2, [[3, 0], [5, 1]], [[3, 5], [0, 1]])
    key = solve(family, game, 0, question)
    disguise = {"style": "numbers", "unit": "points", "probabilities": "fractions"}
    return Task(f"pd-{family}", family, game, 0, question, key,
                render.messages(family, game, 0, question, key, disguise=disguise), disguise)


@pytest.mark.parametrize(("family", "question", "data", "expected"), NUMBERS_DATA,
                         ids=[f"{d[0]}-{i}" for i, d in enumerate(NUMBERS_DATA)])
def test_cwm_route_reads_integer_names_and_spelled_strategies(family: str, question: dict, data: str,
                                                               expected: object) -> None:
    task = _pd_numbers_task(family, question)
    (result,) = evaluate([task], [CwmContestant(ScriptedClient([_code(PD_NUMBERS_CODE + "\n" + data)]),
                                                in_process=True)])
    assert result.status == "correct", result.detail
    assert result.parsed is not None
    assert result.parsed.value == (pytest.approx(expected) if family == "estimate_mixed" else expected)


RUNAWAY = [
    ("loop-at-import", "while True:\n    pass\n" + RPS_CODE + '\nOPPONENT_ACTION = "red"', "load_module"),
    ("loop-in-payoff", RPS_CODE.replace("    if action_0 == action_1:", "    while True:\n        pass\n"
                                        "    if action_0 == action_1:") + '\nOPPONENT_ACTION = "red"', "tabulate"),
]


@pytest.mark.parametrize(("body", "where"), [r[1:] for r in RUNAWAY], ids=[r[0] for r in RUNAWAY])
def test_in_process_route_stops_runaway_code_at_its_budget(body: str, where: str) -> None:
    import time

    start = time.process_time()  # CPU time: the budget counts it, and machine load cannot stretch it
    (result,) = evaluate([_rps_task()], [CwmContestant(ScriptedClient([_code(body)]), budget_s=0.3,
                                                       in_process=True)])
    assert result.status == "unparseable"
    assert "time budget of 0.3 s" in result.detail and where in result.detail, result.detail
    assert time.process_time() - start < 5


class _Interrupted:
    """Wraps a client: counts calls, and raises KeyboardInterrupt (Ctrl-C) on call ``stop_at`` + 1."""

    def __init__(self, inner: object, stop_at: int | None = None) -> None:
        self.inner, self.stop_at, self.calls = inner, stop_at, 0
        self.model, self.ledger = inner.model, getattr(inner, "ledger", None)  # type: ignore[attr-defined]

    def complete(self, request):  # type: ignore[no-untyped-def]
        if self.stop_at is not None and self.calls >= self.stop_at:
            raise KeyboardInterrupt
        self.calls += 1
        return self.inner.complete(request)  # type: ignore[attr-defined]


def test_cli_eval_resumes_an_interrupted_run(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    import cwm.commands.nfg

    clients: list[_Interrupted] = []

    def fake_make_client(spec: str, **_: object) -> _Interrupted:
        clients.append(_Interrupted(make_client(spec), 5 if not clients else None))
        return clients[-1]

    monkeypatch.setattr(cwm.commands.nfg, "make_client", fake_make_client)
    out = tmp_path / "run"
    argv = ["nfg", "eval", str(DATA / "tasks_small.jsonl"), "--llm", f"replay:{DATA / 'replay.jsonl'}",
            "--out", str(out), "--workers", "1", "--in-process"]
    assert main(argv) == 130  # Ctrl-C after 5 calls
    assert len((out / "items.jsonl").read_text().splitlines()) == 5  # each result was written as it finished
    assert not (out / "results.json").exists()
    assert main(argv) == 0
    assert clients[1].calls == 14 - 5  # nothing done before is asked again
    items = [json.loads(line) for line in (out / "items.jsonl").read_text().splitlines()]
    assert len(items) == 14 and len({(i["contestant"], i["task_id"]) for i in items}) == 14
    data = json.loads((out / "results.json").read_text())
    rows = {(r["contestant"], r["family"]): r for r in data["summary"]}
    assert (rows[("direct", "all")]["correct"], rows[("cwm", "all")]["correct"]) == (5, 5)
    assert data["record"]["resumed_items"] == 5
    assert main(argv) == 0 and clients[2].calls == 0  # a finished run re-run asks nothing


@pytest.mark.parametrize(("limit", "n_tasks"), [("0", 0), ("2", 2)])
def test_cli_eval_limit_is_taken_literally(tmp_path: Path, limit: str, n_tasks: int) -> None:
    out = tmp_path / "run"
    assert main(["nfg", "eval", str(DATA / "tasks_small.jsonl"), "--llm", f"replay:{DATA / 'replay.jsonl'}",
                 "--contestant", "direct", "--out", str(out), "--limit", limit]) == 0
    assert json.loads((out / "results.json").read_text())["record"]["n_tasks"] == n_tasks
    assert len((out / "items.jsonl").read_text().splitlines()) == n_tasks


@pytest.mark.parametrize("argv", [["eval", str(DATA / "tasks_small.jsonl"), "--llm", "replay:x", "--limit", "-1"],
                                  ["generate", "--n", "-1"]], ids=["limit", "n"])
def test_cli_negative_counts_are_rejected(tmp_path: Path, capsys: pytest.CaptureFixture[str], argv: list[str]) -> None:
    with pytest.raises(SystemExit) as stop:
        main(["nfg", *argv, "--out", str(tmp_path / "x")])
    assert stop.value.code == 2 and "must be >= 0, got -1" in capsys.readouterr().err
    assert not (tmp_path / "x").exists()


def test_generate_with_a_negative_count_is_a_format_error() -> None:
    from cwm.nfg import NfgFormatError, generate

    with pytest.raises(NfgFormatError, match="n must be >= 0, got -1"):
        generate(["nash"], -1)


def test_cli_eval_with_replies_still_waiting_in_a_batch_is_not_a_score(tmp_path: Path,
                                                                       capsys: pytest.CaptureFixture[str]) -> None:
    batch, out = tmp_path / "batch", tmp_path / "run"
    code = main(["nfg", "eval", str(DATA / "tasks_small.jsonl"), "--llm", f"batch:{batch}", "--contestant",
                 "direct", "--out", str(out), "--limit", "3"])
    captured = capsys.readouterr()
    assert code == 2 and "3 of 3 items wait for replies" in captured.err and "cwm llm answer-batch" in captured.err
    assert "| direct | all |" not in captured.out  # no accuracy table for work not done
    assert (batch / "pending.jsonl").is_file()
