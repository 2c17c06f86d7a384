"""What candidate code can reach from what it is given, walked the way an attacker would.

The walk starts from the views of every allowed module (and of the allowed submodules), the restricted
builtins and objects the allowed modules hand out, and follows every attribute the gate lets a model read
on some object (private names included: a method called with any object as its ``self`` reads those),
every dict value and sequence item, and ``type(x)``. Nothing it reaches may be a real module, a frame,
code object, cell or traceback, a ctypes or cffi object, or one of the helpers that read attributes, run
code or reach frames by name. The same walk with one rule weakened finds the real builtins, so it can fail.
"""

from __future__ import annotations

import builtins
import enum
import functools
import json
import operator
import random
import re
import string
import sys
import types
import typing
import warnings
from collections.abc import Callable, Iterator
from typing import Any

import numpy as np
import pytest

from cwm.sandbox import names
from cwm.sandbox.layers import restricted_builtins
from cwm.sandbox.names import ALLOWED_IMPORTS, ALLOWED_SUBMODULES

_SCALARS = (int, float, complex, str, bytes, bool, type(None))
_BAD_TYPES = (types.FrameType, types.CodeType, types.TracebackType, types.CellType, operator.attrgetter,
              operator.methodcaller, operator.itemgetter, string.Formatter, typing.ForwardRef)
_BAD_MODULES = ("ctypes", "_ctypes", "cffi", "_cffi_backend")
_BAD_CALLABLES = {
    **{f"builtins.{n}": getattr(builtins, n) for n in ("eval", "exec", "compile", "open", "getattr", "setattr",
                                                       "delattr", "vars", "globals", "locals", "__import__",
                                                       "breakpoint", "input")},
    "sys._getframe": sys._getframe, "functools.update_wrapper": functools.update_wrapper,
    "typing.get_type_hints": typing.get_type_hints, "enum.global_enum": enum.global_enum,
}


def roots() -> tuple[dict[str, Any], set[int]]:
    """The walk's starting points, and the ids of the views (the only modules allowed to be reached)."""
    allowed = restricted_builtins()
    importer = allowed.pop("__import__")
    start: dict[str, Any] = {name: importer(name) for name in sorted(ALLOWED_IMPORTS)}
    views = {id(v) for v in start.values()}
    for sub in ALLOWED_SUBMODULES:
        parent, _, leaf = sub.partition(".")
        views.add(id(getattr(start[parent], leaf)))
    start.update({f"builtins.{k}": v for k, v in allowed.items()})
    start.update({"Random(0)": random.Random(0), "default_rng(0)": np.random.default_rng(0), "array": np.zeros(3),
                  "pattern": re.compile("a"), "match": re.compile("a").match("a"), "decoder": json.JSONDecoder(),
                  "encoder": json.JSONEncoder(), "generator": (x for x in ()), "exception": ValueError(),
                  "alias": typing.List[int], "seed_sequence": np.random.SeedSequence(0)})  # noqa: UP006
    return start, views


def _children(obj: Any, path: str, readable: Callable[[str], bool]) -> Iterator[tuple[Any, str]]:
    yield type(obj), f"type({path})"
    if isinstance(obj, dict):
        yield from ((v, f"{path}[{k!r}]") for k, v in list(obj.items()) if isinstance(k, (str, int)))
    elif isinstance(obj, (list, tuple)):
        yield from ((v, f"{path}[{i}]") for i, v in enumerate(obj[:200]))
    try:
        attributes = dir(obj)
    except Exception:  # noqa: BLE001  (an object whose dir() raises has nothing to walk)
        return
    for name in attributes:
        if readable(name):
            try:
                yield getattr(obj, name), f"{path}.{name}"
            except Exception:  # noqa: BLE001  (a property that raises gives the attacker nothing either)
                continue


def _why_bad(obj: Any, views: set[int], bad_ids: dict[int, str]) -> str:
    if isinstance(obj, types.ModuleType) and id(obj) not in views:
        return f"the module {obj.__name__}"
    if isinstance(obj, _BAD_TYPES) or (isinstance(obj, type) and issubclass(obj, _BAD_TYPES)):
        return f"a {type(obj).__name__}"
    if str(getattr(type(obj), "__module__", "")).split(".")[0] in _BAD_MODULES:
        return f"a ctypes/cffi {type(obj).__name__}"
    return bad_ids.get(id(obj), "")


def walk(readable: Callable[[str], bool], depth: int = 5) -> tuple[dict[str, str], int]:
    """Breadth-first walk; returns what was found (reason -> first path) and how many objects were seen."""
    start, views = roots()
    bad_ids = {id(v): k for k, v in _BAD_CALLABLES.items()}
    seen: set[int] = set()
    found: dict[str, str] = {}
    level = list(start.items())
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # typing.io and the like warn when read
        for _ in range(depth + 1):
            following = []
            for path, obj in level:
                if id(obj) in seen or isinstance(obj, _SCALARS):
                    continue
                seen.add(id(obj))
                why = _why_bad(obj, views, bad_ids)
                if why:
                    found.setdefault(why, path)
                    continue
                following.extend((p, child) for child, p in _children(obj, path, readable))
            level = following
    return found, len(seen)


def method_trick(name: str) -> bool:
    """What a method called with any object as ``self`` may read: every name the gate allows there."""
    return not names.attribute_problem(name, exempt=True)


def test_nothing_dangerous_is_reachable_from_what_a_model_is_given() -> None:
    found, seen = walk(method_trick)
    assert seen > 3000, "the walk reached too little to mean anything"
    assert found == {}


def test_the_walk_finds_the_real_builtins_when_one_rule_is_weakened(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(names, "FORBIDDEN_ATTRIBUTES", names.FORBIDDEN_ATTRIBUTES - {"func_globals"})
    found, _ = walk(method_trick)
    assert found["the module builtins"].endswith(".func_globals['__builtins__']"), found
