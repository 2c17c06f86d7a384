"""Prompt templates as text files, and the one strict function that renders them.

A template is a file under ``prompts/`` (``synthesis/initial.md``). ``{{name}}`` is a field;
``{{> path}}`` includes another template file (shared sections such as the rules or API block).
``render`` refuses a field the template does not use and a field it needs but was not given, so a
prompt can never silently lose a section.
"""

from __future__ import annotations

import hashlib
import importlib.resources
import re

_FIELD = re.compile(r"\{\{\s*([A-Za-z_][A-Za-z0-9_]*)\s*\}\}")
_INCLUDE = re.compile(r"\{\{>\s*([\w./-]+)\s*\}\}")


class PromptError(ValueError):
    """A template is missing, includes itself, or was rendered with missing or unused fields."""


def _read(name: str) -> str:
    resource = importlib.resources.files("prompts").joinpath(name)
    if not resource.is_file():
        raise PromptError(f"prompt template {name!r} does not exist under prompts/")
    return resource.read_text(encoding="utf-8")


def template(name: str, _seen: tuple[str, ...] = ()) -> str:
    """The template text with every include expanded."""
    if name in _seen:
        raise PromptError(f"prompt template {name!r} includes itself via {' -> '.join(_seen)}")
    text = _read(name)
    return _INCLUDE.sub(lambda m: template(m.group(1), _seen + (name,)).rstrip("\n"), text)


def fields(name: str) -> set[str]:
    """The field names a template needs."""
    return set(_FIELD.findall(template(name)))


def render(name: str, **values: object) -> str:
    """Fills a template's fields.

    Raises:
      PromptError: a needed field is missing or a given field is unused (names them).
    """
    text = template(name)
    needed = set(_FIELD.findall(text))
    missing = needed - values.keys()
    unused = values.keys() - needed
    if missing or unused:
        raise PromptError(
            f"prompt {name!r}: " + "; ".join(
                part for part in (
                    f"missing fields {sorted(missing)}" if missing else "",
                    f"unused fields {sorted(unused)}" if unused else "",
                ) if part
            )
        )
    return _FIELD.sub(lambda m: str(values[m.group(1)]), text)


def prompt_hash(name: str) -> str:
    """SHA-256 (first 16 hex digits) of the expanded template, for run records."""
    return hashlib.sha256(template(name).encode("utf-8")).hexdigest()[:16]


__all__ = ["PromptError", "fields", "prompt_hash", "render", "template"]
