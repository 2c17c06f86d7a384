"""The host server a stand-in host game runs in a hardened session child: ``host_session(module, payload)``
plays one game of the untrusted world model and answers each request with a view of the state reached.

Sample rejection (``cwm.selection``) plays agents inside a synthesized model instead of the real game: the
model is the game (its initial state, chance, legal actions, observations and returns). The model is one
more untrusted bundle, so it runs only here, in a sandbox session child (``Sandbox.open_session``) after
every layer is on, with each answer under the session's CPU budget timed from outside; its states never
leave the child. The trusted side (``cwm.sandbox.host``) validates every view again: the code answering here
shares its process with the model, so nothing it says is believed on its word.

Payload: ``{"name": str}``. Messages: ``{"op": "init"}`` (a new game) and ``{"op": "apply", "action": str}``
(the current player's move or the chance outcome drawn by the trusted side). Each is answered by the view
of the state reached, ``{"player": int, "legal": [str] (a player's turn), "chance": [[str, p]] (a chance
node), "observations": [JSON per player], "returns": [float] (once the game is over)}``, or by
``{"failed": why}`` when the model broke the contract (the game is then over).
"""

from __future__ import annotations

import types
from collections.abc import Callable
from typing import Any

from cwm import value_rules
from cwm.model import WorldModel
from cwm.model_state import ModelState
from cwm.sandbox.jobs.check import require
from cwm.types import CHANCE, JSON, TERMINAL, CwmError, ModelLoadError

_REASON_CHARS = 2000


def host_session(module: types.ModuleType, payload: dict[str, Any]) -> Callable[[JSON], JSON]:
    """The server of one host game (see the module docstring for the payload and messages).

    Raises:
      ModelLoadError: the module misses its contract functions (the session does not start).
    """
    require(module)
    return _Host(WorldModel(module, name=str(payload["name"]))).answer


class _Host:
    """One game of the host model: the current state, moved on by each request."""

    def __init__(self, model: WorldModel):
        self.model = model
        self.state: ModelState | None = None

    def answer(self, message: JSON) -> JSON:
        op = message.get("op") if isinstance(message, dict) else None
        if op not in ("init", "apply") or (op == "apply" and self.state is None):
            raise ModelLoadError(f"the host worker got a message it does not know: {value_rules.describe(message)}")
        try:
            if op == "init":
                self.state = self.model.new_initial_state()
            else:
                assert self.state is not None and isinstance(message, dict)
                self.state = self.state.child_from_string(str(message["action"]))
            return view(self.state)
        except (CwmError, value_rules.ValueBreach) as e:  # the model broke the contract: the game cannot go on
            self.state = None
            return {"failed": str(e)[:_REASON_CHARS]}


def view(state: ModelState) -> dict[str, JSON]:
    """What the trusted side needs of a host state: whose turn, the moves there, every observation, and the
    returns once the game is over (each value through the contract's rules on ``ModelState``)."""
    player = state.current_player()
    out: dict[str, JSON] = {"player": player, "observations": list(state.observations())}
    if player == CHANCE:
        out["chance"] = [[a, p] for a, p in state.chance_outcome_strings()]
    elif player == TERMINAL:
        out["returns"] = state.returns()
    else:
        out["legal"] = list(state.legal_action_strings())
    return out
