"""The rulebook tier (``game_rules/prose/<game>.md``): one file per registered game, holding none of what
makes the specification tier a specification.

What is forbidden is read from the specification files themselves: the snake_case identifiers, file
paths and engine functions they name (observation keys such as ``current_player``, ``tests/...`` paths,
``resample_from_infostate``), and the headings of their sections that carry a JSON schema or a repo path
(``Facts``, ``Observations``, ``Outcome statistics``, ...). A rulebook may name the moves as a rulebook's
notation does (``Raise``, ``13/11``, ``AS``), which the specification files name too, so plain words and
notation are not on the list.
"""

from __future__ import annotations

import functools
import importlib.resources
import re

import pytest

from cwm import games

RULES = importlib.resources.files("game_rules")
NAMES = [s.name for s in games.registered()]


def _sections(text: str) -> list[tuple[str, str]]:
    """(heading, body) of each markdown section."""
    parts = re.split(r"^#{1,4} +(.+)$", text, flags=re.M)
    return list(zip(parts[1::2], parts[2::2]))


def _internal(token: str) -> bool:
    """An identifier, path or function of the engine or the repo, as a specification file writes them."""
    return bool(re.search(r"_|/\w+\.\w+|\.py\b|\w\(\)", token)) and not re.fullmatch(r"[\w ]*/\w+(\*|\(\d\))?", token)


@functools.cache
def forbidden() -> tuple[frozenset[str], frozenset[str]]:
    """(markers, headings) taken from every specification-tier file."""
    markers: set[str] = set()
    headings: set[str] = set()
    for name in NAMES:
        text = RULES.joinpath(f"{name}.md").read_text(encoding="utf-8")
        markers |= {k for k in re.findall(r'"([A-Za-z]\w*)"\s*:', text) if "_" in k}
        markers |= {t.strip("`") for t in re.findall(r"`[^`\n]+`", text) if _internal(t.strip("`"))}
        headings |= {h.strip() for h, body in _sections(text)
                     if "```json" in body or '{"' in body or re.search(r"`[^`\n]*\b(tests/|planners`)", body)}
    return frozenset(markers), frozenset(headings)


def offences(text: str) -> list[str]:
    markers, headings = forbidden()
    found = [f"names {m!r}" for m in sorted(markers) if re.search(rf"(?<![\w/]){re.escape(m)}(?![\w])", text)]
    found += [f"has a {h!r} section" for h, _ in _sections(text) if h.strip() in headings]
    found += ["holds a JSON object"] * ('{"' in text) + ["holds a JSON block"] * ("```json" in text)
    return found


def test_the_forbidden_list_is_real() -> None:
    markers, headings = forbidden()
    assert {"current_player", "resample_from_infostate", "my_square", "opponent_quadrant"} <= markers
    assert any("outcome_stats.py" in m for m in markers)
    assert {"Facts", "Outcome statistics", "Observations"} <= headings
    # every specification file would fail the check the rulebooks pass
    for name in NAMES:
        assert offences(RULES.joinpath(f"{name}.md").read_text(encoding="utf-8")), name


@pytest.mark.parametrize("name", NAMES)
def test_each_registered_game_has_a_rulebook_without_specification_markers(name: str) -> None:
    spec = games.resolve(name, rules="prose")
    text = games.rules_text(spec)
    assert text.startswith("# ") and len(text.split()) > 100, "a rulebook with a title and rules"
    assert offences(text) == [], f"game_rules/prose/{name}.md"
    assert games.rules_label(games.resolve(name), text) == "prose"
    assert text != games.rules_text(games.resolve(name))
