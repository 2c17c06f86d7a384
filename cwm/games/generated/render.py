"""The two rules texts of a generated game, assembled from its family's one-sentence-per-parameter rules.

A family module gives ``INTRO`` (what the game is), ``SECTIONS`` (headings, each with the parameters whose
sentences it holds, in order), ``KNOW`` (what the players see), ``rules(params)`` and ``spec_format(params)``
(the spec tier's observation and action formats). The rulebook tier is the sentences in prose; the spec tier
the same sections with its own sentences, the formats and the engine's facts.
"""

from __future__ import annotations

import json
from types import ModuleType
from typing import Any

from cwm.games.generated.common import Rule


def _sections(module: ModuleType, params: Any, tier: str) -> list[str]:
    by_name: dict[str, Rule] = {r.parameter: r for r in module.rules(params)}
    placed = [p for _, names in module.SECTIONS for p in names]
    if sorted(placed) != sorted(by_name):  # a family's own mistake, caught by its tests
        raise ValueError(f"{module.__name__}: SECTIONS place {sorted(placed)}, rules give {sorted(by_name)}")
    out = []
    for heading, names in module.SECTIONS:
        sentences = [getattr(by_name[n], tier) for n in names]
        out.append(f"## {heading}\n\n" + "\n".join(_bullet(s, tier) for s in sentences) + "\n")
    return out


def _bullet(sentence: str, tier: str) -> str:
    return f"- {sentence}" if tier == "spec" else sentence


def rulebook(name: str, module: ModuleType, params: Any) -> str:
    """The rulebook tier: the game in plain words, no formats and no engine facts."""
    head = f"# {name.split('_')[0].capitalize()}\n\n{module.INTRO}\n"
    know = f"## What the players know\n\n{module.KNOW}\n"
    return "\n".join([head, *_sections(module, params, "prose"), know])


def spec_text(name: str, module: ModuleType, params: Any, facts: dict[str, Any]) -> str:
    """The spec tier: the same sections as bullet points, then the formats and the engine's facts."""
    head = f"# {name.split('_')[0].capitalize()} (specification)\n\n{module.INTRO}\n"
    know = f"## What the players see\n\n{module.KNOW}\n\n{module.spec_format(params)}\n"
    block = "## Facts\n\n```json\n" + json.dumps(facts, indent=2, sort_keys=True) + "\n```\n"
    return "\n".join([head, *_sections(module, params, "spec"), know, block])
