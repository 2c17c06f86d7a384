"""The question families of the nfg evals, one module each, and ``REGISTRY``, the one place they are listed.

Each module (``best_response_pure``, ``dominant_strategy``, ``estimate_mixed``, ``best_response_mixed``,
``classify_partner``, ``play_strategy``, ``nash`` (with ``nash_3x3``), ``zero_sum_maximin``) holds everything
about its family as one ``Family``: the fields of its question text, its solver answer key, its seeded item
generator and how the CWM route reads its question back from the LLM's module. ``render``, ``tasks``,
``generator`` and ``route`` look a family up here and call it; none of them names a family.

Adding a family: write its module (a ``Family`` built from its functions), its question template
``prompts/nfg/questions/<name>.md`` and its data template ``prompts/nfg/cwm/data/<name>.md``, and append it to
``REGISTRY`` below. Append, never insert: item ``i`` of a family draws from the stream
``[seed, position in REGISTRY, i]``, so moving a family would change every seeded task after it.
"""

from __future__ import annotations

from types import MappingProxyType

from cwm.nfg.families import (
    best_response_mixed,
    best_response_pure,
    classify_partner,
    dominant_strategy,
    estimate_mixed,
    nash,
    play_strategy,
    zero_sum_maximin,
)
from cwm.nfg.families.family import Built, Family
from cwm.nfg.game import NfgFormatError

REGISTRY = MappingProxyType({f.name: f for f in (
    best_response_pure.FAMILY, dominant_strategy.FAMILY, estimate_mixed.FAMILY, best_response_mixed.FAMILY,
    classify_partner.FAMILY, play_strategy.FAMILY, nash.NASH, nash.NASH_3X3, zero_sum_maximin.FAMILY,
)})
NAMES = tuple(REGISTRY)  # in stream order

__all__ = ["NAMES", "REGISTRY", "Built", "Family", "get", "stream"]


def get(name: str) -> Family:
    """The family called ``name``.

    Raises:
      NfgFormatError: no such family (the message lists the known ones).
    """
    try:
        return REGISTRY[name]
    except (KeyError, TypeError):
        raise NfgFormatError(f"unknown family {name!r}; expected one of {list(NAMES)}") from None


def stream(name: str) -> int:
    """The family's position in ``REGISTRY``: the middle entry of its items' random streams."""
    return NAMES.index(get(name).name)
