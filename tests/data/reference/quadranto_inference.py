"""HAND-WRITTEN TEST FIXTURE (not LLM output): a reference inference function for Quadranto.

It implements cwm.contract.INFERENCE_API for tests/data/games/quadranto_cwm.py (and the oracle model): the
player's own placement and moves are read off its events; the opponent's placement and moves are drawn from
their posterior under uniformly random play (each legal move equally likely), by forward filtering over the
squares the opponent can be on (its quadrant as seen after every move, never on the player's square while
the game goes on) and sampling a path backwards. At the last state the events' ``terminal`` flag says
whether the game is over there, and its ``return`` whether someone won: a catch (the opponent stands on the
player's square, before the move limit or on its last move); otherwise the opponent stands anywhere its
quadrant allows but there.
"""

import random

SIZE = 4
QUADS = ["top-left", "top-right", "bottom-left", "bottom-right"]
MOVES = {"Left": (0, -1), "Right": (0, 1), "Up": (-1, 0), "Down": (1, 0), "Stay": (0, 0)}
START = [(0, 0), (2, 2)]  # the top-left corner of each player's starting quadrant


def _quadrant(square):
    return QUADS[2 * (square[0] // 2) + square[1] // 2]


def _moves(square):
    """The legal moves from ``square`` and the squares they lead to."""
    out = []
    for name, (dr, dc) in MOVES.items():
        r, c = square[0] + dr, square[1] + dc
        if 0 <= r < SIZE and 0 <= c < SIZE:
            out.append((name, (r, c)))
    return out


def _mover(step):
    """Who moves at step ``step`` of the history: chance places player 0, then player 1; then they alternate."""
    return -1 if step < 2 else (step - 2) % 2


def _filter(layer, seen, mine, caught):
    """The squares of ``layer`` that fit what the player sees: the opponent's quadrant, and the player's own
    square exactly when the opponent was ``caught`` there (else any other)."""
    return {s: m for s, m in layer.items() if _quadrant(s) == seen and (s == mine) == caught}


def _forward(events, opponent):
    """Per step, the opponent's possible squares after it with their prior masses (empty before it is placed)."""
    layers, layer = [], {}
    n = len(events) - 1
    end = events[-1]
    caught_at_end = end.get("terminal", False) and end["return"] != 0
    for k in range(n):
        after = events[k + 1]["observation"]
        if k == opponent:
            r0, c0 = START[opponent]
            layer = {(r0 + i, c0 + j): 0.25 for i in (0, 1) for j in (0, 1)}
        elif _mover(k) == opponent:
            moved = {}
            for square, mass in layer.items():
                options = _moves(square)
                for _, target in options:
                    moved[target] = moved.get(target, 0.0) + mass / len(options)
            layer = moved
        if layer:
            mine = tuple(after["my_square"]) if after["my_square"] is not None else None
            layer = _filter(layer, after["opponent_quadrant"], mine, caught_at_end and k == n - 1)
        layers.append(layer)
    return layers


def _pick(weighted, rng):
    total = sum(w for _, w in weighted)
    r = rng.random() * total
    for item, w in weighted:
        r -= w
        if r < 0:
            return item
    return weighted[-1][0]


def resample_history(events, player_id, seed):
    rng = random.Random(seed)
    opponent = 1 - player_id
    layers = _forward(events, opponent)
    n = len(events) - 1
    history = [None] * n
    square = _pick(sorted(layers[-1].items()), rng) if n > opponent else None
    for k in range(n - 1, -1, -1):
        if k == player_id:
            r, c = events[k + 1]["observation"]["my_square"]
            history[k] = f"({r},{c})"
        elif k == opponent:
            history[k] = f"({square[0]},{square[1]})"
        elif _mover(k) == player_id:
            history[k] = events[k]["action"]
        else:
            options = [((s, name), m / len(_moves(s))) for s, m in sorted(layers[k - 1].items())
                       for name, target in _moves(s) if target == square]
            square, history[k] = _pick(options, rng)
    return history
