"""Rebuilds the nfg test fixtures: python tests/data/nfg/build_fixtures.py (from the repository root).

- tasks_small.jsonl: one task per family (seed 7, index 0), our format.
- replay.jsonl: a replay file of both contestants on those tasks, recorded from scripted replies
  (synthetic, written here, not from a real LLM): per contestant one wrong and one unusable reply,
  the rest correct, so the offline tests know exactly what each status count must be.
- wrong_ideals.jsonl: hand-made records whose ideals are deliberately wrong (see WRONG below).
- plain_evals.jsonl: plain evals records (input and ideal only; some ideals deliberately wrong) and
  transcribe_replay.jsonl: their transcriptions, written by hand (transcriptions/line-NN.md, not from a real
  LLM) and recorded under the model name "hand-written" (see build_plain_evals).
"""

from __future__ import annotations

import json
from fractions import Fraction
from pathlib import Path

from cwm.llm import RecordingClient, ScriptedClient
from cwm.nfg import CwmContestant, DirectContestant, MatrixGame, Task, evaluate, generate_one, render, save, solve
from cwm.nfg.answers import format_distribution
from cwm.nfg.tasks import FAMILIES

HERE = Path(__file__).resolve().parent
SEED = 7
WRONG_DIRECT = "estimate_mixed"  # the direct contestant answers this one wrongly
UNPARSEABLE_DIRECT = "nash"  # ... and this one without an answer
WRONG_CWM = "best_response_pure"  # the CWM transcription flips the sign of every payoff here
BROKEN_CWM = "classify_partner"  # ... and imports os here (rejected by the static gate)


def direct_reply(task: Task) -> str:
    ideal = task.key.ideal()
    text = ideal if isinstance(ideal, str) else ideal[0]
    if task.family == WRONG_DIRECT:
        return "Each action seems equally likely to me.\nAnswer: " + format_distribution(
            task.key.vocabulary, [Fraction(1, len(task.key.vocabulary))] * len(task.key.vocabulary))
    if task.family == UNPARSEABLE_DIRECT:
        return "This depends on how risk-averse the players are, so I cannot say."
    if task.key.kind == "choice":
        return f"Comparing the payoffs line by line, I would choose {text} because it pays the most."
    return f"Let me work through it.\n\n**Answer:** {text}"


def cwm_reply(task: Task) -> str:
    game, sign = task.game, -1 if task.family == WRONG_CWM else 1
    lines = [f"    ({a!r}, {b!r}): [{sign * float(game.payoffs[i][j][0])}, {sign * float(game.payoffs[i][j][1])}],"
             for i, a in enumerate(game.actions[0]) for j, b in enumerate(game.actions[1])]
    head = "import os\n" if task.family == BROKEN_CWM else ""
    code = (f"{head}PLAYERS = {list(game.players)!r}\nME = {game.players[task.me]!r}\n"
            f"ACTIONS = {{{game.players[0]!r}: {list(game.actions[0])!r}, {game.players[1]!r}: {list(game.actions[1])!r}}}\n"
            f"TABLE = {{\n" + "\n".join(lines) + "\n}\n\n\ndef payoff(action_0, action_1):\n"
            "    return TABLE[(action_0, action_1)]\n" + _data(task))
    return f"Here is the transcription.\n\n```python\n{code}```\n"


def _data(task: Task) -> str:
    q = task.question
    roles = q.get("roles", {})
    data = {
        "best_response_pure": {"OPPONENT_ACTION": q.get("opponent_action")},
        "estimate_mixed": {"OPPONENT_HISTORY": q.get("opponent_history")},
        "best_response_mixed": {"OPPONENT_MIX": {a: float(Fraction(str(p))) for a, p in q.get("opponent_mix", {}).items()}},
        "classify_partner": {"HISTORY": q.get("history"), "COOPERATE": roles.get("cooperate"),
                             "DEFECT": roles.get("defect"), "TREMBLE": 0.05},
        "play_strategy": {"STRATEGY": q.get("strategy"), "PARTNER_HISTORY": q.get("partner_history"),
                          "COOPERATE": roles.get("cooperate"), "DEFECT": roles.get("defect")},
    }.get(task.family, {})
    return "".join(f"\n{name} = {value!r}\n" for name, value in data.items())


def build_replay(tasks: list[Task]) -> None:
    path = HERE / "replay.jsonl"
    path.unlink(missing_ok=True)
    replies = [direct_reply(t) for t in tasks] + [cwm_reply(t) for t in tasks]
    client = RecordingClient(ScriptedClient(replies), path)
    evaluate(tasks, [DirectContestant(client), CwmContestant(client)])


def _task(family: str, game: MatrixGame, me: int, question: dict, task_id: str) -> Task:
    key = solve(family, game, me, question)
    disguise = {"style": "colours", "unit": game.unit, "probabilities": "fraction"}
    return Task(task_id, family, game, me, question, key, render.messages(family, game, me, question, key,
                                                                       disguise=disguise), disguise)


def build_wrong_ideals() -> None:
    rps = MatrixGame.from_openspiel("matrix_rps", players=("Alice", "Bob"))
    pd = MatrixGame.from_tables(("Alice", "Bob"), [["green", "blue"]] * 2, [[3, 0], [5, 1]], [[3, 5], [0, 1]])
    roles = {"cooperate": "green", "defect": "blue"}
    tie = MatrixGame.from_tables(("Alice", "Bob"), [["red", "blue", "green"], ["red", "blue"]],
                                 [[2, 0], [2, 0], [1, 1]], [[0, 0], [0, 0], [0, 0]])
    records = [
        # 1 ok: the correct best response to (1/2, 1/2, 0) in rock-paper-scissors.
        (_task("best_response_mixed", rps, 0, {"opponent_mix": {"Rock": "1/2", "Paper": "1/2", "Scissors": 0}}, "ok-1"),
         None),
        # 2 the best response to a mixed strategy written as a mixed strategy.
        (_task("best_response_mixed", rps, 0, {"opponent_mix": {"Rock": "1/5", "Paper": "1/5", "Scissors": "3/5"}},
               "mixed-br-as-mix"), "Rock: 0.6, Paper: 0.2, Scissors: 0.2"),
        # 3 tit-for-tat off by one round (copying the partner's same round).
        (_task("play_strategy", pd, 0, {"strategy": "tit-for-tat", "partner_history": ["blue", "blue", "green",
                                                                                        "green", "blue"],
                                        "roles": roles}, "tft-off-by-one"), "blue, blue, green, green, blue"),
        # 4 an add-one smoothed estimate instead of the maximum-likelihood frequencies.
        (_task("estimate_mixed", rps, 1, {"opponent_history": ["Rock"] * 6 + ["Paper"] * 4}, "smoothed-estimate"),
         "Rock: 0.538, Paper: 0.385, Scissors: 0.077"),
        # 5 a classification where the history cannot tell (all cooperation), given as tit-for-tat.
        (_task("classify_partner", pd, 1, {"history": [["green", "green"]] * 5, "roles": roles, "tremble": "1/20"},
               "ambiguous-as-tft"), "tit-for-tat"),
        # 6 two tied best responses, ideal names only one.
        (_task("best_response_pure", tie, 0, {"opponent_action": "red"}, "tie-missing"), "red"),
        # 7 ok: pure-strategy prisoner's dilemma dominance.
        (_task("dominant_strategy", pd, 1, {}, "ok-7"), None),
    ]
    with (HERE / "wrong_ideals.jsonl").open("w", encoding="utf-8") as f:
        for task, ideal in records:
            record = task.to_json()
            if ideal is not None:
                record["ideal"] = ideal
            f.write(json.dumps(record) + "\n")
        # 8 a stored answer key that disagrees with the solver (ideal left correct).
        bad = _task("dominant_strategy", pd, 0, {}, "stored-key-wrong").to_json()
        bad["nfg"]["answer"]["accepted"] = ["green"]
        f.write(json.dumps(bad) + "\n")
        # 9 a plain evals record without a formal game: skipped.
        f.write(json.dumps({"input": [{"role": "user", "content": "Pick red or blue."}], "ideal": "red"}) + "\n")


def _plain(task: Task, ideal: str | None = None) -> dict:
    record = task.evals_record()
    if ideal is not None:
        record["ideal"] = ideal
    return record


def plain_records() -> list[dict]:
    """The plain evals file (input and ideal only) for the transcription audit; see PLAIN_EXPECTED in
    tests/nfg/test_nfg_transcribe.py for what each line is."""
    pd = MatrixGame.from_tables(("Alice", "Bob"), [["green", "blue"]] * 2, [[3, 0], [5, 1]], [[3, 5], [0, 1]])
    roles = {"cooperate": "green", "defect": "blue"}
    coord = MatrixGame.from_tables(("Ana", "Ben"), [["red", "yellow", "white"], ["red", "yellow", "white"]],
                                   [[4, 0, 1], [0, 3, 0], [2, 2, 2]], [[4, 0, 0], [0, 3, 1], [1, 0, 2]])
    rps = MatrixGame.from_openspiel("matrix_rps", players=("Carla", "Dev"))
    pennies = MatrixGame.from_tables(("Northwind", "Southfield"), [["project red", "project blue"]] * 2,
                                     [[2, 0], [0, 1]], [[0, 1], [1, 0]], unit="dollars")
    numbers = MatrixGame.from_tables(("Ana", "Ben"), [["1", "2", "3"]] * 2, [[1, 0, 0], [0, 1, 0], [0, 0, 1]],
                                     [[0, 1, 1], [1, 0, 1], [1, 1, 0]])
    ambiguous = _task("best_response_pure", pd, 1, {"opponent_action": "blue"}, "x").evals_record()
    ambiguous["input"][-1]["content"] = ambiguous["input"][-1]["content"].replace(
        "Alice gets 0 points and Bob gets 5 points", "Alice gets 0 points and Bob gets an amount nobody wrote down")
    return [
        _plain(_task("best_response_pure", pd, 0, {"opponent_action": "green"}, "x")),  # 1 ok
        _plain(_task("best_response_pure", coord, 1, {"opponent_action": "white"}, "x"), "red"),  # 2 wrong: white
        _plain(_task("dominant_strategy", pd, 1, {}, "x")),  # 3 ok
        _plain(_task("best_response_mixed", rps, 0, {"opponent_mix": {"Rock": "1/5", "Paper": "1/5", "Scissors": "3/5"}},
                     "x"), "Rock: 0.6, Paper: 0.2, Scissors: 0.2"),  # 4 wrong: a mixed strategy for a choice
        _plain(_task("play_strategy", pd, 0, {"strategy": "tit-for-tat", "partner_history": ["blue", "green", "green",
                                                                                             "blue"], "roles": roles},
                     "x"), "blue, green, green, blue"),  # 5 wrong: copies the same round, not the one before
        _plain(_task("nash", pennies, 0, {}, "x"), "project red: 1/2, project blue: 1/2"),  # 6 ok
        _plain(_task("estimate_mixed", numbers, 0, {"opponent_history": ["2", "3", "3", "2"]}, "x"),
               "(0, 0.5, 0.5)"),  # 7 ok: a tuple over number-named actions
        _plain(_task("dominant_strategy", pd, 0, {}, "x")),  # 8 untranscribed: the code imports os
        ambiguous,  # 9 ambiguous: a payoff is missing from the text
        _task("dominant_strategy", pd, 0, {}, "with-formal-game").to_json(),  # 10 ok, audited without the LLM
        {"input": 42, "ideal": "red"},  # 11 invalid input
        _plain(_task("best_response_pure", coord, 0, {"opponent_action": "yellow"}, "x")),  # 12 untranscribed: renamed
    ]


def build_plain_evals() -> None:
    """plain_evals.jsonl, and transcribe_replay.jsonl: the hand-written transcriptions under transcriptions/
    (one file per plain record that reaches the LLM, in file order), recorded as replies of the model
    "hand-written" so that the replay client answers each transcription request with its own reply."""
    from cwm.nfg import transcribe

    path = HERE / "plain_evals.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in plain_records()), encoding="utf-8")
    replay = HERE / "transcribe_replay.jsonl"
    replay.unlink(missing_ok=True)
    replies = [p.read_text(encoding="utf-8") for p in sorted((HERE / "transcriptions").glob("line-*.md"))]
    client = RecordingClient(ScriptedClient(replies, model="hand-written"), replay)
    transcribe.audit_file(path, client, workers=1, budget_s=5.0)


if __name__ == "__main__":
    small = [generate_one(f, 0, seed=SEED) for f in FAMILIES]
    save(HERE / "tasks_small.jsonl", small)
    build_replay(small)
    build_wrong_ideals()
    build_plain_evals()
    print(f"wrote fixtures to {HERE}")
