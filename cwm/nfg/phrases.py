"""Small pieces of task text, one prompt part each (``prompts/nfg/parts/``, ``strategies/``): amounts,
probabilities and the rules of repeated-game strategies. ``render`` and the family modules share them."""

from __future__ import annotations

from collections.abc import Mapping
from fractions import Fraction

import prompts


def part(name: str, **values: object) -> str:
    """``prompts/nfg/<name>.md`` rendered with ``values``, stripped."""
    return prompts.render(f"nfg/{name}.md", **values).strip()


def amount(value: Fraction, unit: str) -> str:
    """``3 points``, ``-2 points``, ``$3``, ``-$2``."""
    magnitude = abs(value)
    number = str(magnitude.numerator) if magnitude.denominator == 1 else f"{float(magnitude):g}"
    template = "point" if unit == "points" and magnitude == 1 else unit
    return part(f"parts/{template}", sign="-" if value < 0 else "", magnitude=number)


def probability(p: Fraction, style: str) -> str:
    """``35%`` or ``7/20``."""
    if style == "percent":
        return f"{float(p * 100):g}%"
    return str(p.numerator) if p.denominator == 1 else f"{p.numerator}/{p.denominator}"


def describe_strategy(name: str, roles: Mapping[str, str]) -> str:
    """The plain-language rule of a named repeated-game strategy."""
    return part(f"strategies/{name}", **_role_fields(name, roles))


def _role_fields(name: str, roles: Mapping[str, str]) -> dict[str, str]:
    needed = prompts.fields(f"nfg/strategies/{name}.md")
    return {k: v for k, v in roles.items() if k in needed}
