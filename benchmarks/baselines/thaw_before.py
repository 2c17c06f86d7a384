"""``cwm.json_values.thaw`` as it was before lists and dicts without containers were copied in one call (the
baseline of benchmarks/bench_copies.py): every item of every container goes through ``thaw``. A read-only
container is read through its own ``items()``/iteration (what it holds is not in its ``dict``/``list``
storage)."""

from __future__ import annotations

from typing import Any

from cwm.json_values import ReadOnlyDict, ReadOnlyList


def thaw(value: Any) -> Any:
    """A plain, writable deep copy of a (read-only) JSON value."""
    t = type(value)
    if t is ReadOnlyDict or t is dict:
        return {k: thaw(x) for k, x in value.items()}
    if t is ReadOnlyList or t is list:
        return [thaw(x) for x in value]
    if t is tuple:
        return tuple(thaw(x) for x in value)
    return value
