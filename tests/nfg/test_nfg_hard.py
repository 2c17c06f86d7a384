"""The harder families: zero-sum games up to 7x7 scored by exploitability, mixed Nash of general-sum 3x3 games.

The exact solvers are cross-checked against nashpy (its linear program and support enumeration), a
maintained game-theory library, on seeded games.
"""

from __future__ import annotations

from fractions import Fraction

import nashpy
import numpy as np
import pytest

from cwm.llm import ScriptedClient
from cwm.nfg import CwmContestant, MatrixGame, Task, audit_record, evaluate, generate, generate_one, summarise
from cwm.nfg.answers import Reply
from cwm.nfg.parse import parse_reply
from cwm.nfg.score import judge, markdown_table
from cwm.nfg.solver import is_nondegenerate, nash_equilibria
from cwm.nfg.tasks import zero_sum_key
from cwm.nfg.zero_sum import guaranteed, solve_zero_sum


def _fractions(table: np.ndarray) -> list[list[Fraction]]:
    return [[Fraction(int(v)) for v in row] for row in table]


@pytest.mark.parametrize("seed", range(12), ids=[f"random-{s}" for s in range(12)])
def test_exact_lp_is_optimal_and_agrees_with_nashpy(seed: int) -> None:
    rng = np.random.default_rng(seed)
    table = rng.integers(-5, 6, size=tuple(int(k) for k in rng.integers(2, 8, size=2)))
    a = _fractions(table)
    solution = solve_zero_sum(a)
    rows, cols = range(len(a)), range(len(a[0]))
    assert sum(solution.row) == 1 == sum(solution.col) and min(solution.row) >= 0 and min(solution.col) >= 0
    # exact minimax: the row strategy guarantees the value, the column strategy holds every row to it
    assert all(sum(solution.row[i] * a[i][j] for i in rows) >= solution.value for j in cols)
    assert all(sum(solution.col[j] * a[i][j] for j in cols) <= solution.value for i in rows)
    x, y = nashpy.Game(table).linear_program()
    assert float(solution.value) == pytest.approx(float(x @ table @ y), abs=1e-7)


def test_the_7x7_family_reaches_seven_actions_and_every_item_needs_a_mixed_strategy() -> None:
    tasks = generate(["zero_sum_maximin"], 40, seed=0)
    assert max(max(len(a) for a in t.game.actions) for t in tasks) == 7
    for task in tasks:
        assert task.game.is_zero_sum()
        rule = task.key.exploitability
        assert rule is not None and rule.threshold > 0
        for k, _ in enumerate(task.key.vocabulary):  # no pure strategy is good enough
            pure = tuple(float(i == k) for i in range(len(task.key.vocabulary)))
            assert not task.key.accepts(Reply("distribution", pure))


def _two_optimal_strategies() -> Task:
    """A game where (1/2, 1/2, 0) and (0, 0, 1) both guarantee the value 1: the key must accept either."""
    from cwm.nfg import render

    row = [[0, 2], [2, 0], [1, 1]]
    game = MatrixGame.from_tables(["Alice", "Bob"], [["red", "blue", "green"], ["red", "blue"]], row,
                                  [[-v for v in r] for r in row])
    key = zero_sum_key(game, 0)
    disguise = {"style": "colours", "unit": "points", "probabilities": "percent"}
    messages = render.messages("zero_sum_maximin", game, 0, {}, key, disguise=disguise)
    return Task("two-optimal", "zero_sum_maximin", game, 0, {}, key, messages, disguise)


@pytest.mark.parametrize(("reply", "status", "exploitability"), [
    ("Answer: red: 0.5, blue: 0.5, green: 0", "correct", 0.0),
    ("Answer: green", "correct", 0.0),
    ("Answer: (0.25, 0.25, 0.5)", "correct", 0.0),
    ("Answer: red: 0.52, blue: 0.48, green: 0", "correct", 0.04),  # within the threshold of 2/50 * 2 = 0.08
    ("Answer: red: 0.6, blue: 0.4, green: 0", "wrong", 0.2),
    ("Answer: red", "wrong", 1.0),
], ids=["solver-strategy", "other-optimal-pure", "mixture-of-optima", "near-optimal", "exploitable", "pure-red"])
def test_a_strategy_is_scored_by_what_a_best_responder_gains(reply: str, status: str, exploitability: float) -> None:
    task = _two_optimal_strategies()
    result = judge(task, "direct", reply, parse_reply(reply, task.key))
    assert result.status == status
    assert result.exploitability == pytest.approx(exploitability, abs=1e-9)
    assert result.to_json()["exploitability"] == result.exploitability


def test_the_raw_exploitability_is_kept_in_the_summary() -> None:
    task = _two_optimal_strategies()
    results = [judge(task, "direct", text, parse_reply(text, task.key))
               for text in ("Answer: green", "Answer: red: 0.6, blue: 0.4, green: 0", "no idea")]
    (row, _) = summarise(results)
    assert (row.correct, row.wrong, row.unparseable) == (1, 1, 1)
    assert row.to_json()["exploitability"] == {"scored": 2, "mean": pytest.approx(0.1), "max": pytest.approx(0.2)}
    assert "| direct | zero_sum_maximin | 2 | 0.1000 | 0.2000 |" in markdown_table(summarise(results))


def test_the_answer_key_round_trips_with_its_rule() -> None:
    task = generate_one("zero_sum_maximin", 3, seed=1)
    again = Task.from_json(task.to_json())
    assert again.key == task.key and again.key.exploitability == task.key.exploitability
    assert audit_record(task.to_json()).status == "ok"
    record = task.to_json()
    record["nfg"]["answer"]["exploitability"]["value"] = "123"
    assert "stored" in audit_record(record).reasons[0]


def _nashpy_equilibria(game: MatrixGame) -> list[tuple[tuple[float, ...], tuple[float, ...]]]:
    a = np.array([[float(u0) for u0, _ in row] for row in game.payoffs])
    b = np.array([[float(u1) for _, u1 in row] for row in game.payoffs])
    # vertex enumeration: nashpy 0.0.43's support enumeration misses the equilibrium of nash_3x3-4-1 (its
    # float tolerance), which both vertex enumeration and an exact check confirm
    found = nashpy.Game(a, b).vertex_enumeration()
    return sorted((tuple(np.round(x, 9) + 0.0), tuple(np.round(y, 9) + 0.0)) for x, y in found)


@pytest.mark.parametrize("family", ["nash_3x3", "nash"])
def test_equilibria_agree_with_nashpy(family: str) -> None:
    for task in generate([family], 12, seed=4):
        ours = sorted((tuple(round(float(p), 9) for p in x.values()), tuple(round(float(p), 9) for p in y.values()))
                      for x, y in nash_equilibria(task.game))
        assert ours == _nashpy_equilibria(task.game), task.id
        if family == "nash_3x3":
            assert len(ours) == 1 and is_nondegenerate(task.game)
            assert sum(p > 0 for p in ours[0][task.me]) >= 2  # the equilibrium is mixed


def test_a_degenerate_game_is_recognised() -> None:
    # against Bob's red, both of Alice's actions pay 1: a pure strategy with two best responses
    tied = MatrixGame.from_tables(["Alice", "Bob"], [["red", "blue"], ["red", "blue"]], [[1, 0], [1, 2]],
                                  [[3, 1], [0, 2]])
    assert not is_nondegenerate(tied)
    # Bob mixing red and blue 1/2 each makes all three of Alice's actions pay 1: a support of 2, 3 best responses
    three = MatrixGame.from_tables(["Alice", "Bob"], [["a", "b", "c"], ["red", "blue"]], [[2, 0], [0, 2], [1, 1]],
                                   [[1, 0], [0, 1], [2, 3]])
    assert not is_nondegenerate(three)
    assert is_nondegenerate(MatrixGame.from_openspiel("matrix_rps"))


def test_guaranteed_payoff_is_the_worst_column() -> None:
    a = [[Fraction(3), Fraction(-1)], [Fraction(-2), Fraction(1)]]
    assert guaranteed(a, [1.0, 0.0]) == -1.0 and guaranteed(a, [0.5, 0.5]) == 0.0


@pytest.mark.parametrize("family", ["nash_3x3", "zero_sum_maximin"])
def test_the_cwm_route_answers_the_new_families(family: str) -> None:
    task = generate_one(family, 0, seed=2)
    game = task.game
    table = {(a, b): [float(game.payoffs[i][j][0]), float(game.payoffs[i][j][1])]
             for i, a in enumerate(game.actions[0]) for j, b in enumerate(game.actions[1])}
    code = (f"PLAYERS = {list(game.players)!r}\nME = {game.players[task.me]!r}\n"
            f"ACTIONS = {{{game.players[0]!r}: {list(game.actions[0])!r}, {game.players[1]!r}: {list(game.actions[1])!r}}}\n"
            f"TABLE = {table!r}\n\ndef payoff(action_0, action_1):\n    return TABLE[(action_0, action_1)]\n")
    (result,) = evaluate([task], [CwmContestant(ScriptedClient([f"```python\n{code}```"]), in_process=True)])
    assert result.status == "correct", result.detail
    assert (result.exploitability == pytest.approx(0.0, abs=1e-9)) if family == "zero_sum_maximin" else (
        result.exploitability is None)


def test_the_generated_sets_audit_clean() -> None:
    assert {audit_record(t.to_json()).status for t in generate(["nash_3x3", "zero_sum_maximin"], 10, seed=9)} == {"ok"}
