"""The trusted sandbox job of the CWM route: tabulate an LLM-written game module into plain JSON.

Imports nothing beyond the standard library: the sandbox child loads this module with only the
``cwm`` package mounted.
"""

from __future__ import annotations

import json
import math
import types
from collections.abc import Mapping
from typing import Any

JSON = Any


class TabulateError(ValueError):
    """The module's definitions are missing or malformed; the message names the definition."""


def tabulate(module: types.ModuleType, payload: Mapping[str, JSON]) -> JSON:
    """The module's players, actions, full payoff table, the data names ``payload["data"]`` asks for, and
    those of ``payload["optional"]`` that the module defines.

    Raises:
      TabulateError: a missing or malformed definition, a payoff that is not two finite numbers, or data
        that is not plain JSON.
    """
    space = vars(module)
    players, me, actions = space.get("PLAYERS"), space.get("ME"), space.get("ACTIONS")
    if not (isinstance(players, (list, tuple)) and len(players) == 2 and all(isinstance(p, str) for p in players)):
        raise TabulateError(f"PLAYERS must be a list of two names, got {players!r}")
    if me not in players:
        raise TabulateError(f"ME must be one of PLAYERS {list(players)}, got {me!r}")
    if not isinstance(actions, Mapping) or any(not isinstance(actions.get(p), (list, tuple)) for p in players):
        raise TabulateError(f"ACTIONS must map each of {list(players)} to a list of action names, got {actions!r}")
    payoff = space.get("payoff")
    if not callable(payoff):
        raise TabulateError("the module defines no function payoff(action_0, action_1)")
    table = [[_payoff_pair(payoff, a, b) for b in actions[players[1]]] for a in actions[players[0]]]
    data = {}
    for name in payload.get("data", []):
        if name not in space:
            raise TabulateError(f"the module does not define {name}")
        data[name] = _json_value(space[name], name)
    for name in payload.get("optional", []):  # names a module may define (which it does decides what follows)
        if name in space and name not in data:
            data[name] = _json_value(space[name], name)
    return {"players": list(players), "me": me, "actions": [[str(a) for a in actions[p]] for p in players],
            "payoffs": table, "data": data}


def _payoff_pair(payoff: Any, a: str, b: str) -> list[float]:
    value = payoff(a, b)
    if not isinstance(value, (list, tuple)) or len(value) != 2:
        raise TabulateError(f"payoff({a!r}, {b!r}) must return [payoff0, payoff1], got {value!r}")
    out = []
    for v in value:
        if isinstance(v, bool) or not isinstance(v, (int, float)) or not math.isfinite(v):
            raise TabulateError(f"payoff({a!r}, {b!r}) returned {value!r}: entries must be finite numbers")
        out.append(float(v))
    return out


def _json_value(value: Any, name: str) -> JSON:
    try:
        return json.loads(json.dumps(value))
    except (TypeError, ValueError) as e:
        raise TabulateError(f"{name} is not plain data (lists, dicts, strings, numbers): {e}") from e
