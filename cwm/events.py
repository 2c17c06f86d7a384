"""A player's events, what an inference function is given: one per state of the game so far, oldest first.

Each event is ``{"observation": <the player's observation there>, "action": <its own action there, or
None>}``. The last event is where the player stands now, so its action is ``None``; when the game is over
there, it also carries ``"terminal": true`` and ``"return"``, the player's total return (what the game paid
it): the history sampled must end the game at that state, paying the player exactly that. No other event
carries these keys, so a function may read ``events[-1].get("terminal", False)``. (The return is given
because the observation need not show it: in Quadranto a catch on the last move looks like no catch.) Every place that
builds events (the inference checks, an agent's view of the real game, a hosted game's views) uses
``event``; ``validate`` checks events that cross a process boundary.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

from cwm.types import JSON

TERMINAL_KEY = "terminal"
RETURN_KEY = "return"


def event(observation: JSON, action: str | None = None, *, final_return: float | None = None) -> dict[str, JSON]:
    """One event: the player's observation at a state and its own action there (``None`` where it did not
    act, or has not acted yet); ``final_return`` (the player's total return) marks the end of the game."""
    out: dict[str, JSON] = {"observation": observation, "action": action}
    if final_return is not None:
        out[TERMINAL_KEY] = True
        out[RETURN_KEY] = float(final_return)
    return out


def is_over(events: Sequence[JSON]) -> bool:
    """Whether the last of ``events`` is the end of the game."""
    return bool(events) and isinstance(events[-1], dict) and events[-1].get(TERMINAL_KEY) is True


def validate(events: object) -> str | None:
    """Why ``events`` is not a list of events as ``event`` builds them, or ``None``: each a dict with an
    ``observation`` and a str-or-None ``action``, and ``"terminal": true`` with a finite number ``"return"``
    on the last one only, whose action is ``None``."""
    if not isinstance(events, list):
        return f"events must be a list, got {type(events).__name__}"
    for i, e in enumerate(events):
        if not isinstance(e, dict) or "observation" not in e or not isinstance(e.get("action", 0), (str, type(None))):
            return f"event {i} is not {{'observation': ..., 'action': str or None}}"
        extra = set(e) - {"observation", "action", TERMINAL_KEY, RETURN_KEY}
        if extra:
            return f"event {i} has unknown key(s) {sorted(extra)}"
        if (TERMINAL_KEY in e or RETURN_KEY in e) and not _final(e, last=i == len(events) - 1):
            return f"event {i}: only the last event may carry \"terminal\": true, with its \"return\" and no action"
    return None


def _final(e: dict[str, JSON], *, last: bool) -> bool:
    value = e.get(RETURN_KEY)
    number = isinstance(value, (int, float)) and not isinstance(value, bool) and math.isfinite(value)
    return last and e.get(TERMINAL_KEY) is True and number and e["action"] is None


__all__ = ["RETURN_KEY", "TERMINAL_KEY", "event", "is_over", "validate"]
