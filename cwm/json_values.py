"""JSON values as the CWM contract handles them: exact builtins, read-only states, canonical forms, and the
one information-state key built from them (``cwm.value_rules`` holds the per-function rules and re-exports these).

Every value a model returns is converted here before anything hashes, compares, formats or stores it: a
subclass of ``str``/``int``/``float``/``list``/``dict`` is read through its base type's own methods (its
overrides are never called), numpy scalars become Python numbers. States become read-only
(``ReadOnlyDict``/``ReadOnlyList``, made only by this module): a function that tries to modify the state it
was given raises ``StateMutationError`` at that moment, and what they hold is kept out of reach of the
unbound methods of ``list`` and ``dict``, so a state never changes. Observations are made canonical once (numbers
compare by value, a bool is not a number), and ``InfoKey`` builds the information-state encoding from them.
"""

from __future__ import annotations

import json
import math
import types
from typing import Any

import numpy as np

from cwm import text
from cwm.types import JSON

MAX_DEPTH = 64  # states and observations nested deeper are refused (they would exhaust the stack)


# ints wider than this are refused in canonical JSON: Python writes at most 4,300 digits (about 14,284 bits)
MAX_INT_BITS = 14_000


class ValueBreach(ValueError):
    """A value that breaks one of the contract's value rules (the message names the rule)."""


class StateMutationError(TypeError):
    """A model function tried to modify a state it was given (states are read-only)."""


def _refuse(self: Any, *args: Any, **kwargs: Any) -> Any:
    raise StateMutationError(f"the state is read-only: a {type(self).__bases__[0].__name__} inside it was "
                             f"about to be modified; build a new one (copy.deepcopy(state), dict(...), list(...))")


def _made_by_the_library(self: Any, *args: Any, **kwargs: Any) -> None:
    # a read-only container is trusted as checked (``state`` returns it as it is): only this module makes them
    raise TypeError(f"a {type(self).__name__} is made by the library only; build a dict or a list")


# A read-only container is a list/dict subclass (``isinstance(state, dict)`` holds, as models expect) whose own
# list/dict storage is a decoy: what it holds lives in a slot that no method of ``list``/``dict`` reaches (a
# list, or a read-only mapping of a dict no one else holds), under a dunder name, which the sandbox's gate
# refuses to read on any object. So ``list.append(row, v)`` and ``dict.update(state, ...)``, however a model
# gets hold of them (``type([]).append``, ``super()``, a subclass of ``list``), change only the decoy, never
# the state. Reads go through the slot; iterating a container whose decoy was changed raises
# ``StateMutationError`` (the model learns what it tried), and ``state`` refuses one handed back. A list's
# decoy is empty; a dict's holds one entry, because ``json``'s C encoder writes a dict whose own storage is
# empty as ``{}`` without asking it for its items.
_DECOY = {object(): None}


def _tampered(self: Any) -> StateMutationError:
    """The error for a read-only container whose decoy a model changed; the decoy is put back first, so the
    one try is refused once, at the call that meets it, and the state reads as before in later calls."""
    _restore(self)
    base = type(self).__bases__[0].__name__
    return StateMutationError(f"the state is read-only: a {base} inside it was changed through an unbound {base} "
                              f"method ({_UNBOUND[base]}-style), which changes nothing of the state; build a new "
                              f"one (copy.deepcopy(state), dict(...), list(...))")


_UNBOUND = {"list": "list.append(x, v)", "dict": "dict.update(x, ...)"}


def _restore(self: Any) -> None:
    if type(self) is ReadOnlyList:
        list.clear(self)
    else:
        dict.clear(self)
        dict.update(self, _DECOY)


class ReadOnlyDict(dict):  # type: ignore[type-arg]
    """A dict of a state: reads as a dict, refuses every change; copies are plain dicts. Only this module makes
    them (``type(state)(...)`` raises ``TypeError``); its items live in a read-only mapping, out of reach of
    ``dict``'s own methods."""

    __slots__ = ("__cwm_map__",)
    __setitem__ = __delitem__ = __ior__ = clear = pop = popitem = setdefault = update = _refuse  # type: ignore
    __setattr__ = __delattr__ = _refuse  # type: ignore[assignment]
    __init__ = _made_by_the_library  # type: ignore[assignment]
    __cwm_map__: types.MappingProxyType[Any, Any]

    def __getitem__(self, key: Any) -> Any:
        return self.__cwm_map__[key]

    def get(self, key: Any, default: Any = None) -> Any:
        return self.__cwm_map__.get(key, default)

    def __contains__(self, key: Any) -> bool:
        return key in self.__cwm_map__

    def __len__(self) -> int:
        return len(self.__cwm_map__)

    def __iter__(self) -> Any:
        if dict.__len__(self) != 1:
            raise _tampered(self)
        return iter(self.__cwm_map__)

    def __reversed__(self) -> Any:
        return reversed(self.__cwm_map__)

    def keys(self) -> Any:
        if dict.__len__(self) != 1:
            raise _tampered(self)
        return self.__cwm_map__.copy().keys()  # a view of a copy: a view's .mapping must not reach the items

    def values(self) -> Any:
        if dict.__len__(self) != 1:
            raise _tampered(self)
        return self.__cwm_map__.copy().values()

    def items(self) -> Any:
        if dict.__len__(self) != 1:
            raise _tampered(self)
        return self.__cwm_map__.copy().items()

    def __eq__(self, other: object) -> bool:
        mine, theirs = _map_sides(self.__cwm_map__, other)
        return mine == theirs  # type: ignore[no-any-return]

    def __ne__(self, other: object) -> bool:
        mine, theirs = _map_sides(self.__cwm_map__, other)
        return mine != theirs  # type: ignore[no-any-return]

    def __or__(self, other: Any) -> Any:
        return self.__cwm_map__.copy() | other if isinstance(other, dict) else NotImplemented

    def __ror__(self, other: Any) -> Any:
        return other | self.__cwm_map__.copy() if isinstance(other, dict) else NotImplemented

    def __repr__(self) -> str:
        return repr(self.__cwm_map__.copy())

    def copy(self) -> dict[Any, Any]:
        return self.__cwm_map__.copy()

    def __copy__(self) -> dict[Any, Any]:
        return self.__cwm_map__.copy()

    def __deepcopy__(self, memo: dict[int, Any]) -> dict[Any, Any]:
        return thaw(self)  # type: ignore[no-any-return]

    def __reduce__(self) -> tuple[Any, ...]:
        return dict, (thaw(self),)


class ReadOnlyList(list):  # type: ignore[type-arg]
    """A list of a state: reads as a list, refuses every change; copies are plain lists. Only this module makes
    them (``type(state["board"])(...)`` raises ``TypeError``); its items live in a list of its own, out of
    reach of ``list``'s own methods."""

    __slots__ = ("__cwm_items__",)
    __setitem__ = __delitem__ = __iadd__ = __imul__ = append = extend = insert = pop = remove = clear = sort = (
        reverse) = _refuse  # type: ignore
    __setattr__ = __delattr__ = _refuse  # type: ignore[assignment]
    __init__ = _made_by_the_library  # type: ignore[assignment]
    __cwm_items__: list[Any]

    def __getitem__(self, index: Any) -> Any:
        return self.__cwm_items__[index]  # a slice is a new plain list, as a list's is

    def __len__(self) -> int:
        return len(self.__cwm_items__)

    def __iter__(self) -> Any:
        if list.__len__(self):
            raise _tampered(self)
        # over a tuple of the items: a list's iterator hands its list to copy.deepcopy (its __reduce__), a
        # tuple's hands over only the tuple, which nothing changes
        return iter(tuple(self.__cwm_items__))

    def __reversed__(self) -> Any:
        return reversed(tuple(self.__cwm_items__))

    def __contains__(self, item: Any) -> bool:
        return item in self.__cwm_items__

    def index(self, *args: Any) -> int:
        return self.__cwm_items__.index(*args)

    def count(self, item: Any) -> int:
        return self.__cwm_items__.count(item)

    def __eq__(self, other: object) -> Any:
        mine, theirs = _sides(self.__cwm_items__, other)
        return mine == theirs

    def __ne__(self, other: object) -> Any:
        mine, theirs = _sides(self.__cwm_items__, other)
        return mine != theirs

    def __lt__(self, other: Any) -> Any:
        mine, theirs = _sides(self.__cwm_items__, other)
        return mine < theirs

    def __le__(self, other: Any) -> Any:
        mine, theirs = _sides(self.__cwm_items__, other)
        return mine <= theirs

    def __gt__(self, other: Any) -> Any:
        mine, theirs = _sides(self.__cwm_items__, other)
        return mine > theirs

    def __ge__(self, other: Any) -> Any:
        mine, theirs = _sides(self.__cwm_items__, other)
        return mine >= theirs

    def __add__(self, other: Any) -> Any:
        if not isinstance(other, list):
            return NotImplemented
        mine, theirs = _sides(self.__cwm_items__, other)
        return mine + theirs

    def __radd__(self, other: Any) -> Any:
        if not isinstance(other, list):
            return NotImplemented
        mine, theirs = _sides(self.__cwm_items__, other)
        return theirs + mine

    def __mul__(self, times: Any) -> Any:
        # an int repeats the items in C; anything else gets a copy (its __rmul__ would receive the operand)
        return self.__cwm_items__ * times if type(times) is int else self.__cwm_items__.copy() * times

    __rmul__ = __mul__

    def __repr__(self) -> str:
        return repr(self.__cwm_items__)

    def copy(self) -> list[Any]:
        return self.__cwm_items__.copy()

    def __copy__(self) -> list[Any]:
        return self.__cwm_items__.copy()

    def __deepcopy__(self, memo: dict[int, Any]) -> list[Any]:
        return thaw(self)  # type: ignore[no-any-return]

    def __reduce__(self) -> tuple[Any, ...]:
        return list, (thaw(self),)


def _sides(items: list[Any], other: Any) -> tuple[list[Any], Any]:
    """The two operands of a read-only list's comparison or addition, so that no foreign object ever receives
    ``items`` itself: against an exact list or another read-only list's items, ``list``'s own method answers
    in C and calls no method of the other side with them; anything else (whose reflected ``__eq__``,
    ``__gt__``, ``__radd__`` ... a model may define) meets a copy."""
    if type(other) is list:
        return items, other
    if type(other) is ReadOnlyList:
        return items, _ITEMS(other)
    return items.copy(), other


def _map_sides(mapping: types.MappingProxyType[Any, Any], other: Any) -> tuple[Any, Any]:
    """The two operands of a read-only dict's comparison: a ``mappingproxy`` compares by handing the dict it
    shows to the other side, so only an exact dict or another read-only dict's mapping meets it; anything
    else meets a copy."""
    if type(other) is dict:
        return mapping, other
    if type(other) is ReadOnlyDict:
        return mapping, _MAP(other)
    return mapping.copy(), other


_ITEMS = vars(ReadOnlyList)["__cwm_items__"].__get__
_MAP = vars(ReadOnlyDict)["__cwm_map__"].__get__
_SET_ITEMS = vars(ReadOnlyList)["__cwm_items__"].__set__
_SET_MAP = vars(ReadOnlyDict)["__cwm_map__"].__set__
text.STORAGE.update({ReadOnlyList: _ITEMS, ReadOnlyDict: _MAP})


def _read_only_list(items: list[Any]) -> ReadOnlyList:
    """A read-only list of ``items``, which the caller gives up (it must hold it nowhere else)."""
    out = list.__new__(ReadOnlyList)
    _SET_ITEMS(out, items)
    return out


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
    t = type(value)
    if t is dict:
        return _freeze_dict(value, 0)
    if t is ReadOnlyDict:
        return _kept(value)
    if not issubclass(t, dict):
        raise ValueBreach(f"a state must be a dict, got {_kind(value)}")
    return _freeze(value, 0)  # type: ignore[no-any-return]


def _freeze(v: Any, depth: int) -> Any:
    t = type(v)
    if t in _ATOMS:
        return v
    if t in _FROZEN:
        return _kept(v)
    if t is float:
        if v - v == 0.0:  # finite (inf - inf and nan - nan are nan)
            return v
        raise ValueBreach(f"a state holds the float {v!r}; only finite numbers are allowed")
    if depth >= MAX_DEPTH:
        raise ValueBreach(f"a state is nested more than {MAX_DEPTH} levels deep")
    if t is list:
        items = v.copy()
        if _flat(items):
            return _read_only_list(items)
        return _read_only_list([x if type(x) in _ATOMS else _freeze(x, depth + 1) for x in items])
    if t is dict:
        return _freeze_dict(v, depth)
    if t is tuple:
        return tuple([_freeze(x, depth + 1) for x in v])
    return _freeze(_plain(v, "a state"), depth)


def _freeze_dict(v: dict[Any, Any], depth: int = 0) -> ReadOnlyDict:
    """The read-only copy of an exact dict, in one pass over a copy of it that nothing else holds: its keys
    checked once as a set of types, its atoms kept, a flat list (atoms, or exact numbers whose exact sum is
    finite: the common row of a state) copied and frozen in place, a row kept from the state the model was
    given (already read-only) shared, anything else (a non-finite float included) frozen by ``_freeze``."""
    inner = dict.copy(v)
    if not set(map(type, inner)) <= _STR:
        _check_keys(inner, "a state")
    for k, x in inner.items():  # values are replaced in place: the dict's size never changes
        tx = type(x)
        if tx in _ATOMS:
            continue
        if tx is list:
            items = x.copy()  # checked after the copy: what the model still holds may change, the copy not
            kinds = set(map(type, items))
            if kinds <= _ATOMS or kinds <= _NUMBERS and _finite_sum(items):
                row = _LIST_NEW(ReadOnlyList)
                _SET_ITEMS(row, items)
                inner[k] = row
                continue
        elif tx in _FROZEN:  # a row a model kept from the state it was given: shared, never copied again
            _kept(x)
            continue
        inner[k] = _freeze(x, depth + 1)
    # the read-only dict of ``inner``, which nothing else holds (made here only, once per state a model returns)
    out = _DICT_NEW(ReadOnlyDict)
    _DICT_UPDATE(out, _DECOY)
    _SET_MAP(out, _PROXY(inner))
    return out


# ``state(value)`` for a value that is an exact ``dict`` (the caller tested ``type(value) is dict``): the same
# read-only copy, the same breaches, without state()'s dispatch on the path every new state of a search takes.
exact_dict_state = _freeze_dict


_LIST_NEW = list.__new__
_DICT_NEW, _DICT_UPDATE, _PROXY = dict.__new__, dict.update, types.MappingProxyType


def _finite_sum(items: list[Any]) -> bool:
    """Whether exact ints, bools and floats have a finite exact sum (``math.fsum``): only if every float is
    finite (an inf or a nan makes it inf or nan, or raises); a sum too large for a float is ``False`` too,
    and the full walk then keeps the list or names the breach."""
    try:
        total = math.fsum(items)
    except (OverflowError, ValueError):
        return False
    return total - total == 0.0


def untouched(value: Any) -> None:
    """Raises ``StateMutationError`` when ``value`` is a read-only dict or list whose own (decoy) storage a model
    changed through an unbound ``dict``/``list`` method: called on the state a model function was given, after
    the call (the top level only: a nested container raises when it is next iterated or handed back)."""
    t = type(value)
    if (t is ReadOnlyDict and dict.__len__(value) != 1) or (t is ReadOnlyList and list.__len__(value)):
        raise _tampered(value)


def _kept(v: Any) -> Any:
    """A read-only container a model handed back, checked to be as this module made it: its own (empty)
    list/dict storage still empty, so no unbound ``list``/``dict`` method was called on it."""
    if (list.__len__(v) if type(v) is ReadOnlyList else dict.__len__(v) != 1):
        _restore(v)  # refused once, here: the state it belongs to reads as before in later calls
        base = type(v).__bases__[0].__name__
        raise ValueBreach(f"a state holds a read-only {base} of the state it was given that the model tried to "
                          f"change through an unbound method ({_UNBOUND[base]}-style); states are read-only")
    return v


def _flat(items: list[Any]) -> bool:
    """Whether a list holds only atoms and finite exact floats (kept as they are: nothing to convert); a
    non-finite float makes it ``False``, and the full walk then names the breach."""
    kinds = set(map(type, items))
    if kinds <= _ATOMS:
        return True
    if kinds <= _NUMBERS and _finite_sum(items):
        return True
    return kinds <= _FLAT and _finite_floats(items)


def _finite_floats(items: list[Any]) -> bool:
    return not any(type(x) is float and x - x != 0.0 for x in items)  # inf - inf and nan - nan are nan


_FLAT = _ATOMS | {float}
_NUMBERS = frozenset({int, bool, float})


def _check_keys(d: Any, where: str) -> None:
    seen: set[str] = set()
    for k in (_MAP(d).keys() if type(d) is ReadOnlyDict else dict.keys(d)):
        if type(k) not in _KEY_TYPES:
            raise ValueBreach(f"{where} has a dict key of type {type(k).__name__} ({describe(k)}); keys must be "
                              f"str, int, float, bool or None")
        text = _json_key(k)
        if text in seen:
            raise ValueBreach(f"{where} has two dict keys that JSON writes alike ({text!r})")
        seen.add(text)


def _plain(v: Any, where: str) -> Any:
    """The plain builtin behind a subclass or a numpy scalar, without calling any method it defines."""
    t = type(v)  # never isinstance: it reads the value's own __class__
    if t in _NUMPY_SCALARS:
        return v.item()  # numpy's own method: a numpy scalar type cannot be one the model wrote
    if t in _FROZEN:
        return v.copy()  # the library's own class: a plain copy of what it holds
    if issubclass(t, str):
        return str.__str__(v)
    if issubclass(t, int):
        return int.__index__(v)
    if issubclass(t, float):
        return float.__float__(v)
    if issubclass(t, list):
        return list.copy(v)
    if issubclass(t, dict):
        return dict(dict.items(v))  # dict.copy would call a subclass's own keys() when it defines __iter__
    if issubclass(t, tuple):
        return tuple.__getitem__(v, slice(None))
    raise ValueBreach(f"{where} holds {_kind(v)}, which is not a JSON value")


_NESTED = frozenset({dict, list, tuple, ReadOnlyDict, ReadOnlyList})


def thaw(value: Any) -> Any:
    """A plain, writable deep copy of a (read-only) JSON value (what ``copy.deepcopy`` of a state gives a
    model). A list or dict that holds no container is copied in one call, its items shared (they are
    immutable); only containers are walked."""
    t = type(value)
    if t is ReadOnlyDict or t is dict:
        items = _MAP(value) if t is ReadOnlyDict else value
        if _NESTED.isdisjoint(map(type, items.values())):
            return items.copy()  # a plain dict, also of a ReadOnlyDict's mapping
        return {k: x if type(x) not in _NESTED else thaw(x) for k, x in items.items()}
    if t is ReadOnlyList or t is list:
        items = _ITEMS(value) if t is ReadOnlyList else value
        if _NESTED.isdisjoint(map(type, items)):
            return list(items)  # a plain list, also of a ReadOnlyList's tuple
        return [x if type(x) not in _NESTED else thaw(x) for x in items]
    if t is tuple:
        return tuple(thaw(x) for x in value)
    return value


def canonical(value: Any, *, where: str = "the value") -> JSON:
    """The canonical JSON form of ``value``: exact builtins, lists for tuples, str keys as JSON writes them,
    integral floats as the ints they equal (exactly: every finite float is a whole number or not), so that two
    values ``==`` calls equal, bools apart, are equal here and write the same JSON.

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
    if t is str or value is None:
        return value
    if t is int:
        if value.bit_length() > MAX_INT_BITS:
            raise ValueBreach(f"{where} holds an int of {value.bit_length()} bits, too long to write as JSON")
        return value
    if t is bool:
        flag[0] = True
        return value
    if t is float:
        if value - value != 0.0:
            raise ValueBreach(f"{where} holds the float {value!r}; only finite numbers are allowed")
        return int(value) if value.is_integer() else value
    if depth >= MAX_DEPTH:
        raise ValueBreach(f"{where} is nested more than {MAX_DEPTH} levels deep")
    if t is list or t is ReadOnlyList or t is tuple:
        if t is ReadOnlyList:
            value = _ITEMS(value)  # what it holds, whatever its decoy storage holds
        kinds = set(map(type, value))
        if kinds <= _ATOMS and not (int in kinds and any(type(x) is int and x.bit_length() > MAX_INT_BITS
                                                         for x in value)):
            if bool in kinds:
                flag[0] = True
            return list(value)
        return [x if type(x) is str else _canon(x, where, depth + 1, flag) for x in value]
    if t is dict or t is ReadOnlyDict:
        if t is ReadOnlyDict:
            value = _MAP(value)
        if set(map(type, value)) <= _STR:
            return {k: x if type(x) is str else _canon(x, where, depth + 1, flag) for k, x in value.items()}
        _check_keys(value, where)
        return {_json_key(k): _canon(x, where, depth + 1, flag) for k, x in value.items()}
    return _canon(_plain(value, where), where, depth, flag)


def _json_key(k: Any) -> str:
    """A dict key as JSON writes it (``json.dumps({1: 0})`` is ``'{"1": 0}'``).

    Raises:
      ValueBreach: a non-finite float key, or an int key too long to write.
    """
    if type(k) is str:
        return k  # type: ignore[no-any-return]
    if type(k) is float:
        if k - k != 0.0:
            raise ValueBreach(f"a dict key is the float {k!r}; only finite numbers are allowed")
        return repr(k)
    if type(k) is int and k.bit_length() > MAX_INT_BITS:
        raise ValueBreach(f"a dict key is an int of {k.bit_length()} bits, too long to write as JSON")
    return json.dumps(k)


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


def items_of(value: Any) -> list[Any]:
    """The elements of a list or tuple (subclasses included) without calling its own ``__iter__``."""
    if type(value) is list:
        return value  # type: ignore[no-any-return]
    if type(value) is ReadOnlyList:
        return _ITEMS(value).copy()
    if issubclass(type(value), list):
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
        except ValueError:  # not JSON (ValueBreach), or too long to write
            text = f"<{t.__name__} holding non-JSON values>"
    else:
        text = f"<{t.__name__} object>"
    return text if len(text) <= limit else text[:limit] + "..."

