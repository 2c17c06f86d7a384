"""The CWM contract's value rules: what each contract function may return, and how its values cross into the
library. One module, called by the checks that gate a model and by the wrapper that guards it in play.

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
import hashlib
import json
import math
from collections.abc import Iterable
from typing import Any

import numpy as np

from cwm.types import CHANCE, JSON, TERMINAL

PROBABILITY_TOLERANCE = 1e-6  # chance probabilities must sum to 1 within this
MAX_DEPTH = 64  # states and observations nested deeper are refused (they would exhaust the stack)
_EXACT_INT_FLOAT = float(2**53)  # integral floats up to here are written as ints in canonical form


class ValueBreach(ValueError):
    """A value that breaks one of the contract's value rules (the message names the rule)."""


class StateMutationError(TypeError):
    """A model function tried to modify a state it was given (states are read-only)."""


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
    Rule("all values", "str, int, float, list and dict subclasses are converted to the plain type (their "
                       "methods are never called); numpy scalars become Python numbers; NaN and infinity are "
                       "refused"),
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


def _refuse(self: Any, *args: Any, **kwargs: Any) -> Any:
    raise StateMutationError(f"the state is read-only: a {type(self).__bases__[0].__name__} inside it was "
                             f"about to be modified; build a new one (copy.deepcopy(state), dict(...), list(...))")


class ReadOnlyDict(dict):  # type: ignore[type-arg]
    """A dict of a state: reads as a dict, refuses every change; copies are plain dicts."""

    __slots__ = ()
    __setitem__ = __delitem__ = __ior__ = clear = pop = popitem = setdefault = update = _refuse  # type: ignore

    def __copy__(self) -> dict[Any, Any]:
        return dict(self)

    def __deepcopy__(self, memo: dict[int, Any]) -> dict[Any, Any]:
        return thaw(self)  # type: ignore[no-any-return]

    def __reduce__(self) -> tuple[Any, ...]:
        return dict, (thaw(self),)


class ReadOnlyList(list):  # type: ignore[type-arg]
    """A list of a state: reads as a list, refuses every change; copies are plain lists."""

    __slots__ = ()
    __setitem__ = __delitem__ = __iadd__ = __imul__ = append = extend = insert = pop = remove = clear = sort = (
        reverse) = _refuse  # type: ignore

    def __copy__(self) -> list[Any]:
        return list(self)

    def __deepcopy__(self, memo: dict[int, Any]) -> list[Any]:
        return thaw(self)  # type: ignore[no-any-return]

    def __reduce__(self) -> tuple[Any, ...]:
        return list, (thaw(self),)


_ATOMS = frozenset({str, int, bool, type(None)})
_FROZEN = frozenset({ReadOnlyDict, ReadOnlyList})
_STR = frozenset({str})
_KEY_TYPES = (str, int, float, bool, type(None))
# numpy scalars a model may compute with: converted to the Python number they hold.
_NUMPY_SCALARS = frozenset(t for t in np.sctypeDict.values()
                           if issubclass(t, (np.integer, np.floating, np.bool_)))


def state(value: Any) -> ReadOnlyDict:
    """The read-only, exact-typed copy of a state a model returned (a state that already is one is returned
    as it is: read-only parts are shared, never copied again).

    Raises:
      ValueBreach: not a dict, not JSON-serialisable, a non-finite float, colliding keys, or too deep.
    """
    if type(value) is ReadOnlyDict:
        return value
    if not isinstance(value, dict):
        raise ValueBreach(f"a state must be a dict, got {_kind(value)}")
    return _freeze(value, 0)  # type: ignore[no-any-return]


def _freeze(v: Any, depth: int) -> Any:
    t = type(v)
    if t in _ATOMS or t in _FROZEN:
        return v
    if t is float:
        if v - v == 0.0:  # finite (inf - inf and nan - nan are nan)
            return v
        raise ValueBreach(f"a state holds the float {v!r}; only finite numbers are allowed")
    if depth >= MAX_DEPTH:
        raise ValueBreach(f"a state is nested more than {MAX_DEPTH} levels deep")
    if t is list:
        if set(map(type, v)) <= _ATOMS:
            return ReadOnlyList(v)
        return ReadOnlyList([_freeze(x, depth + 1) for x in v])
    if t is dict:
        if not set(map(type, v)) <= _STR:
            _check_keys(v, "a state")
        out = ReadOnlyDict(v)
        for k, x in dict.items(v):
            if type(x) not in _ATOMS:
                dict.__setitem__(out, k, _freeze(x, depth + 1))
        return out
    if t is tuple:
        return tuple([_freeze(x, depth + 1) for x in v])
    return _freeze(_plain(v, "a state"), depth)


def _check_keys(d: dict[Any, Any], where: str) -> None:
    seen: set[str] = set()
    for k in dict.keys(d):
        if type(k) not in _KEY_TYPES:
            raise ValueBreach(f"{where} has a dict key of type {type(k).__name__} ({describe(k)}); keys must be "
                              f"str, int, float, bool or None")
        text = _json_key(k)
        if text in seen:
            raise ValueBreach(f"{where} has two dict keys that JSON writes alike ({text!r})")
        seen.add(text)


def _plain(v: Any, where: str) -> Any:
    """The plain builtin behind a subclass or a numpy scalar, without calling any method it defines."""
    if type(v) in _NUMPY_SCALARS:
        return v.item()  # numpy's own method: a numpy scalar type cannot be one the model wrote
    if isinstance(v, str):
        return str.__str__(v)
    if isinstance(v, int):
        return int.__index__(v)
    if isinstance(v, float):
        return float.__float__(v)
    if isinstance(v, list):
        return list.copy(v)
    if isinstance(v, dict):  # dict.copy would call a subclass's own keys() and __getitem__
        return {k: x for k, x in dict.items(v)}
    if isinstance(v, tuple):
        return tuple.__getitem__(v, slice(None))
    raise ValueBreach(f"{where} holds {_kind(v)}, which is not a JSON value")


def thaw(value: Any) -> Any:
    """A plain, writable deep copy of a (read-only) JSON value."""
    t = type(value)
    if t is ReadOnlyDict or t is dict:
        return {k: thaw(x) for k, x in dict.items(value)}
    if t is ReadOnlyList or t is list:
        return [thaw(x) for x in list.__iter__(value)]
    if t is tuple:
        return tuple(thaw(x) for x in value)
    return value


# ---------------------------------------------------------------------------------------------------
# Canonical JSON (observations, histories)


def canonical(value: Any, *, where: str = "the value") -> JSON:
    """The canonical JSON form of ``value``: exact builtins, lists for tuples, str keys as JSON writes them,
    integral floats (up to 2**53) as ints, so that two values JSON calls equal are equal here.

    Raises:
      ValueBreach: not JSON, a non-finite float, colliding keys, or nested more than ``MAX_DEPTH`` deep.
    """
    return _canon(value, where, 0, [False])


def canonical_flagged(value: Any, *, where: str = "the value") -> tuple[JSON, bool]:
    """``canonical(value)`` and whether it holds a bool anywhere (what ``same`` needs to know)."""
    flag = [False]
    return _canon(value, where, 0, flag), flag[0]


def _canon(value: Any, where: str, depth: int, flag: list[bool]) -> JSON:
    t = type(value)
    if t is str or t is int or value is None:
        return value
    if t is bool:
        flag[0] = True
        return value
    if t is float:
        if value - value != 0.0:
            raise ValueBreach(f"{where} holds the float {value!r}; only finite numbers are allowed")
        return int(value) if value.is_integer() and abs(value) <= _EXACT_INT_FLOAT else value
    if depth >= MAX_DEPTH:
        raise ValueBreach(f"{where} is nested more than {MAX_DEPTH} levels deep")
    if t is list or t is ReadOnlyList or t is tuple:
        types = set(map(type, value))
        if types <= _ATOMS:
            if bool in types:
                flag[0] = True
            return list(value)
        return [x if type(x) is str else _canon(x, where, depth + 1, flag) for x in value]
    if t is dict or t is ReadOnlyDict:
        if set(map(type, value)) <= _STR:
            return {k: x if type(x) is str else _canon(x, where, depth + 1, flag) for k, x in dict.items(value)}
        _check_keys(value, where)
        return {_json_key(k): _canon(x, where, depth + 1, flag) for k, x in dict.items(value)}
    return _canon(_plain(value, where), where, depth, flag)


def _json_key(k: Any) -> str:
    """A dict key as JSON writes it (``json.dumps({1: 0})`` is ``'{"1": 0}'``)."""
    if type(k) is str:
        return k  # type: ignore[no-any-return]
    return json.dumps(k, allow_nan=False) if type(k) is not float else repr(k)


def has_bool(value: JSON) -> bool:
    """Whether a JSON value holds a bool anywhere."""
    t = type(value)
    if t is bool:
        return True
    if t is list or t is tuple:
        return any(has_bool(x) for x in value) if set(map(type, value)) & _NESTED_OR_BOOL else False
    if t is dict:
        return any(has_bool(x) for x in value.values()) if set(map(type, value.values())) & _NESTED_OR_BOOL \
            else False
    return False


_NESTED_OR_BOOL = frozenset({bool, list, dict, tuple})


def same(got: JSON, expected: JSON, *, got_bools: bool = True, expected_bools: bool = True) -> bool:
    """Whether two JSON values are the same value under the contract: ``==`` (1 == 1.0), except that a bool
    equals only a bool. ``got`` is canonical; the flags, when the caller knows them (``canonical_flagged``,
    ``has_bool``), skip the bool comparison for values that hold none.
    """
    if got != expected:
        return False
    if not (got_bools or expected_bools):
        return True
    return dumps(got) == dumps(canonical(expected))


def dumps(value: JSON) -> str:
    """The canonical text of a canonical JSON value: sorted keys, no spaces, ASCII.

    Raises:
      ValueBreach: an int too long to write (Python refuses more than 4,300 digits).
    """
    try:
        return json.dumps(value, sort_keys=True, separators=(",", ":"), allow_nan=False)
    except ValueError as e:
        raise ValueBreach(f"a value cannot be written as JSON: {e}") from None


# ---------------------------------------------------------------------------------------------------
# The contract functions' values


def player(value: Any, num_players: int) -> int:
    """A ``get_current_player`` answer as an int in 0..N-1, -1 or -4.

    Raises:
      ValueBreach: a bool, a non-int, or a number out of range.
    """
    if type(value) is not int:
        if isinstance(value, bool) or not isinstance(value, int):
            raise ValueBreach(f"get_current_player returned {_shown(value)}; expected 0.."
                              f"{num_players - 1}, -1 (chance) or -4 (game over) as an int (a bool is not an int)")
        value = int.__index__(value)
    if value in (CHANCE, TERMINAL) or 0 <= value < num_players:
        return value  # type: ignore[no-any-return]
    raise ValueBreach(f"get_current_player returned {value}; expected 0..{num_players - 1}, -1 (chance) or "
                      f"-4 (game over)")


def action_strings(value: Any, what: str = "get_legal_actions") -> list[str]:
    """A list of distinct exact str (legal actions, chance outcome strings).

    Raises:
      ValueBreach: not a list, an element that is not a str, or a duplicate.
    """
    if type(value) is not list:
        if not isinstance(value, list):
            raise ValueBreach(f"{what} must return a list of str, got {_kind(value)}")
        value = list.copy(value)
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
    if isinstance(value, str):
        return str.__str__(value)
    raise ValueBreach(f"{what} must return str actions, got {_shown(value)}")


def chance_outcomes(value: Any) -> list[tuple[str, float]]:
    """A ``get_chance_outcomes`` answer as (str, float) pairs: distinct outcomes, finite probabilities > 0
    summing to 1 within ``PROBABILITY_TOLERANCE`` (an empty list passes: the caller knows whether the state
    is a chance node).

    Raises:
      ValueBreach: naming the first rule broken.
    """
    if not isinstance(value, (list, tuple)):
        raise ValueBreach(f"get_chance_outcomes must return a list of (outcome, probability) pairs, got "
                          f"{_kind(value)}")
    pairs = []
    for item in _items(value):
        if not isinstance(item, (list, tuple)) or len(_items(item)) != 2:
            raise ValueBreach(f"get_chance_outcomes must return (outcome, probability) pairs, got {describe(item)}")
        outcome, p = _items(item)
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
        if not isinstance(value, (list, tuple)):
            raise ValueBreach(f"{what} must return a list of {num_players} numbers, got "
                              f"{describe(value)}")
        value = _items(value)
    if len(value) != num_players:
        raise ValueBreach(f"{what} must return a list of {num_players} numbers, got {len(value)}: {describe(value)}")
    try:
        return tuple([_number(r, "a reward") for r in value])
    except ValueBreach as e:
        raise ValueBreach(f"{what} must return a list of {num_players} numbers (finite), got {describe(value)} "
                          f"({e})") from None


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
        except OverflowError:  # beyond the largest float
            raise ValueBreach(f"{what} must be finite, got {describe(value)}") from None
    elif t is bool or isinstance(value, bool):
        raise ValueBreach(f"{what} must be a number, got the bool {value!r}")
    elif isinstance(value, (int, float)) or t in _NUMPY_SCALARS:
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
    if not isinstance(value, (list, tuple)):
        raise ValueBreach(f"get_observations must return a list of {num_players} observations, got {_kind(value)}")
    items = _items(value)
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
    """A ``resample_history`` answer: a list of str (consumed here, so a generator runs where it is called).

    Raises:
      ValueBreach: not a list (or tuple) of str.
    """
    if not isinstance(value, (list, tuple)):
        raise ValueBreach(f"resample_history must return a list of action strings, got {_kind(value)}")
    return [_action(a, "resample_history") for a in _items(value)]


def _items(value: Any) -> list[Any]:
    """The elements of a list or tuple (subclasses included) without calling its own ``__iter__``."""
    if type(value) is list:
        return value  # type: ignore[no-any-return]
    if isinstance(value, list):
        return list.copy(value)
    return list(tuple.__getitem__(value, slice(None)))


def _shown(value: Any) -> str:
    """What a value is, for messages: ``None``, ``a str 'win'``, ``an object of type 'X'`` (never its own repr)."""
    kind = _kind(value)
    return kind if value is None or kind.startswith("an object") else f"{kind} {describe(value)}"


def _kind(value: Any) -> str:
    if value is None:
        return "None"
    if type(value) in _ATOMS or type(value) in (float, list, dict, tuple):
        return f"a {type(value).__name__}"
    return f"an object of type {type(value).__name__!r}"


def describe(value: Any, limit: int = 120) -> str:
    """A short, safe rendering of any value: builtins by repr, anything else by its type only (its own
    ``__repr__`` may spin or lie)."""
    t = type(value)
    if t is int and value.bit_length() > 1000:
        text = f"<an int of {value.bit_length()} bits>"
    elif t in (str, int, float, bool, type(None)):
        text = repr(value)
    elif t in (list, tuple, dict, ReadOnlyDict, ReadOnlyList):
        try:
            text = repr(canonical(value))
        except ValueBreach:
            text = f"<{t.__name__} holding non-JSON values>"
        except ValueError:  # an int longer than repr writes (4,300 digits)
            text = f"<{t.__name__} holding an int too long to show>"
    else:
        text = f"<{t.__name__} object>"
    return text if len(text) <= limit else text[:limit] + "..."


# ---------------------------------------------------------------------------------------------------
# Information-state keys


class InfoKey:
    """The one information-state encoding: a hash chain over one player's observations and own actions.

    A key starts at ``START`` and is extended, state by state, with the player's canonical observation at
    that state (``observe``) and, where the player acted there, its action (``act``). Model states extend
    their parent's key (one step, no replay); an agent's view of the real game extends it over its events;
    the same events give the same key, byte for byte.
    """

    START = hashlib.blake2b(b"cwm.infokey/1", digest_size=16).digest()

    @staticmethod
    def observe(key: bytes, observation: JSON) -> bytes:
        return hashlib.blake2b(key + b"O" + dumps(observation).encode(), digest_size=16).digest()

    @staticmethod
    def act(key: bytes, action: str) -> bytes:
        return hashlib.blake2b(key + b"A" + action.encode("utf-8", "surrogatepass"), digest_size=16).digest()

    @classmethod
    def of_events(cls, events: Iterable[tuple[JSON, str | None]]) -> bytes:
        """The key of a sequence of (canonical observation, own action or None) events."""
        key = cls.START
        for observation, own in events:
            key = cls.observe(key, observation)
            if own is not None:
                key = cls.act(key, own)
        return key
