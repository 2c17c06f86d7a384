"""The seeded task generator: base games (OpenSpiel's matrix games and variants), disguises, question parameters.

Item ``i`` of family ``f`` draws everything from ``np.random.default_rng([seed, FAMILIES.index(f), i])``,
so a task never changes when other families or counts are asked for, and a run is reproducible bit for bit.
"""

from __future__ import annotations

from collections.abc import Sequence
from fractions import Fraction

import numpy as np

from cwm.nfg import render, solver
from cwm.nfg.game import MatrixGame, NfgFormatError
from cwm.nfg.tasks import FAMILIES, Task, solve, zero_sum_key
from cwm.types import JSON

COLOURS = ("red", "blue", "green", "yellow", "purple", "orange", "white", "black")
PEOPLE = (("Alice", "Bob"), ("Ana", "Ben"), ("Carla", "Dev"), ("Player 1", "Player 2"))
COMPANIES = (("Northwind", "Southfield"), ("Acme", "Bluebird"), ("Firm A", "Firm B"))
Table = list[list[int]]


def generate(families: Sequence[str] = FAMILIES, n: int = 50, *, seed: int = 0) -> list[Task]:
    """``n`` tasks of each family, in family order.

    Args:
      families: which families (names from ``FAMILIES``).
      n: items per family.
      seed: the run's seed; item ``i`` of family ``f`` uses the stream ``[seed, FAMILIES.index(f), i]``.

    Raises:
      NfgFormatError: an unknown family or a negative ``n`` (a ``ValueError``).
    """
    unknown = [f for f in families if f not in FAMILIES]
    if unknown or n < 0:
        raise NfgFormatError(f"generate: unknown families {unknown} (known: {list(FAMILIES)})" if unknown
                         else f"generate: n must be >= 0, got {n}")
    return [generate_one(f, i, seed=seed) for f in families for i in range(n)]


def generate_one(family: str, index: int, *, seed: int = 0) -> Task:
    """Item ``index`` of ``family`` for ``seed`` (see ``generate``)."""
    rng = np.random.default_rng([seed, FAMILIES.index(family), index])
    disguise: dict[str, JSON] = {
        "style": str(rng.choice(render.STYLES)),
        "unit": str(rng.choice(["points", "dollars"])),
        "probabilities": str(rng.choice(render.PROBABILITY_STYLES)),
    }
    game, me, question = _FAMILY_BUILDERS[family](rng, disguise)
    key = solve(family, game, me, question)
    messages = render.messages(family, game, me, question, key, disguise=disguise)
    return Task(f"{family}-{seed}-{index}", family, game, me, question, key, messages, disguise)


# ---------------------------------------------------------------------------------------------------
# Base games as payoff tables (rows: player 0's actions); base action 0 of a dilemma is "cooperate"


def _dilemma(rng: np.random.Generator) -> tuple[Table, Table]:
    """A prisoner's dilemma: the registry's ``prisoners_dilemma`` or a random T > R > P > S with 2R > T + S."""
    if rng.random() < 0.3:
        return _int_tables(MatrixGame.from_registry("prisoners_dilemma"))
    while True:
        s, p, r, t = sorted(int(x) for x in rng.choice(np.arange(-2, 11), size=4, replace=False))
        if 2 * r > t + s:
            return [[r, s], [t, p]], [[r, t], [s, p]]


def _cycle(rng: np.random.Generator) -> tuple[Table, Table]:
    """A rock-paper-scissors-like cycle: the registry's ``rock_paper_scissors`` or one with random win sizes."""
    if rng.random() < 0.3:
        return _int_tables(MatrixGame.from_registry("rock_paper_scissors"))
    wins = [int(w) for w in rng.integers(1, 4, size=3)]
    row = [[0, -wins[0], wins[2]], [wins[0], 0, -wins[1]], [-wins[2], wins[1], 0]]
    return row, [[-v for v in r] for r in row]


def _random(rng: np.random.Generator, rows: int, cols: int) -> tuple[Table, Table]:
    a = rng.integers(-2, 10, size=(rows, cols)).tolist()
    b = rng.integers(-2, 10, size=(rows, cols)).tolist()
    return a, b


def _int_tables(game: MatrixGame) -> tuple[Table, Table]:
    return ([[int(u0) for u0, _ in row] for row in game.payoffs], [[int(u1) for _, u1 in row] for row in game.payoffs])


def _dress(rng: np.random.Generator, tables: tuple[Table, Table], disguise: dict[str, JSON], *,
           shuffle: bool = True) -> tuple[MatrixGame, list[int]]:
    """Names the actions and players per the disguise; optionally lists the actions in a random order.

    Returns:
      The game and ``order``: ``order[k]`` is the base action index behind listed position ``k`` (both
      players share it for square games). Dilemmas are shuffled too, so "cooperate" (base action 0) is
      listed at ``order.index(0)``, not necessarily first; ``_roles`` looks it up that way.
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


def _any_game(rng: np.random.Generator) -> tuple[Table, Table]:
    kind = rng.integers(3)
    if kind == 0:
        return _dilemma(rng)
    if kind == 1:
        return _cycle(rng)
    return _random(rng, int(rng.integers(2, 4)), int(rng.integers(2, 4)))


# ---------------------------------------------------------------------------------------------------
# Families: each returns (game, me, question)

Built = tuple[MatrixGame, int, JSON]


def _best_response_pure(rng: np.random.Generator, disguise: dict[str, JSON]) -> Built:
    game, _ = _dress(rng, _any_game(rng), disguise)
    me = int(rng.integers(2))
    return game, me, {"opponent_action": str(rng.choice(game.actions[1 - me]))}


def _dominant_strategy(rng: np.random.Generator, disguise: dict[str, JSON]) -> Built:
    me = int(rng.integers(2))
    while True:
        tables = _dilemma(rng) if rng.random() < 0.5 else _random(rng, int(rng.integers(2, 4)), int(rng.integers(2, 4)))
        game, _ = _dress(rng, tables, disguise)
        if solver.dominant_action(game, me) is not None:
            return game, me, {}


def _estimate_mixed(rng: np.random.Generator, disguise: dict[str, JSON]) -> Built:
    game, _ = _dress(rng, _cycle(rng) if rng.random() < 0.5 else _random(rng, 3, int(rng.integers(2, 4))), disguise)
    me = int(rng.integers(2))
    theirs = game.actions[1 - me]
    mix = rng.dirichlet(np.ones(len(theirs)))
    length = int(rng.choice([10, 12, 15, 20]))
    history = [str(theirs[int(k)]) for k in rng.choice(len(theirs), size=length, p=mix)]
    return game, me, {"opponent_history": history}


def _best_response_mixed(rng: np.random.Generator, disguise: dict[str, JSON]) -> Built:
    game, _ = _dress(rng, _cycle(rng) if rng.random() < 0.5 else _random(rng, int(rng.integers(2, 4)), 3), disguise)
    me = int(rng.integers(2))
    theirs = game.actions[1 - me]
    denominator = int(rng.choice([2, 4, 5, 10]))
    counts = [denominator]
    while sum(c > 0 for c in counts) < 2:  # a genuinely mixed strategy: at least two actions in play
        cuts = sorted(int(c) for c in rng.integers(0, denominator + 1, size=len(theirs) - 1))
        counts = [b - a for a, b in zip([0, *cuts], [*cuts, denominator])]
    mix = {a: _fraction_text(Fraction(c, denominator)) for a, c in zip(theirs, counts)}
    return game, me, {"opponent_mix": mix}


def _fraction_text(p: Fraction) -> JSON:
    return p.numerator if p.denominator == 1 else f"{p.numerator}/{p.denominator}"


def _roles(game: MatrixGame, order: list[int], me: int) -> dict[str, str]:
    names = game.actions[me]
    return {"cooperate": names[order.index(0)], "defect": names[order.index(1)]}


def _classify_partner(rng: np.random.Generator, disguise: dict[str, JSON]) -> Built:
    game, order = _dress(rng, _dilemma(rng), disguise)
    me = int(rng.integers(2))
    roles = _roles(game, order, me)
    rule = solver.RULES[str(rng.choice(solver.PARTNER_TYPES))]
    ours: list[str] = []
    theirs: list[str] = []
    for _ in range(int(rng.integers(6, 11))):
        move = rule(theirs, ours) or str(rng.choice([solver.COOPERATE, solver.DEFECT]))
        if rng.random() < float(solver.DEFAULT_TREMBLE):
            move = solver.DEFECT if move == solver.COOPERATE else solver.COOPERATE
        ours.append(str(rng.choice([solver.COOPERATE, solver.DEFECT])))
        theirs.append(move)
    history = [[roles[a], roles[b]] for a, b in zip(ours, theirs)]
    return game, me, {"history": history, "roles": roles, "tremble": _fraction_text(solver.DEFAULT_TREMBLE)}


def _play_strategy(rng: np.random.Generator, disguise: dict[str, JSON]) -> Built:
    game, order = _dress(rng, _dilemma(rng), disguise)
    me = int(rng.integers(2))
    roles = _roles(game, order, me)
    partner = [roles[str(m)] for m in rng.choice([solver.COOPERATE, solver.DEFECT], size=int(rng.integers(5, 9)))]
    return game, me, {"strategy": str(rng.choice(solver.STRATEGIES)), "partner_history": partner, "roles": roles}


def _nash(rng: np.random.Generator, disguise: dict[str, JSON]) -> Built:
    me = int(rng.integers(2))
    kind = rng.integers(3)
    if kind == 0:
        return _dress(rng, _dilemma(rng), disguise)[0], me, {}
    if kind == 1:
        return _dress(rng, _cycle(rng), disguise)[0], me, {}
    while True:  # a 2x2 game without payoff ties (nondegenerate) and exactly one equilibrium
        a, b = _random(rng, 2, 2)
        if a[0][0] != a[1][0] and a[0][1] != a[1][1] and b[0][0] != b[0][1] and b[1][0] != b[1][1]:
            game, _ = _dress(rng, (a, b), disguise)
            if len(solver.nash_equilibria(game)) == 1:
                return game, me, {}


def _nash_3x3(rng: np.random.Generator, disguise: dict[str, JSON]) -> Built:
    """A general-sum 3x3 game that is nondegenerate and has exactly one equilibrium, a mixed one."""
    me = int(rng.integers(2))
    while True:
        game, _ = _dress(rng, _random(rng, 3, 3), disguise)
        if not solver.is_nondegenerate(game):
            continue
        equilibria = solver.nash_equilibria(game)
        if len(equilibria) == 1 and sum(p > 0 for p in equilibria[0][me].values()) >= 2:
            return game, me, {}


MAX_ZERO_SUM_SIZE = 7


def _zero_sum_maximin(rng: np.random.Generator, disguise: dict[str, JSON]) -> Built:
    """A zero-sum game of 2x2 up to 7x7 in which every pure strategy of yours is exploitable beyond the
    scoring threshold (so the answer must mix)."""
    me = int(rng.integers(2))
    while True:
        rows, cols = (int(k) for k in rng.integers(2, MAX_ZERO_SUM_SIZE + 1, size=2))
        a = rng.integers(-5, 6, size=(rows, cols)).tolist()
        game, _ = _dress(rng, (a, [[-v for v in r] for r in a]), disguise)
        rule = zero_sum_key(game, me).exploitability
        assert rule is not None
        if rule.value - max(min(r) for r in rule.payoffs) > rule.threshold:
            return game, me, {}


_FAMILY_BUILDERS = {
    "best_response_pure": _best_response_pure, "dominant_strategy": _dominant_strategy,
    "estimate_mixed": _estimate_mixed, "best_response_mixed": _best_response_mixed,
    "classify_partner": _classify_partner, "play_strategy": _play_strategy, "nash": _nash,
    "nash_3x3": _nash_3x3, "zero_sum_maximin": _zero_sum_maximin,
}
