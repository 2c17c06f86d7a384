"""The server of a sampling worker: an untrusted ``resample_history`` called for each message (the host side,
and the messages, are ``cwm.sandbox.sampling``)."""

from __future__ import annotations

import types
from collections.abc import Callable
from typing import Any

from cwm import value_rules
from cwm.types import JSON, ModelLoadError

_REASON_CHARS = 500


def sample_session(module: types.ModuleType, payload: dict[str, Any]) -> Callable[[JSON], JSON]:
    """The server of one sampling worker (see the module docstring for the messages).

    Raises:
      ModelLoadError: the module defines no ``resample_history`` (the session does not start).
    """
    resample = getattr(module, "resample_history", None)
    if not callable(resample):
        raise ModelLoadError(f"{module.__name__}: defines no resample_history(events, player_id, seed)")

    def answer(message: JSON) -> JSON:
        if not isinstance(message, dict) or set(message) != {"events", "player", "seed"}:
            raise ModelLoadError(f"the sampling worker got a message it does not know: {value_rules.describe(message)}")
        try:
            history = resample(message["events"], int(message["player"]), int(message["seed"]))
        except Exception as e:  # noqa: BLE001  the function's own failure is the answer
            return {"raised": f"{type(e).__name__}: {e}"[:_REASON_CHARS]}
        if not isinstance(history, (list, tuple)):
            return {"raised": f"resample_history returned {value_rules.describe(history)}, not a list of action strings"}
        return {"history": [str(a) for a in history]}

    return answer


__all__ = ["sample_session"]
