"""Exact solvers for the nfg task families: best responses, dominance, estimates, partner types, play-outs, Nash.

Everything is computed with ``fractions.Fraction``, so ties are ties and an answer never depends on
floating-point rounding.
"""

from __future__ import annotations

import itertools
from collections.abc import Callable, Mapping, Sequence
from fractions import Fraction

from cwm.nfg.game import MatrixGame, NfgFormatError

COOPERATE, DEFECT = "cooperate", "defect"
Roles = Mapping[str, str]  # {"cooperate": action name, "defect": action name}
# A repeated-game rule: (own past moves, other's past moves) as roles -> next role, or None for a coin flip.
Rule = Callable[[Sequence[str], Sequence[str]], "str | None"]


def best_responses(game: MatrixGame, player: int, opponent_mix: Mapping[str, Fraction]) -> tuple[str, ...]:
    """Every pure action of ``player`` that maximises its expected payoff against ``opponent_mix``.

    Args:
      game: the game.
      player: whose best responses (0 or 1).
      opponent_mix: the other player's strategy, action name -> probability (a pure choice is {name: 1}).

    Returns:
      The maximisers in the game's action order (several on an exact tie).

    Raises:
      NfgFormatError: the mix names unknown actions, has negative entries, or does not sum to 1.
    """
    _check_mix(game, game.other(player), opponent_mix)
    values = {a: expected_payoff(game, player, a, opponent_mix) for a in game.actions[player]}
    best = max(values.values())
    return tuple(a for a in game.actions[player] if values[a] == best)


def expected_payoff(game: MatrixGame, player: int, action: str, opponent_mix: Mapping[str, Fraction]) -> Fraction:
    """``player``'s expected payoff for ``action`` against the other's mixed strategy."""
    return sum((p * game.payoff(player, action, b) for b, p in opponent_mix.items()), Fraction(0))


def _check_mix(game: MatrixGame, player: int, mix: Mapping[str, Fraction]) -> None:
    for name, p in mix.items():
        game.index(player, name)
        if p < 0:
            raise NfgFormatError(f"mixed strategy {dict(mix)}: probability of {name!r} is negative")
    if sum(mix.values(), Fraction(0)) != 1:
        raise NfgFormatError(f"mixed strategy {dict(mix)} does not sum to 1")


def dominant_action(game: MatrixGame, player: int) -> str | None:
    """``player``'s strictly dominant action (better against every opposing action), or None."""
    matrix = game.matrix(player)
    for i, action in enumerate(game.actions[player]):
        others = [row for k, row in enumerate(matrix) if k != i]
        if all(all(mine > theirs for mine, theirs in zip(matrix[i], row)) for row in others):
            return action
    return None


def frequency_estimate(actions: Sequence[str], history: Sequence[str]) -> dict[str, Fraction]:
    """The maximum-likelihood i.i.d. mixed strategy behind ``history``: each action's relative frequency.

    Raises:
      NfgFormatError: the history is empty or names an action not in ``actions``.
    """
    if not history:
        raise NfgFormatError("frequency estimate: the history is empty")
    lowered = {a.lower(): a for a in actions}
    counts = dict.fromkeys(actions, 0)
    for k, move in enumerate(history):
        if move.lower() not in lowered:
            raise NfgFormatError(f"history[{k}] = {move!r} is not one of {list(actions)}")
        counts[lowered[move.lower()]] += 1
    return {a: Fraction(c, len(history)) for a, c in counts.items()}


# ---------------------------------------------------------------------------------------------------
# Repeated prisoner's-dilemma-like play: partner types and conditional strategies


def _tit_for_tat(own: Sequence[str], other: Sequence[str]) -> str:
    return other[-1] if other else COOPERATE


def _suspicious_tit_for_tat(own: Sequence[str], other: Sequence[str]) -> str:
    return other[-1] if other else DEFECT


def _grim_trigger(own: Sequence[str], other: Sequence[str]) -> str:
    return DEFECT if DEFECT in other else COOPERATE


def _win_stay_lose_shift(own: Sequence[str], other: Sequence[str]) -> str:
    if not own:
        return COOPERATE
    if other[-1] == COOPERATE:
        return own[-1]
    return DEFECT if own[-1] == COOPERATE else COOPERATE


RULES: dict[str, Rule] = {
    "always-cooperate": lambda own, other: COOPERATE,
    "always-defect": lambda own, other: DEFECT,
    "tit-for-tat": _tit_for_tat,
    "suspicious-tit-for-tat": _suspicious_tit_for_tat,
    "grim-trigger": _grim_trigger,
    "win-stay-lose-shift": _win_stay_lose_shift,
    "random": lambda own, other: None,
}
PARTNER_TYPES = ("always-cooperate", "always-defect", "tit-for-tat", "grim-trigger", "random")
AMBIGUOUS = "ambiguous"
STRATEGIES = ("tit-for-tat", "suspicious-tit-for-tat", "grim-trigger", "win-stay-lose-shift")
DEFAULT_TREMBLE = Fraction(1, 20)


def _to_roles(moves: Sequence[str], roles: Roles, where: str) -> list[str]:
    by_name = {name.lower(): role for role, name in roles.items()}
    out = []
    for k, move in enumerate(moves):
        if move.lower() not in by_name:
            raise NfgFormatError(f"{where}[{k}] = {move!r} is not one of {sorted(roles.values())}")
        out.append(by_name[move.lower()])
    return out


def type_likelihoods(history: Sequence[tuple[str, str]], roles: Roles, *,
                     tremble: Fraction = DEFAULT_TREMBLE) -> dict[str, Fraction]:
    """The probability of the partner's moves under each partner type, given our moves.

    A deterministic type plays its rule's move with probability ``1 - tremble`` and the other move
    with probability ``tremble``; ``random`` plays each move with probability 1/2.

    Args:
      history: rounds as ``(our move, partner's move)`` action names.
      roles: which action name is ``"cooperate"`` and which is ``"defect"``.
      tremble: the chance that a deterministic type's move flips.
    """
    ours = _to_roles([r[0] for r in history], roles, "history (our moves)")
    theirs = _to_roles([r[1] for r in history], roles, "history (partner's moves)")
    out = {}
    for name in PARTNER_TYPES:
        rule, likelihood = RULES[name], Fraction(1)
        for t, move in enumerate(theirs):
            predicted = rule(theirs[:t], ours[:t])
            likelihood *= Fraction(1, 2) if predicted is None else (1 - tremble if move == predicted else tremble)
        out[name] = likelihood
    return out


def classify_partner(history: Sequence[tuple[str, str]], roles: Roles, *,
                     tremble: Fraction = DEFAULT_TREMBLE) -> str:
    """The most likely partner type (uniform prior), or ``"ambiguous"`` when the top types tie exactly."""
    likelihoods = type_likelihoods(history, roles, tremble=tremble)
    best = max(likelihoods.values())
    top = [name for name, value in likelihoods.items() if value == best]
    return top[0] if len(top) == 1 else AMBIGUOUS


def play_out(strategy: str, partner_history: Sequence[str], roles: Roles) -> list[str]:
    """Our moves, round by round, when we follow ``strategy`` and the partner makes the given moves.

    Round 1's move is the strategy's opening; round t's move sees rounds 1..t-1 only.

    Raises:
      NfgFormatError: unknown strategy, or a partner move that is not one of the role actions.
    """
    if strategy not in STRATEGIES:
        raise NfgFormatError(f"unknown strategy {strategy!r}; expected one of {list(STRATEGIES)}")
    theirs = _to_roles(partner_history, roles, "partner history")
    ours: list[str] = []
    for t in range(len(theirs)):
        move = RULES[strategy](ours, theirs[:t])
        assert move is not None  # every listed strategy is deterministic
        ours.append(move)
    return [roles[m] for m in ours]


# ---------------------------------------------------------------------------------------------------
# Nash equilibria by exact support enumeration


def nash_equilibria(game: MatrixGame) -> list[tuple[dict[str, Fraction], dict[str, Fraction]]]:
    """All Nash equilibria of a nondegenerate bimatrix game, by support enumeration over equal-size supports.

    For each pair of supports of the same size, solves the indifference equations exactly and keeps
    solutions with non-negative probabilities and no profitable deviation outside the support. In a
    degenerate game (a mixed strategy with more pure best responses than its support size) some
    equilibria can be missed; the generator only emits nondegenerate games.

    Returns:
      ``(player-0 strategy, player-1 strategy)`` pairs, each action name -> probability.
    """
    a, b = game.matrix(0), game.matrix(1)  # a[i][j]: row player; b[j][i]: column player (own rows)
    rows, cols = len(a), len(b)
    found: list[tuple[dict[str, Fraction], dict[str, Fraction]]] = []
    for k in range(1, min(rows, cols) + 1):
        for s0 in itertools.combinations(range(rows), k):
            for s1 in itertools.combinations(range(cols), k):
                y = _indifference(a, s0, s1, cols)  # column mix making the row player indifferent on s0
                x = _indifference(b, s1, s0, rows)
                if x is None or y is None or not _no_deviation(a, x, y) or not _no_deviation(b, y, x):
                    continue
                profile = (dict(zip(game.actions[0], x)), dict(zip(game.actions[1], y)))
                if profile not in found:
                    found.append(profile)
    return found


def _indifference(m: list[list[Fraction]], own: Sequence[int], other: Sequence[int],
                  size: int) -> list[Fraction] | None:
    """The other player's mix on ``other`` that equalises ``m``'s rows ``own``; None if none or not unique."""
    k = len(own)
    # Unknowns: the k probabilities and the common value v. Equations: m[i]·y - v = 0 for i in own; sum y = 1.
    system = [[m[i][j] for j in other] + [Fraction(-1), Fraction(0)] for i in own]
    system.append([Fraction(1)] * k + [Fraction(0), Fraction(1)])
    solution = _solve(system)
    if solution is None or any(p < 0 for p in solution[:k]):
        return None
    mix = [Fraction(0)] * size
    for j, p in zip(other, solution[:k]):
        mix[j] = p
    return mix


def _no_deviation(m: list[list[Fraction]], own_mix: list[Fraction], other_mix: list[Fraction]) -> bool:
    values = [sum((p * q for p, q in zip(row, other_mix)), Fraction(0)) for row in m]
    achieved = sum((p * v for p, v in zip(own_mix, values)), Fraction(0))
    return all(v <= achieved for v in values)


def _solve(augmented: list[list[Fraction]]) -> list[Fraction] | None:
    """Gauss-Jordan elimination on a square system [A | b]; None when A is singular."""
    rows = [list(r) for r in augmented]
    n = len(rows)
    for col in range(n):
        pivot = next((r for r in range(col, n) if rows[r][col] != 0), None)
        if pivot is None:
            return None
        rows[col], rows[pivot] = rows[pivot], rows[col]
        for r in range(n):
            if r != col and rows[r][col] != 0:
                factor = rows[r][col] / rows[col][col]
                rows[r] = [x - factor * y for x, y in zip(rows[r], rows[col])]
    return [rows[i][n] / rows[i][i] for i in range(n)]


def is_nondegenerate(game: MatrixGame) -> bool:
    """Whether no mixed strategy with support size k has more than k pure best responses (for either player).

    Checked conservatively: for each support S of one player (size k) and each set T of k + 1 actions of the
    other, the indifference system "a mix on S makes the other player's payoffs equal on T" must have no
    solution at all (not even one with negative entries). Support enumeration finds every equilibrium of a
    game that passes.
    """
    for own, other in ((game.matrix(1), len(game.actions[0])), (game.matrix(0), len(game.actions[1]))):
        # own[j][i]: the responder's payoff for its action j against the mixer's action i
        responders = len(own)
        if any(len({own[j][i] for j in range(responders)}) < responders for i in range(other)):
            return False  # k = 1: a pure strategy with two best responses needs only a tie
        for k in range(2, min(other, responders - 1) + 1):
            for support in itertools.combinations(range(other), k):
                for targets in itertools.combinations(range(responders), k + 1):
                    system = [[own[j][i] for i in support] + [Fraction(-1), Fraction(0)] for j in targets]
                    system.append([Fraction(1)] * k + [Fraction(0), Fraction(1)])
                    if _consistent(system):
                        return False
    return True


def _consistent(augmented: list[list[Fraction]]) -> bool:
    """Whether the linear system [A | b] has a solution (rank A == rank [A | b])."""
    return _rank([row[:-1] for row in augmented]) == _rank(augmented)


def _rank(matrix: list[list[Fraction]]) -> int:
    rows = [list(r) for r in matrix]
    rank = 0
    for col in range(len(rows[0]) if rows else 0):
        pivot = next((r for r in range(rank, len(rows)) if rows[r][col] != 0), None)
        if pivot is None:
            continue
        rows[rank], rows[pivot] = rows[pivot], rows[rank]
        for r in range(len(rows)):
            if r != rank and rows[r][col] != 0:
                factor = rows[r][col] / rows[rank][col]
                rows[r] = [x - factor * y for x, y in zip(rows[r], rows[rank])]
        rank += 1
    return rank
