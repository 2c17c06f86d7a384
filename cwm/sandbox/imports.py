"""What ``import`` gives candidate code: allow-listed modules only, each as a public-only copy (a view).

A view is a plain ``types.ModuleType`` holding the names of the real module that the static gate would let
candidate code read (no ``_private`` or dunder name, none of ``FORBIDDEN_ATTRIBUTES``) and no module, except
the allowed submodules, which are views too. So ``random._os``, ``collections._sys`` and ``typing.sys`` are
simply not there, whatever trick (a method called with a module as ``self``, a format template built at run
time) the code uses to ask for them. The values are the real objects (``random.Random``, ``numpy.ndarray``),
so ``isinstance`` and subclassing behave as usual, except for metaclasses (``enum.EnumType``,
``typing.ABCMeta``): a view holds a ``cwm.sandbox.builders.checked_metaclass`` function in their place, which
checks the namespace of a class built by calling it; and the functions of ``typing``, ``dataclasses`` and
``enum``, which read what classes and aliases are made of, answer through the same mapping, so a class a view
hands out, held or returned, is never a bare metaclass (``cwm.sandbox.builders.view_value``).

Each importer (one per loaded candidate, see ``make_importer``) builds its own views: a candidate that writes
to its ``math`` changes only its own copy. A view is an exact ``ModuleType`` rather than a read-only proxy
because the interpreter's fast path for module attributes (``math.sqrt`` in a loop) applies only to exact
modules: a subclass that refuses ``__setattr__`` measured 53 ns per lookup against 33 ns.
"""

from __future__ import annotations

import builtins
import sys
import types
from collections.abc import Callable, Sequence
from typing import Any

from cwm.json_values import ReadOnlyList, StateMutationError
from cwm.sandbox.builders import ABSENT
from cwm.sandbox.builders import view_value as _view_value
from cwm.sandbox.names import PYTHON_POLICY, ImportPolicy, attribute_problem

Importer = Callable[..., types.ModuleType]
# Functions of allowed modules that change their first argument in place from C, past a read-only state's own
# refusals (``heapq.heappush(state["queue"], x)``): their views refuse a read-only list there.
IN_PLACE: dict[str, frozenset[str]] = {
    "heapq": frozenset({"heappush", "heappop", "heapify", "heapreplace", "heappushpop"}),
}
# per policy, per real module name: the names its views copy, computed once
_PUBLIC: dict[str, dict[str, dict[str, Any]]] = {}


def make_importer(policy: ImportPolicy = PYTHON_POLICY) -> Importer:
    """A fresh ``__import__`` for one candidate: the modules ``policy`` allows only, answered with that
    candidate's own views (a module importable only through its submodules, ``jax``, is a view holding just
    those). Everything it needs is bound in its closure (it reads no module global when called)."""
    real_import, modules, module_type, view_value = builtins.__import__, sys.modules, types.ModuleType, _view_value
    allowed, submodules, problem = policy.modules, tuple(sorted(policy.submodules)), attribute_problem
    bare, extra, cache = policy.bare, policy.forbidden_attributes, _PUBLIC.setdefault(policy.name, {})
    views: dict[str, types.ModuleType] = {}

    def public(real: types.ModuleType) -> dict[str, Any]:
        """The attributes a view of ``real`` holds: readable under the gate's rules, and not modules."""
        names = cache.get(real.__name__)
        if names is None and real.__name__ not in bare and real.__name__ in allowed:
            names = {}  # ``jax`` itself: only its allowed submodules
        if names is None:
            names = {k: view_value(real.__name__, k, v) for k, v in vars(real).items()
                     if not problem(k, extra=extra) and not isinstance(v, module_type)}
            names = {k: v for k, v in names.items() if v is not ABSENT}
            names.update({k: _refusing_read_only(v) for k, v in names.items() if k in IN_PLACE.get(real.__name__, ())})
            cache[real.__name__] = names
        return names

    def view(name: str) -> types.ModuleType:
        made = views.get(name)
        if made is None:
            real = modules[name]
            made = module_type(name, real.__doc__)
            vars(made).update(public(real))
            for sub in submodules:
                parent, _, leaf = sub.rpartition(".")
                if parent == name:
                    real_import(sub)
                    vars(made)[leaf] = view(sub)
            views[name] = made
        return made

    def guarded_import(name: str, globals_: Any = None, locals_: Any = None, fromlist: Sequence[str] | None = (),
                       level: int = 0) -> types.ModuleType:
        top, *rest = name.split(".")
        private = any(part.startswith("_") for part in rest)
        if level or top not in allowed or (rest and not private and name not in submodules):
            raise ImportError(f"sandbox: import of {name!r} is not allowed")
        real_import(name, None, None, fromlist, 0)
        items = [item for item in fromlist or () if item != "*"]
        if private:  # numpy's C code imports its private submodules through the caller's builtins, then reads
            if any(not (item.startswith("__") and item.endswith("__")) for item in items):  # sys.modules itself
                raise ImportError(f"sandbox: importing names from the private module {name!r} is not allowed")
            return view(top)
        if not fromlist:
            return view(top)
        target = view(name)
        for item in items:
            if item not in vars(target):  # refused here, or Python would fall back to sys.modules[name.item]
                raise ImportError(f"sandbox: cannot import {item!r} from {name!r}: models get only the public "
                                  f"names of allowed modules, and of the submodules {', '.join(submodules)}")
        return target

    return guarded_import


def _refusing_read_only(fn: Callable[..., Any]) -> Callable[..., Any]:
    """``fn``, refusing to change a read-only list of a state (``cwm.json_values.ReadOnlyList``) in place."""
    name, read_only, refused = fn.__name__, ReadOnlyList, StateMutationError

    def in_place(target: Any, *args: Any) -> Any:
        if type(target) is read_only:
            raise refused(f"{name} would change a read-only list of the state in place; call it on a copy "
                          f"(list(...))")
        return fn(target, *args)

    in_place.__name__ = in_place.__qualname__ = name
    return in_place
