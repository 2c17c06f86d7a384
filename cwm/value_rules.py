"""The CWM contract's value rules: what each contract function may return, and how its values cross into the
library (the JSON-value machinery itself is ``cwm.json_values``, re-exported here). One module, called by the
checks that gate a model and by the wrapper that guards it in play.

Every value a model returns is converted to exact builtins here before anything hashes, compares, formats
or stores it (a ``str`` subclass with a spinning ``__hash__`` never reaches a dict), and checked against
the rule of its kind; a value that breaks a rule raises ``ValueBreach`` saying what and why. States become
read-only (``ReadOnlyDict``/``ReadOnlyList``): any function that tries to modify the state it was given
raises ``StateMutationError`` at that moment, so mutation is caught in every function, not only in
``apply_action``. Observations are made canonical once (numbers compare by value, a bool is not a number),
and ``InfoKey`` builds the one information-state encoding from them.

``RULES`` is the table of rules; the synthesis prompt's API block and docs/foundation.md are rendered
from it.
"""

from __future__ import annotations

import dataclasses
import math
from typing import Any

import numpy as np

from cwm.infokey import InfoKey
from cwm.json_values import (
    _NUMPY_SCALARS,
    _STR,
    MAX_DEPTH,
    MAX_INT_BITS,
    ReadOnlyDict,
    ReadOnlyList,
    StateMutationError,
    ValueBreach,
    _canon,
    _kind,
    _plain,
    _shown,
    canonical,
    canonical_flagged,
    describe,
    dumps,
    has_bool,
    items_of,
    same,
    state,
    thaw,
    untouched,
)
from cwm.types import CHANCE, JSON, TERMINAL

__all__ = [
    "MAX_DEPTH", "PROBABILITY_TOLERANCE", "RULES", "InfoKey", "ReadOnlyDict", "ReadOnlyList", "Rule",
    "StateMutationError", "ValueBreach", "action_strings", "canonical", "canonical_flagged", "chance_outcomes",
    "describe", "dumps", "finite_numbers", "has_bool", "history", "items_of", "number", "observations",
    "observations_flagged", "player", "rewards", "rules_markdown", "rules_text", "same", "state", "thaw",
    "untouched",
]

PROBABILITY_TOLERANCE = 1e-6  # chance probabilities must sum to 1 within this


@dataclasses.dataclass(frozen=True)
class Rule:
    """One value rule of the contract: what it applies to, and the rule."""

    subject: str
    rule: str


RULES: tuple[Rule, ...] = (
    Rule("state", "a dict of JSON values (dicts, lists, tuples, str, int, float, bool, None); floats finite; "
                  "keys str, int, float, bool or None, distinct once written as JSON; nested at most "
                  f"{MAX_DEPTH} deep"),
    Rule("every function", "never modifies its input. States are handed over read-only (dict and list "
                           "subclasses whose mutating methods raise): build and return new values. "
                           "copy.deepcopy(s) gives a plain, writable copy; dict(s), list(s) and s.copy() copy one "
                           "level (what they hold stays read-only)"),
    Rule("get_current_player", "an int (a bool is not an int): 0..N-1, -1 at a chance node, -4 once the game "
                               "is over"),
    Rule("get_legal_actions", "a list of distinct str; not empty unless the game is over, empty when it is; at "
                              "a chance node the possible outcomes"),
    Rule("get_chance_outcomes", "a list of (str, probability) pairs at a chance node, else empty: distinct "
                                "outcomes, finite probabilities > 0 that sum to 1 within 1e-6"),
    Rule("apply_action", "a new state (not the input object), for an action that is legal at the input"),
    Rule("get_observations", "a list of N JSON values, one per player; numbers compare by value (1 and 1.0 are "
                             "the same observation), a bool is not a number, dict keys compare as JSON writes "
                             "them (1 and \"1\" are the same key)"),
    Rule("get_rewards", "a list of N finite numbers (int or float; a bool is not a number)"),
    Rule("get_value", "one finite number"),
    Rule("resample_history", "a list of str: every action from the initial state, chance included"),
    Rule("resample_state", "a state (the rule for states above)"),
    Rule("all values", "str, int, float, list and dict subclasses are converted to the plain type (their "
                       "methods are never called); numpy scalars become Python numbers; NaN and infinity are "
                       "refused (as dict keys too), and so are numbers too large for a float where a float is "
                       f"asked for, and ints wider than {MAX_INT_BITS:,} bits in observations (JSON cannot "
                       "write them)"),
)


def rules_markdown() -> str:
    """``RULES`` as a markdown table (docs/foundation.md holds exactly this)."""
    lines = ["| value | rule |", "|---|---|"]
    lines += [f"| `{r.subject}` | {r.rule} |" if " " not in r.subject else f"| {r.subject} | {r.rule} |"
              for r in RULES]
    return "\n".join(lines)


def rules_text() -> str:
    """``RULES`` as a bulleted list, for prompts."""
    return "\n".join(f"- {r.subject}: {r.rule}." for r in RULES)


# ---------------------------------------------------------------------------------------------------
# Read-only states


# ---------------------------------------------------------------------------------------------------
# Canonical JSON (observations, histories)


# ---------------------------------------------------------------------------------------------------
# The contract functions' values


def player(value: Any, num_players: int) -> int:
    """A ``get_current_player`` answer as an int in 0..N-1, -1 or -4.

    Raises:
      ValueBreach: a bool, a non-int, or a number out of range.
    """
    if type(value) is not int:
        if type(value) in _NUMPY_SCALARS and issubclass(type(value), np.integer):
            value = value.item()  # a numpy int is a Python int (the rules say numpy scalars become numbers)
        elif type(value) is bool or not issubclass(type(value), int):
            raise ValueBreach(f"get_current_player returned {_shown(value)}; expected 0.."
                              f"{num_players - 1}, -1 (chance) or -4 (game over) as an int (a bool is not an int)")
        else:
            value = int.__index__(value)
    if value in (CHANCE, TERMINAL) or 0 <= value < num_players:
        return value  # type: ignore[no-any-return]
    raise ValueBreach(f"get_current_player returned {describe(value)}; expected 0..{num_players - 1}, -1 (chance) "
                      f"or -4 (game over)")


def action_strings(value: Any, what: str = "get_legal_actions") -> list[str]:
    """A list of distinct exact str (legal actions, chance outcome strings).

    Raises:
      ValueBreach: not a list, an element that is not a str, or a duplicate.
    """
    if type(value) is not list:
        if not issubclass(type(value), list):
            raise ValueBreach(f"{what} must return a list of str, got {_kind(value)}")
        value = items_of(value)
    if not set(map(type, value)) <= _STR:
        try:
            value = [_action(a, what) for a in value]
        except ValueBreach:
            raise ValueBreach(f"{what} must return a list of str, got {describe(value)}") from None
    if len(set(value)) != len(value):
        dupes = sorted({a for a in value if value.count(a) > 1})
        raise ValueBreach(f"{what} returned duplicate actions {dupes[:5]}")
    return value  # type: ignore[no-any-return]


def _action(value: Any, what: str) -> str:
    if type(value) is str:
        return value  # type: ignore[no-any-return]
    if issubclass(type(value), str):
        return str.__str__(value)
    raise ValueBreach(f"{what} must return str actions, got {_shown(value)}")


_CHECKED_CHANCE: dict[tuple[tuple[str, float], ...], list[tuple[str, float]]] = {}
CHECKED_CHANCE_LIMIT = 1024  # distinct outcome lists remembered (the memo is cleared when full)
_CHANCE_MEMO_MAX = 256  # longer lists are checked in full each time (bounds the memo at 256K pairs)
_CHANCE_MEMO_CHARS = 16_384  # ... and so are lists whose outcome strings hold more characters (16M at most in all)


def chance_outcomes(value: Any) -> list[tuple[str, float]]:
    """A ``get_chance_outcomes`` answer as (str, float) pairs: distinct outcomes, finite probabilities > 0
    summing to 1 within ``PROBABILITY_TOLERANCE`` (an empty list passes: the caller knows whether the state
    is a chance node).

    A game's chance nodes return the same few lists again and again (backgammon's 21 rolls at every roll), so
    a list made only of exact ``str``/``float`` pairs is checked once and remembered by its contents: a later
    equal list is answered from the memo, and a list that differs in any outcome or probability is a new key,
    checked in full. Only lists that passed enter the memo.

    Raises:
      ValueBreach: naming the first rule broken.
    """
    key = _chance_key(value)
    if key is not None:
        found = _CHECKED_CHANCE.get(key)
        if found is not None:
            return list(found)
    pairs = _check_chance(value)
    if key is not None and pairs:
        if len(_CHECKED_CHANCE) >= CHECKED_CHANCE_LIMIT:
            _CHECKED_CHANCE.clear()
        _CHECKED_CHANCE[key] = list(pairs)
    return pairs


def _chance_key(value: Any) -> tuple[tuple[str, float], ...] | None:
    """The memo key of an outcome list whose every pair is an exact ``tuple``/``list`` of an exact ``str`` and
    an exact ``float`` (so hashing and comparing it runs no code of the model's), and whose outcomes hold at
    most ``_CHANCE_MEMO_CHARS`` characters in all (a model cannot fill the trusted side's memory through the
    memo), else ``None``."""
    if type(value) is not list or len(value) > _CHANCE_MEMO_MAX:
        return None
    key = []
    chars = 0
    for item in value:
        t = type(item)
        if (t is not tuple and t is not list) or len(item) != 2:
            return None
        outcome, p = item
        if type(outcome) is not str or type(p) is not float:
            return None
        chars += len(outcome)
        key.append((outcome, p))
    return tuple(key) if chars <= _CHANCE_MEMO_CHARS else None


def _check_chance(value: Any) -> list[tuple[str, float]]:
    if not issubclass(type(value), (list, tuple)):
        raise ValueBreach(f"get_chance_outcomes must return a list of (outcome, probability) pairs, got "
                          f"{_kind(value)}")
    pairs = []
    for item in items_of(value):
        if not issubclass(type(item), (list, tuple)) or len(items_of(item)) != 2:
            raise ValueBreach(f"get_chance_outcomes must return (outcome, probability) pairs, got {describe(item)}")
        outcome, p = items_of(item)
        pairs.append((_action(outcome, "get_chance_outcomes"), _number(p, "a chance probability")))
    if not pairs:
        return pairs
    names = [a for a, _ in pairs]
    if len(set(names)) != len(names):
        raise ValueBreach(f"get_chance_outcomes lists an outcome twice: "
                          f"{sorted({a for a in names if names.count(a) > 1})[:5]}")
    bad = [(a, p) for a, p in pairs if not p > 0.0]
    if bad:
        raise ValueBreach(f"chance probabilities must be > 0, got {bad[:3]}")
    total = math.fsum(p for _, p in pairs)
    if abs(total - 1.0) > PROBABILITY_TOLERANCE:
        raise ValueBreach(f"chance probabilities must sum to 1, got sum {total!r} over {len(pairs)} outcomes")
    return pairs


def rewards(value: Any, num_players: int, what: str = "get_rewards") -> tuple[float, ...]:
    """A ``get_rewards`` answer as a tuple of N finite floats.

    Raises:
      ValueBreach: not a list of N finite numbers (bools are not numbers).
    """
    if type(value) is not list:
        if not issubclass(type(value), (list, tuple)):
            raise ValueBreach(f"{what} must return a list of {num_players} numbers, got "
                              f"{describe(value)}")
        value = items_of(value)
    if len(value) != num_players:
        raise ValueBreach(f"{what} must return a list of {num_players} numbers, got {len(value)}: {describe(value)}")
    try:
        return tuple([_number(r, "a reward") for r in value])
    except ValueBreach as e:
        raise ValueBreach(f"{what} must return a list of {num_players} numbers (finite), got {describe(value)} "
                          f"({e})") from None


def finite_numbers(items: list[Any]) -> bool:
    """Whether every item is a finite exact float or an exact int a float can hold (the hot paths' check
    before ``rewards``)."""
    for x in items:
        t = type(x)
        if t is float:
            if x - x != 0.0:
                return False
        elif t is not int or not -_FLOAT_INTS < x < _FLOAT_INTS:
            return False
    return True


_FLOAT_INTS = 2**1023  # ints beyond this do not fit in a float: the full rule words the breach


def number(value: Any, what: str) -> float:
    """One finite number as a float (``what`` names it in the error)."""
    return _number(value, what)


def _number(value: Any, what: str) -> float:
    t = type(value)
    if t is float:
        if value - value == 0.0:
            return value  # type: ignore[no-any-return]
    elif t is int:
        try:
            return float(value)
        except OverflowError:
            raise ValueBreach(f"{what} must be finite, got an int of {value.bit_length()} bits, too large for a "
                              f"float") from None
    elif t is bool:
        raise ValueBreach(f"{what} must be a number, got the bool {value!r}")
    elif issubclass(t, (int, float)) or t in _NUMPY_SCALARS:
        return _number(_plain(value, what), what)
    else:
        raise ValueBreach(f"{what} must be a number, got {_shown(value)}")
    raise ValueBreach(f"{what} must be finite, got {value!r}")


def observations(value: Any, num_players: int) -> tuple[JSON, ...]:
    """A ``get_observations`` answer: one canonical JSON value per player.

    Raises:
      ValueBreach: not a list of N JSON values.
    """
    return observations_flagged(value, num_players)[0]


def observations_flagged(value: Any, num_players: int) -> tuple[tuple[JSON, ...], bool]:
    """``observations(value, num_players)`` and whether any of them holds a bool (for ``same``)."""
    if not issubclass(type(value), (list, tuple)):
        raise ValueBreach(f"get_observations must return a list of {num_players} observations, got {_kind(value)}")
    items = items_of(value)
    if len(items) != num_players:
        raise ValueBreach(f"get_observations must return one observation per player ({num_players}), got "
                          f"{len(items)}")
    flag = [False]
    out = []
    for i, o in enumerate(items):
        try:
            out.append(_canon(o, "an observation", 0, flag))
        except ValueBreach as e:
            raise ValueBreach(f"the observation of player {i}: {e}") from None
    return tuple(out), flag[0]


def history(value: Any) -> list[str]:
    """A ``resample_history`` answer: a list (or tuple) of str; anything else, a generator included, is refused
    before any of it runs.

    Raises:
      ValueBreach: not a list (or tuple) of str.
    """
    if not issubclass(type(value), (list, tuple)):
        raise ValueBreach(f"resample_history must return a list of action strings, got {_kind(value)}")
    return [_action(a, "resample_history") for a in items_of(value)]


# ---------------------------------------------------------------------------------------------------
# Information-state keys

