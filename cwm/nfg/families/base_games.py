"""The raw material of generated items: base games as payoff tables (OpenSpiel's matrix games and seeded
variants) and the disguise that names their players, actions and payoffs.

Every function draws from the ``np.random.Generator`` it is given, in a fixed order: a family's generator
that calls them in the same order draws the same item for the same seed, bit for bit.
"""

from __future__ import annotations

import numpy as np

from cwm.nfg.game import MatrixGame
from cwm.types import JSON

COLOURS = ("red", "blue", "green", "yellow", "purple", "orange", "white", "black")
PEOPLE = (("Alice", "Bob"), ("Ana", "Ben"), ("Carla", "Dev"), ("Player 1", "Player 2"))
COMPANIES = (("Northwind", "Southfield"), ("Acme", "Bluebird"), ("Firm A", "Firm B"))
Table = list[list[int]]  # rows: player 0's actions; base action 0 of a dilemma is "cooperate"


def dilemma(rng: np.random.Generator) -> tuple[Table, Table]:
    """A prisoner's dilemma: the registry's ``prisoners_dilemma`` or a random T > R > P > S with 2R > T + S."""
    if rng.random() < 0.3:
        return int_tables(MatrixGame.from_registry("prisoners_dilemma"))
    while True:
        s, p, r, t = sorted(int(x) for x in rng.choice(np.arange(-2, 11), size=4, replace=False))
        if 2 * r > t + s:
            return [[r, s], [t, p]], [[r, t], [s, p]]


def cycle(rng: np.random.Generator) -> tuple[Table, Table]:
    """A rock-paper-scissors-like cycle: the registry's ``rock_paper_scissors`` or one with random win sizes."""
    if rng.random() < 0.3:
        return int_tables(MatrixGame.from_registry("rock_paper_scissors"))
    wins = [int(w) for w in rng.integers(1, 4, size=3)]
    row = [[0, -wins[0], wins[2]], [wins[0], 0, -wins[1]], [-wins[2], wins[1], 0]]
    return row, [[-v for v in r] for r in row]


def random_tables(rng: np.random.Generator, rows: int, cols: int) -> tuple[Table, Table]:
    """A general-sum game with integer payoffs in [-2, 9]."""
    a = rng.integers(-2, 10, size=(rows, cols)).tolist()
    b = rng.integers(-2, 10, size=(rows, cols)).tolist()
    return a, b


def any_game(rng: np.random.Generator) -> tuple[Table, Table]:
    """A dilemma, a cycle or a random game of 2 or 3 actions per player, one third each."""
    kind = rng.integers(3)
    if kind == 0:
        return dilemma(rng)
    if kind == 1:
        return cycle(rng)
    return random_tables(rng, int(rng.integers(2, 4)), int(rng.integers(2, 4)))


def int_tables(game: MatrixGame) -> tuple[Table, Table]:
    """The two players' payoff tables of an integer game."""
    return ([[int(u0) for u0, _ in row] for row in game.payoffs], [[int(u1) for _, u1 in row] for row in game.payoffs])


def dress(rng: np.random.Generator, tables: tuple[Table, Table], disguise: dict[str, JSON], *,
          shuffle: bool = True) -> tuple[MatrixGame, list[int]]:
    """Names the actions and players per the disguise; optionally lists the actions in a random order.

    Returns:
      The game and ``order``: ``order[k]`` is the base action index behind listed position ``k`` (both
      players share it for square games). Dilemmas are shuffled too, so "cooperate" (base action 0) is
      listed at ``order.index(0)``, not necessarily first; ``roles`` looks it up that way.
    """
    a, b = tables
    rows, cols = len(a), len(a[0])
    names = _action_names(rng, str(disguise["style"]), max(rows, cols))
    order = list(rng.permutation(rows)) if shuffle and rows == cols else list(range(rows))
    col_order = order if rows == cols else list(range(cols))
    row_pay = [[a[i][j] for j in col_order] for i in order]
    col_pay = [[b[i][j] for j in col_order] for i in order]
    row_names = [names[i] for i in order]
    col_names = [names[j] for j in col_order]
    pool: tuple[tuple[str, str], ...] = COMPANIES if disguise["style"] == "projects" else PEOPLE
    if disguise["style"] == "numbers":  # "Player 1 picks 2" would mix up player and action numbers
        pool = tuple(pair for pair in PEOPLE if not pair[0].startswith("Player"))
    players = pool[int(rng.integers(len(pool)))]
    game = MatrixGame.from_tables(players, [row_names, col_names], row_pay, col_pay, unit=str(disguise["unit"]))
    return game, [int(i) for i in order]


def _action_names(rng: np.random.Generator, style: str, k: int) -> list[str]:
    if style == "numbers":
        return [str(int(x)) for x in rng.choice(np.arange(1, 10), size=k, replace=False)]
    colours = [str(c) for c in rng.choice(COLOURS, size=k, replace=False)]
    return [f"project {c}" for c in colours] if style == "projects" else colours


def roles(game: MatrixGame, order: list[int], me: int) -> dict[str, str]:
    """A dressed dilemma's role names from ``me``'s side: ``{"cooperate": name, "defect": name}``."""
    names = game.actions[me]
    return {"cooperate": names[order.index(0)], "defect": names[order.index(1)]}
