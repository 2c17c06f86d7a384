"""Kinds of events a recorded game holds, and a choice of games (or parts of games) that covers them.

A prompt shows a few example games, and a synthesis trains on a few games; both should hold every kind of
event the game has, not only the commonest. A *kind* is read off the trajectory alone, the same way for
every game:

* ``move SHAPE`` / ``chance SHAPE``: an action by a player or by chance, ``SHAPE`` being its string with
  every card name written ``C`` and every number (with a letter before it, a coordinate such as ``E2``)
  written ``#``: ``Raise``; ``x(#,#)`` for ``x(0,2)``; ``Chance outcome:#``; ``deal C`` for ``deal QD``;
  ``Player: # Action: C`` for a gin rummy discard; ``# - #/#* #/#`` for a backgammon move that hits;
* ``end after SHAPE``: the last action of the game, so how games end (a knock, a last card drawn) counts;
* ``outcome SIGNS``: the sign of each player's return (``+-``, ``00``), so wins, losses and draws count.

The choice is the greedy rule for budgeted maximum coverage (Khuller, Moss and Naor, "The budgeted maximum
coverage problem", 1999): repeatedly take the item that adds the most uncovered kinds per unit of cost,
ties to the earlier item; it is deterministic.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence

from cwm.types import Trajectory

# A card name standing alone (``8d``, ``QD``, ``10h``) and a number, with a letter just before it (``E2``).
_CARD = re.compile(r"(?<![A-Za-z0-9])(?:10|[2-9TJQKA])[cdhsCDHS](?![A-Za-z0-9])")
_NUMBER = re.compile(r"(?<![A-Za-z])[A-Za-z]?\d+")
# A shape longer than this is cut (bargaining's chance outcome lists a whole game instance).
SHAPE_CHARS = 80


def action_shape(action: str) -> str:
    """An action string with card names written ``C``, numbers ``#`` and its white space made single
    spaces, cut to ``SHAPE_CHARS`` characters."""
    shape = _NUMBER.sub("#", _CARD.sub("C", action))
    return " ".join(shape.split())[:SHAPE_CHARS]


def step_kind(player: int, action: str) -> str:
    """The kind of one action: ``chance SHAPE`` at a chance node (a negative player), else ``move SHAPE``."""
    return f"{'chance' if player < 0 else 'move'} {action_shape(action)}"


def outcome_kind(returns: Sequence[float]) -> str:
    """The kind of a game's end by its returns: one sign per player (``+``, ``-`` or ``0``)."""
    return "outcome " + "".join("+" if r > 0 else "-" if r < 0 else "0" for r in returns)


def kinds_at(traj: Trajectory) -> list[set[str]]:
    """The kinds each step of a game shows (index ``i``: step ``i``), the end's kinds at index
    ``len(traj.steps)`` (the final state: how the game ended and what it paid)."""
    out = [{step_kind(s.player, s.action_string)} for s in traj.steps]
    end = {outcome_kind(traj.returns)}
    if traj.steps:
        end.add("end after " + action_shape(traj.steps[-1].action_string))
    out.append(end)
    return out


def kinds(traj: Trajectory) -> set[str]:
    """Every kind of event one game holds."""
    return set().union(*kinds_at(traj))


def greedy_cover(items: Sequence[set[str]], *, count: int | None = None,
                 cost: Callable[[int], float] = lambda i: 1.0, budget: float | None = None) -> list[int]:
    """Indices of ``items`` chosen to cover the most kinds: greedily, the item adding the most uncovered
    kinds per unit of ``cost`` among those that fit what is left of ``budget`` (ties: the earlier item),
    until ``count`` items are chosen, no item adds a kind, or none fits. Returned in the order chosen.
    """
    chosen: list[int] = []
    covered: set[str] = set()
    spent = 0.0
    while count is None or len(chosen) < count:
        best, best_gain = -1, 0.0
        for i, item in enumerate(items):
            fits = budget is None or spent + cost(i) <= budget
            if i in chosen or not fits or not item - covered:
                continue
            gain = len(item - covered) / max(cost(i), 1e-12)
            if gain > best_gain:
                best, best_gain = i, gain
        if best < 0:
            break
        chosen.append(best)
        covered |= items[best]
        spent += cost(best)
    return chosen


def covering_games(pool: Sequence[Trajectory], count: int) -> list[Trajectory]:
    """``count`` games of ``pool`` that cover its kinds of events (``greedy_cover``, each game costing one),
    then the earliest games not chosen, while fewer than ``count``; in the pool's order."""
    chosen = set(greedy_cover([kinds(t) for t in pool], count=count))
    for i in range(len(pool)):
        if len(chosen) >= count:
            break
        chosen.add(i)
    return [pool[i] for i in sorted(chosen)]


__all__ = ["SHAPE_CHARS", "action_shape", "covering_games", "greedy_cover", "kinds", "kinds_at", "outcome_kind", "step_kind"]
