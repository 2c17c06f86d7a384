"""The solver on hand-checked cases (each expected value worked out by hand in the comment beside it)."""

from __future__ import annotations

from fractions import Fraction as F

import pytest

from cwm.nfg import solver
from cwm.nfg.game import MatrixGame, NfgFormatError

RPS = MatrixGame.from_registry("rock_paper_scissors")  # OpenSpiel's matrix_rps: win +1, loss -1
PD = MatrixGame.from_registry("prisoners_dilemma")  # OpenSpiel's matrix_pd: R=5, S=0, T=10, P=1
ROLES = {"cooperate": "C", "defect": "D"}


@pytest.mark.parametrize("player", [0, 1])
def test_rps_best_response_to_half_rock_half_paper(player: int) -> None:
    # Against (1/2, 1/2, 0): Rock -> 0*1/2 - 1*1/2 = -1/2, Paper -> +1/2 + 0 = 1/2, Scissors -> -1/2 + 1/2 = 0.
    mix = {"Rock": F(1, 2), "Paper": F(1, 2), "Scissors": F(0)}
    assert solver.best_responses(RPS, player, mix) == ("Paper",)


def test_rps_best_response_to_mostly_scissors() -> None:
    # Against (0.2, 0.2, 0.6): Rock -> -0.2 + 0.6 = 0.4, Paper -> 0.2 - 0.6 = -0.4, Scissors -> -0.2 + 0.2 = 0.
    mix = {"Rock": F(1, 5), "Paper": F(1, 5), "Scissors": F(3, 5)}
    assert solver.best_responses(RPS, 0, mix) == ("Rock",)
    assert solver.expected_payoff(RPS, 0, "Rock", mix) == F(2, 5)


def test_rps_best_response_set_on_a_tie() -> None:
    # Against (1/3, 1/3, 1/3) every action earns 0: the answer is the whole set, not a mixed strategy.
    mix = dict.fromkeys(("Rock", "Paper", "Scissors"), F(1, 3))
    assert solver.best_responses(RPS, 0, mix) == ("Rock", "Paper", "Scissors")


def test_best_response_to_a_pure_choice_in_rps_cycle() -> None:
    assert solver.best_responses(RPS, 1, {"Scissors": F(1)}) == ("Rock",)


def test_best_response_rejects_a_mix_that_does_not_sum_to_one() -> None:
    with pytest.raises(NfgFormatError, match="does not sum to 1"):
        solver.best_responses(RPS, 0, {"Rock": F(1, 2)})


@pytest.mark.parametrize("player", [0, 1])
def test_defect_strictly_dominates_in_the_prisoners_dilemma(player: int) -> None:
    # Defect: 10 > 5 against Cooperate and 1 > 0 against Defect.
    assert solver.dominant_action(PD, player) == "Defect"


def test_no_dominant_action_in_rps() -> None:
    assert solver.dominant_action(RPS, 0) is None


def test_mle_from_a_twenty_round_history() -> None:
    # 7 red, 9 blue, 4 green out of 20 -> (0.35, 0.45, 0.2); an unseen action gets 0.
    history = ["red"] * 7 + ["blue"] * 9 + ["green"] * 4
    history = [history[(7 * k) % 20] for k in range(20)]  # a fixed interleaving; counts unchanged
    estimate = solver.frequency_estimate(["red", "blue", "green", "white"], history)
    assert estimate == {"red": F(7, 20), "blue": F(9, 20), "green": F(4, 20), "white": F(0)}


def test_mle_rejects_an_action_outside_the_list() -> None:
    with pytest.raises(NfgFormatError, match=r"history\[1\]"):
        solver.frequency_estimate(["red", "blue"], ["red", "pink"])


def test_tit_for_tat_against_a_five_round_history() -> None:
    # Round 1: C (opening); rounds 2-5 copy the partner's rounds 1-4: C, D, D, C. Partner's round 5 is unused.
    assert solver.play_out("tit-for-tat", ["C", "D", "D", "C", "D"], ROLES) == ["C", "C", "D", "D", "C"]


@pytest.mark.parametrize(("strategy", "expected"), [
    ("suspicious-tit-for-tat", ["D", "C", "D", "D", "C"]),  # opens with D, then copies
    ("grim-trigger", ["C", "C", "D", "D", "D"]),  # partner's first D is in round 2 -> D from round 3 on
    # Pavlov: C; partner C -> stay C; partner D -> switch to D; partner D -> switch to C; partner C -> stay C.
    ("win-stay-lose-shift", ["C", "C", "D", "C", "C"]),
])
def test_other_strategies_against_the_same_history(strategy: str, expected: list[str]) -> None:
    assert solver.play_out(strategy, ["C", "D", "D", "C", "D"], ROLES) == expected


def test_play_out_uses_the_role_names() -> None:
    roles = {"cooperate": "green", "defect": "blue"}
    assert solver.play_out("tit-for-tat", ["blue", "green"], roles) == ["green", "blue"]


def test_unknown_strategy_is_named() -> None:
    with pytest.raises(NfgFormatError, match="unknown strategy 'tft'"):
        solver.play_out("tft", ["C"], ROLES)


@pytest.mark.parametrize(("case", "ours", "theirs", "expected"), [
    # The partner always answered C while we mixed: always-cooperate fits every round.
    ("always-cooperate", "CDCDCD", "CCCCCC", "always-cooperate"),
    # The partner copies our previous move exactly (first move C): tit-for-tat.
    ("tit-for-tat", "CDDCDC", "CCDDCD", "tit-for-tat"),
    # After our D in round 2 the partner defects forever, even when we return to C: grim trigger.
    ("grim-trigger", "CDCCCC", "CCDDDD", "grim-trigger"),
    # We always cooperated and so did the partner: always-cooperate, tit-for-tat and grim tie exactly.
    ("ambiguous", "CCCCC", "CCCCC", "ambiguous"),
    # Always D except one slip: always-defect (0.95^5 * 0.05) beats random (0.5^6).
    ("always-defect", "CCCCCC", "DDDCDD", "always-defect"),
    # Alternating regardless of our moves: every deterministic type misses often, random wins.
    ("random", "CCCCCCCC", "CDCDCDCD", "random"),
])
def test_classify_partner(case: str, ours: str, theirs: str, expected: str) -> None:
    assert solver.classify_partner(list(zip(ours, theirs)), ROLES) == expected


def test_type_likelihoods_are_exact() -> None:
    # One round, partner C after nothing: C-types predict C (19/20), always-defect 1/20, random 1/2.
    got = solver.type_likelihoods([("D", "C")], ROLES)
    assert got == {"always-cooperate": F(19, 20), "always-defect": F(1, 20), "tit-for-tat": F(19, 20),
                   "grim-trigger": F(19, 20), "random": F(1, 2)}


def test_mixed_equilibrium_of_a_2x2_game() -> None:
    # Row: H/T with payoffs [[3, -1], [-1, 1]] (zero-sum). Column mix y on H makes the row indifferent:
    # 3y - (1 - y) = -y + (1 - y) -> y = 1/3; by symmetry of the column's payoffs x = 1/3.
    game = MatrixGame.from_tables(["A", "B"], [["H", "T"], ["H", "T"]], [[3, -1], [-1, 1]], [[-3, 1], [1, -1]])
    assert solver.nash_equilibria(game) == [({"H": F(1, 3), "T": F(2, 3)}, {"H": F(1, 3), "T": F(2, 3)})]


def test_battle_of_the_sexes_has_two_pure_and_one_mixed_equilibrium() -> None:
    # Row prefers O (2 vs 1), column prefers F; mixed: row plays O w.p. 2/3, column plays O w.p. 1/3.
    game = MatrixGame.from_tables(["A", "B"], [["O", "F"], ["O", "F"]], [[2, 0], [0, 1]], [[1, 0], [0, 2]])
    equilibria = solver.nash_equilibria(game)
    assert len(equilibria) == 3
    assert ({"O": F(2, 3), "F": F(1, 3)}, {"O": F(1, 3), "F": F(2, 3)}) in equilibria


def test_rps_equilibrium_is_uniform_and_pd_is_mutual_defection() -> None:
    third = dict.fromkeys(("Rock", "Paper", "Scissors"), F(1, 3))
    assert solver.nash_equilibria(RPS) == [(third, third)]
    pure = {"Cooperate": F(0), "Defect": F(1)}
    assert solver.nash_equilibria(PD) == [(pure, pure)]


def test_weighted_rps_equilibrium_matches_hand_solution() -> None:
    # Rock beats Scissors by 2, other wins by 1. Column mix (r, p, s) equalising the row's payoffs:
    # Rock: -p + 2s, Paper: r - s, Scissors: -2r + p -> r = 1/4, p = 1/2, s = 1/4 (value 0).
    row = [[0, -1, 2], [1, 0, -1], [-2, 1, 0]]
    game = MatrixGame.from_tables(["A", "B"], [["R", "P", "S"]] * 2, row, [[-v for v in r] for r in row])
    (x, y), = solver.nash_equilibria(game)
    assert y == {"R": F(1, 4), "P": F(1, 2), "S": F(1, 4)}
    assert x == {"R": F(1, 4), "P": F(1, 2), "S": F(1, 4)}


def test_registry_games_and_openspiel_round_trip() -> None:
    assert PD.actions == (("Cooperate", "Defect"), ("Cooperate", "Defect"))
    assert PD.payoffs[1][0] == (F(10), F(0))
    back = MatrixGame.from_openspiel(PD.to_openspiel())
    assert back.payoffs == PD.payoffs and back.actions == PD.actions
    with pytest.raises(NfgFormatError, match="not an OpenSpiel matrix game"):
        MatrixGame.from_registry("tic_tac_toe")


def test_game_json_round_trip_keeps_exact_fractions() -> None:
    game = MatrixGame.from_tables(["A", "B"], [["x", "y"], ["z"]], [["1/3"], [2]], [[-1], ["0.25"]], unit="dollars")
    data = game.to_json()
    assert data["payoffs"] == [[["1/3", -1]], [[2, "1/4"]]]
    assert MatrixGame.from_json(data) == game


def _maximin_value(row: list[list[int]]) -> float:
    """The row player's value of a zero-sum game by linear programming (independent of support enumeration)."""
    from scipy.optimize import linprog

    m, n = len(row), len(row[0])
    # Variables x_1..x_m, v: maximise v s.t. sum_i x_i row[i][j] >= v for all j, sum x = 1, x >= 0.
    cost = [0.0] * m + [-1.0]
    upper = [[-row[i][j] for i in range(m)] + [1.0] for j in range(n)]
    result = linprog(cost, A_ub=upper, b_ub=[0.0] * n, A_eq=[[1.0] * m + [0.0]], b_eq=[1.0],
                     bounds=[(0, None)] * m + [(None, None)])
    assert result.success
    return -result.fun


@pytest.mark.parametrize("seed", range(12))
def test_zero_sum_equilibria_match_linear_programming(seed: int) -> None:
    import numpy as np

    rng = np.random.default_rng(seed)
    rows, cols = int(rng.integers(2, 4)), int(rng.integers(2, 4))
    row = rng.integers(-5, 6, size=(rows, cols)).tolist()
    game = MatrixGame.from_tables(["A", "B"], [[f"r{i}" for i in range(rows)], [f"c{j}" for j in range(cols)]],
                                  row, [[-v for v in r] for r in row])
    equilibria = solver.nash_equilibria(game)
    assert equilibria, "support enumeration found no equilibrium"
    for x, y in equilibria:
        value = sum(x[a] * y[b] * game.payoff(0, a, b) for a in x for b in y)
        assert float(value) == pytest.approx(_maximin_value(row), abs=1e-7)
