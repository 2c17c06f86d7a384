"""Zero-sum matrix games solved exactly: the value and optimal strategies by an exact simplex, and exploitability.

The row player maximises. After shifting every payoff by a constant so that all are positive, the column
player's problem is the linear program ``max sum(y) s.t. B y <= 1, y >= 0``; its optimum gives the value
``1 / sum(y)`` and, through the dual prices of its constraints, the row player's optimal strategy (von
Neumann's minimax theorem; the construction is the standard one, e.g. Shoham & Leyton-Brown, *Multiagent
Systems*, section 4.1). The simplex runs over ``fractions.Fraction`` with Bland's rule, so it terminates and
every number it returns is exact.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence
from fractions import Fraction

from cwm.nfg.game import NfgFormatError

Matrix = Sequence[Sequence[Fraction]]


@dataclasses.dataclass(frozen=True)
class ZeroSumSolution:
    """The solution of a zero-sum game given by the row player's payoffs.

    Attributes:
      value: the row player's guaranteed payoff (the column player's is its negative).
      row: an optimal (maximin) strategy of the row player, one probability per row.
      col: an optimal (minimax) strategy of the column player, one probability per column.
    """

    value: Fraction
    row: tuple[Fraction, ...]
    col: tuple[Fraction, ...]


def solve_zero_sum(payoffs: Matrix) -> ZeroSumSolution:
    """The value and a pair of optimal strategies of the zero-sum game ``payoffs`` (the row player's payoffs).

    Raises:
      NfgFormatError: an empty or ragged matrix.
    """
    rows, cols = len(payoffs), len(payoffs[0]) if payoffs else 0
    if rows == 0 or cols == 0 or any(len(r) != cols for r in payoffs):
        raise NfgFormatError(f"zero-sum game: expected a non-empty rectangular payoff matrix, got {payoffs!r}")
    shift = 1 - min(min(r) for r in payoffs)  # every shifted payoff is >= 1, so the program is bounded
    tableau = [[Fraction(p) + shift for p in row] + [Fraction(int(i == k)) for k in range(rows)] + [Fraction(1)]
               for i, row in enumerate(payoffs)]
    objective = [Fraction(-1)] * cols + [Fraction(0)] * (rows + 1)
    basis = list(range(cols, cols + rows))  # the slack variables
    _simplex(tableau, objective, basis)
    total = objective[-1]  # sum(y) at the optimum = 1 / (value + shift)
    y = [Fraction(0)] * cols
    for i, var in enumerate(basis):
        if var < cols:
            y[var] = tableau[i][-1]
    x = objective[cols: cols + rows]  # the dual prices of the row constraints
    return ZeroSumSolution(1 / total - shift, tuple(p / total for p in x), tuple(p / total for p in y))


def _simplex(tableau: list[list[Fraction]], objective: list[Fraction], basis: list[int]) -> None:
    """Pivots ``tableau`` (constraint rows ``[A | I | b]``, ``b >= 0``) to optimality for ``max -objective·z``,
    in place; Bland's rule (lowest index enters, lowest basic index leaves on a tie) rules out cycling."""
    while True:
        entering = next((j for j, c in enumerate(objective[:-1]) if c < 0), None)
        if entering is None:
            return
        ratios = [(row[-1] / row[entering], basis[i], i) for i, row in enumerate(tableau) if row[entering] > 0]
        if not ratios:
            raise NfgFormatError("zero-sum game: the linear program is unbounded (cannot happen for a shifted game)")
        _, _, leave = min(ratios)
        _pivot(tableau, objective, leave, entering)
        basis[leave] = entering


def _pivot(tableau: list[list[Fraction]], objective: list[Fraction], row: int, col: int) -> None:
    pivot = tableau[row][col]
    tableau[row] = [v / pivot for v in tableau[row]]
    for r, other in enumerate(tableau):
        if r != row and other[col] != 0:
            factor = other[col]
            tableau[r] = [a - factor * b for a, b in zip(other, tableau[row])]
    factor = objective[col]
    objective[:] = [a - factor * b for a, b in zip(objective, tableau[row])]


def guaranteed(payoffs: Matrix, strategy: Sequence[float | Fraction]) -> float:
    """The row player's worst-case expected payoff when it plays ``strategy``: the minimum over columns."""
    cols = range(len(payoffs[0]))
    return min(sum(float(p) * float(payoffs[i][j]) for i, p in enumerate(strategy)) for j in cols)


def exploitability(payoffs: Matrix, value: Fraction, strategy: Sequence[float | Fraction]) -> float:
    """How much a best-responding opponent gains against ``strategy`` compared with optimal play:
    ``value - guaranteed(payoffs, strategy)``, in payoff units (0 for an optimal strategy; never negative
    for a probability vector)."""
    return float(value) - guaranteed(payoffs, strategy)
