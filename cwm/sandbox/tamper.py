"""After a job: did the candidate change the harness that judged it, or draw from a global generator?

The zygote takes one snapshot (``remember_baseline``) of what the harness relies on: the attributes of the
watched modules, the attributes of every class those modules define, and the global ``random`` and
``numpy.random`` states. Each child compares against it once its job is done (``tampering``). A patch of
``CheckReport.to_json`` or ``cwm.checks.report.Tally.fail`` is caught like one of ``json.dumps``. A patch that
undoes itself before the comparison cannot be seen here; the child therefore serialises its verdict only
through functions bound when it was imported (``cwm.sandbox.child``, ``cwm.sandbox.jobs.check``).
"""

from __future__ import annotations

import random
import sys
from types import MappingProxyType
from typing import Any

import numpy as np

from cwm.sandbox.names import ALLOWED_IMPORTS, ALLOWED_SUBMODULES

# What the harness relies on to judge the candidate; modules not imported in this process are skipped. (Not
# all of numpy: comparing its ~600 attributes costs ~1 ms per job in copy-on-write faults, and the harness
# uses numpy only for seeded generators.)
WATCHED_MODULES = (
    "builtins", "json", "json.encoder", "json.decoder", "copy", "math", "random", "dataclasses", "functools",
    "posixpath", "os",
    "cwm.checks.world_model", "cwm.checks.step", "cwm.checks.report", "cwm.checks.random_play", "cwm.model", "cwm.model_state",
    "cwm.contract", "cwm.codec", "cwm.types", "cwm.games.views", "cwm.value_rules", "cwm.json_values", "cwm.infokey",
    "cwm.sandbox.jobs.check", "cwm.sandbox.child", "cwm.sandbox.layers", "cwm.sandbox.gate",
    "cwm.sandbox.gate_walk", "cwm.sandbox.names", "cwm.sandbox.imports", "cwm.sandbox.tamper",
    "cwm.sandbox.builders", "cwm.sandbox.generated",
)
# Modules whose classes are not compared: nothing in them shapes a verdict's content (the OS wrappers,
# functools' decorators, the sandbox's own layers), and each compared attribute costs about 1 us
# per job in copy-on-write faults.
_MODULE_ATTRIBUTES_ONLY = frozenset({
    "builtins", "os", "posixpath", "functools", "math", "cwm.sandbox.gate", "cwm.sandbox.gate_walk",
    "cwm.sandbox.layers", "cwm.sandbox.names", "cwm.sandbox.imports", "cwm.sandbox.tamper", "cwm.sandbox.builders",
    "cwm.sandbox.generated",
})
_IMMUTABLE_TYPE = 1 << 8  # Py_TPFLAGS_IMMUTABLETYPE: builtin and C types refuse attribute assignment anyway
_IGNORED = frozenset({"__warningregistry__"})  # the warnings module writes it into any module
_BASELINE: dict[str, Any] = {}


def snapshot(extra: tuple[Any, ...] = ()) -> dict[str, Any]:
    """Identities of the watched modules' attributes and of the attributes of the classes they define (those
    a verdict's content depends on), and the global random generators' states."""
    modules, classes = {}, {}
    for name in WATCHED_MODULES:
        module = sys.modules.get(name)
        if module is None:
            continue
        values = dict(vars(module))
        modules[name] = (module, values)
        if name in _MODULE_ATTRIBUTES_ONLY:
            continue
        for key, value in values.items():
            if (isinstance(value, type) and value.__module__ == name and not value.__flags__ & _IMMUTABLE_TYPE
                    and value.__qualname__ == key):
                classes[f"{name}.{key}"] = (value, dict(vars(value)))
    return {"modules": modules, "classes": classes, "random": random.getstate(),
            "np_random": np.random.get_state(), "shared": shared_state(extra)}


def shared_state(extra: tuple[Any, ...] = ()) -> dict[str, Any]:
    """What a check could leave behind for the next check run in the same child (a batch,
    ``cwm.sandbox.child.batch_main``) without changing any attribute ``tampering`` compares: the contents of
    every public dict, list and set of the modules a candidate may import (``numpy.sctypeDict``, say) and the
    attributes of their public functions and classes and of ``extra`` (the candidates' builtins), held as
    the identities of their items, and numpy's error handling, print options and buffer size."""
    containers, owners = {}, {}
    for name in sorted(ALLOWED_IMPORTS | ALLOWED_SUBMODULES):
        module = sys.modules.get(name)
        for key, value in (vars(module).items() if module is not None else ()):
            if key.startswith("_"):
                continue
            if type(value) in (dict, list, set):
                containers[f"{name}.{key}"] = (value, _identities(value))
            elif _has_attributes(value):
                owners[f"{name}.{key}"] = (value, _identities(vars(value)))
    for value in extra:
        if _has_attributes(value):
            owners[f"builtins.{getattr(value, '__name__', '?')}"] = (value, _identities(vars(value)))
    return {"containers": containers, "owners": owners,
            "numpy": (np.geterr(), np.get_printoptions(), np.getbufsize())}


def _has_attributes(value: Any) -> bool:
    """A Python function or a class whose attributes can be assigned (not a builtin or C type)."""
    if isinstance(value, type):
        return not value.__flags__ & _IMMUTABLE_TYPE
    return isinstance(value, _FUNCTION)


_FUNCTION = type(_has_attributes)


def _identities(value: Any) -> Any:
    """A container's (or an attribute dict's) items by identity (iterating a builtin container or a class's
    mapping proxy runs no code of its items)."""
    if type(value) is dict or isinstance(value, MappingProxyType):
        return [(id(k), id(v)) for k, v in value.items()]
    return [id(v) for v in value]


def leftovers(before: dict[str, Any], *, attributes: bool = True) -> str:
    """What the last check changed of ``shared_state`` (empty when nothing did): a child in which it is not
    empty runs no further check. It may run code the candidate left in those containers (their ``__eq__``);
    the caller runs it where that cannot change a verdict (after the verdict is written). ``attributes``:
    compare the functions' and classes' attributes too (about 3 ms in a child; the static gate refuses
    assigning an attribute of another object, so only a candidate that ran without it needs this)."""
    for name, (value, items) in before["shared"]["containers"].items():
        if _identities(value) != items:
            return f"{name} changed"
    for name, (value, items) in before["shared"]["owners"].items() if attributes else ():
        if _identities(vars(value)) != items:
            return f"an attribute of {name} changed"
    if (np.geterr(), np.get_printoptions(), np.getbufsize()) != before["shared"]["numpy"]:
        return "numpy's error handling, print options or buffer size changed"
    return ""


def remember_baseline(extra: tuple[Any, ...] = ()) -> None:
    """Takes the snapshot every child of this zygote compares against (``extra``: as ``shared_state``)."""
    _BASELINE.update(snapshot(extra))  # updated, not rebound: this module is among the watched ones


def baseline() -> dict[str, Any]:
    """The zygote's snapshot (every child starts from it) and this process's random states.

    ``random`` reseeds itself from the OS in every forked child; it is seeded with 0 here so that a model
    that draws from it anyway behaves the same in every child (and is then reported, see ``tampering``).
    """
    random.seed(0)
    if not _BASELINE:
        return snapshot()
    return dict(_BASELINE, random=random.getstate())


def tampering(before: dict[str, Any]) -> str:
    """A description of what changed since ``before`` (empty when nothing did)."""
    for name, (module, values) in before["modules"].items():
        if sys.modules.get(name) is not module:
            return f"tampering: the model replaced module {name!r} in sys.modules"
        changed = _changed(vars(module), values)
        if changed:
            return f"tampering: the model changed {name}.{changed}"
    for name, (cls, values) in before["classes"].items():
        changed = _changed(vars(cls), values)
        if changed:
            return f"tampering: the model changed the class attribute {name}.{changed}"
    if random.getstate() != before["random"]:
        return ("nondeterminism: the model drew from the global random generator; use random.Random(seed) "
                "and take the seed as an argument")
    np_before, np_now = before["np_random"], np.random.get_state()
    if not all(np.array_equal(a, b) if isinstance(a, np.ndarray) else a == b for a, b in zip(np_before, np_now)):
        return "nondeterminism: the model drew from numpy's global random generator; use default_rng(seed)"
    return ""


def _changed(now: Any, before: dict[str, Any]) -> str:
    """The first name whose value is not the same object as before (added names included), else ``""``."""
    if len(now) != len(before):
        added = [k for k in now if k not in before and k not in _IGNORED]
        if added:
            return added[0]
    for key, value in before.items():
        if key not in _IGNORED and (key not in now or now[key] is not value):
            return key
    return ""
