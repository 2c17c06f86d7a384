"""JSON views of ground-truth states: what one player observes, and the full state for open-deck records.

OpenSpiel games expose observations as structs (some C++ games), strings or tensors; cwm records them
as JSON-able dicts, exactly what the player may see. A game's view name says how.
"""

from __future__ import annotations

import json
import re

import pyspiel

from cwm.files import quiet_stderr
from cwm.types import JSON

# View names: how a state is turned into a JSON-able observation for one player.
#   "struct":   OpenSpiel's observation struct (games that implement ToObservationStruct)
#   "brackets": "[Key: value][Key2: v]" observation strings parsed into a dict (Leduc-style)
#   "lines":    "Key: value" observation lines parsed into a dict (bargaining-style)
#   "json":     the observation string is JSON text (our Python games), parsed as is
#   "text":     {"observation": observation_string} for anything else
VIEWS = ("struct", "brackets", "lines", "json", "text")


def default_view(game: pyspiel.Game) -> str:
    state = game.new_initial_state()
    try:
        with quiet_stderr():
            state.to_observation_struct(0)
        return "struct"
    except Exception:  # OpenSpiel raises when a game has no struct; fall back to its observation string
        return "text"


def observe(view: str, state: pyspiel.State, player: int) -> JSON:
    """Player ``player``'s observation of ``state`` as a JSON-able dict, exactly what it may see."""
    if view == "struct":
        return json.loads(state.to_observation_struct(player).to_json())
    text = state.observation_string(player)
    if view == "brackets":
        return _parse_brackets(text)
    if view == "lines":
        return _parse_lines(text)
    if view == "json":
        return json.loads(text)
    return {"observation": text}


def full_state(view: str, state: pyspiel.State) -> JSON:
    """The whole ground-truth state (hidden information included) as JSON, for open-deck trajectories."""
    if view == "struct":
        try:
            return json.loads(state.to_json())
        except Exception:  # some games have observation structs but no state struct
            pass
    return {"state": str(state), "history": [int(a) for a in state.history()]}


def _parse_brackets(text: str) -> dict[str, JSON]:
    # "[Key: value]" splits at the colon; "[Round 1]" (no colon) splits at the last space.
    out: dict[str, JSON] = {}
    for body in re.findall(r"\[([^\]]*)\]", text):
        key, sep, value = body.partition(":")
        if not sep:
            key, _, value = body.strip().rpartition(" ")
        out[_key(key or body)] = _value(value)
    return out


def _parse_lines(text: str) -> dict[str, JSON]:
    out: dict[str, JSON] = {}
    for line in text.splitlines():
        if ":" in line:
            key, value = line.split(":", 1)
            out[_key(key)] = _value(value.strip())
        elif line.strip():
            out.setdefault("notes", []).append(line.strip())
    return out


def _key(text: str) -> str:
    return re.sub(r"\W+", "_", text.strip().lower()).strip("_")


def _value(text: str) -> JSON:
    text = text.strip()
    numbers = text.split()
    if numbers and all(re.fullmatch(r"-?\d+", n) for n in numbers):
        return int(numbers[0]) if len(numbers) == 1 else [int(n) for n in numbers]
    return text
