"""JSON views of ground-truth states: what one player observes, and the full state for open-deck records.

OpenSpiel games expose observations as structs (some C++ games), strings or tensors; cwm records them
as JSON-able dicts, exactly what the player may see. A game's view name says how. A user's module game
has the view chosen on the command line (``--view``, ``choose_view``) or else detected from its
observations (``module_view``).
"""

from __future__ import annotations

import json
import logging
import os
import re

import numpy as np
import pyspiel

from cwm.files import quiet_stderr
from cwm.types import JSON, UsageError

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


# ---------------------------------------------------------------------------------------------------
# The view of a user's game module: chosen on the command line (--view), else detected from its observations

USER_VIEWS = ("json", "text")  # the views a user's module game may have
CHOSEN_VIEWS_ENV = "CWM_GAME_VIEWS"  # {game id: view} of this process tree, inherited by its worker processes
DETECTION_GAMES = 4  # random games whose observations decide the view of a module game
DETECTION_STEPS = 400  # the most moves of each of them looked at
log = logging.getLogger("cwm.games")


def chosen_views() -> dict[str, str]:
    """The views chosen (or detected) in this process or the one that started it: ``{game id: view}``."""
    try:
        chosen = json.loads(os.environ.get(CHOSEN_VIEWS_ENV, "{}"))
    except ValueError:
        return {}
    if not isinstance(chosen, dict):
        return {}
    return {k: v for k, v in chosen.items() if isinstance(k, str) and v in USER_VIEWS}


def choose_view(game_id: str, game: pyspiel.Game, view: str) -> None:
    """Makes ``view`` the view of the module game ``game_id`` in this process and the processes it starts.

    Raises:
      UsageError: ``view`` is not one of ``USER_VIEWS``, or it is ``json`` and an observation of a sampled
        state is not a JSON object (the error quotes it).
    """
    if view not in USER_VIEWS:
        raise UsageError(f"--view {view!r}: expected one of {', '.join(USER_VIEWS)}")
    if view == "json" and (bad := non_json_observation(game)):
        raise UsageError(f"--view json: an observation of {game_id!r} is not a JSON object: {bad}")
    _remember(game_id, view)


def _remember(game_id: str, view: str) -> None:
    os.environ[CHOSEN_VIEWS_ENV] = json.dumps(chosen_views() | {game_id: view}, sort_keys=True)


def module_view(game_id: str, game: pyspiel.Game) -> str:
    """The view of a user's module game: the one chosen (``choose_view``) if any; else ``json`` when every
    observation of ``DETECTION_GAMES`` seeded random games parses as a JSON object (said in a one-line
    notice, once per process tree); else the game's default (``default_view``)."""
    chosen = chosen_views().get(game_id)
    if chosen is not None:
        return chosen
    view = default_view(game)
    if view == "text" and not non_json_observation(game):
        log.warning("cwm: notice: every observation of %d sampled games of %s is a JSON object: observations "
                    "are read as JSON (--view text keeps them as one string)", DETECTION_GAMES, game_id)
        view = "json"
    _remember(game_id, view)
    return view


def non_json_observation(game: pyspiel.Game) -> str:
    """The first observation of a few seeded random games (every player, every state reached, the last
    included) that is not a JSON object, quoted and cut, or what went wrong reading it; ``""`` when every
    one is."""
    rng = np.random.default_rng(0)
    for _ in range(DETECTION_GAMES):
        state = game.new_initial_state()
        for step in range(DETECTION_STEPS + 1):
            if bad := _non_object(state):
                return bad
            if state.is_terminal() or step == DETECTION_STEPS:
                break
            if state.is_chance_node():
                actions, probs = zip(*state.chance_outcomes())
                p = np.asarray(probs, dtype=float)
                state.apply_action(int(actions[rng.choice(len(actions), p=p / p.sum())]))
            else:
                state.apply_action(int(rng.choice(state.legal_actions())))
    return ""


def _non_object(state: pyspiel.State) -> str:
    for player in range(state.num_players()):
        try:
            with quiet_stderr():
                text = state.observation_string(player)
        except Exception as e:  # a game without observation strings: not JSON
            return f"observation_string({player}) raised {type(e).__name__}"
        try:
            value = json.loads(text)
        except ValueError:
            value = None
        if not isinstance(value, dict):
            return repr(text if len(text) <= 80 else text[:77] + "...")
    return ""
