"""Rich displays for notebooks: the HTML pieces that ``_repr_html_`` methods build, every value shown as text.

What these displays show comes from files cwm does not trust (a shared bundle's manifest, a results folder's
rows, a model's failure messages), so each value goes through ``text``: a ``str`` subclass is read as the
plain string it holds (its own ``__str__``, ``__format__`` or ``replace`` is never called), a number as
Python writes a plain number, any other value as its type's name or as JSON; the result is cleaned
(``cwm.text.clean``: no control character, line separator or bidi override) and HTML-escaped. So a field
that holds markup or script renders as the characters it holds, never as a tag.
"""

from __future__ import annotations

import html
import json
from collections.abc import Iterable, Sequence

from cwm.text import clean

CODE_LIMIT = 200_000
"""The characters of one code file a display shows (the rest is marked as cut by ``cwm.text.clean``)."""


def text(value: object, *, limit: int | None = 500) -> str:
    """``value`` as escaped HTML text, at most ``limit`` characters of it (``None``: all)."""
    return html.escape(clean(_plain(value), limit=limit), quote=True)


def _plain(value: object) -> str:
    """The plain text of a value without calling anything the value's own class defines."""
    if value is None:
        return ""
    if isinstance(value, str):
        return str.__str__(value)
    if isinstance(value, bool):
        return "True" if value else "False"
    if isinstance(value, int):
        return int.__repr__(value)
    if isinstance(value, float):
        return float.__repr__(value)
    if type(value) in (list, tuple, dict):
        try:
            return json.dumps(value, ensure_ascii=False, default=lambda o: f"<{type(o).__name__}>")
        except (TypeError, ValueError, RecursionError):
            pass
    return f"<{type(value).__name__}>"


def number(value: object, spec: str = ".3f") -> str:
    """A number formatted by ``spec`` (a ``float`` subclass is read as the plain float it holds), as plain
    text for ``table`` or ``fields`` to escape; any other value as its plain text (a manifest may hold
    anything where a number belongs)."""
    try:
        if isinstance(value, float):
            return format(float.__float__(value), spec)
        if isinstance(value, int) and not isinstance(value, bool):
            return format(float(int.__int__(value)), spec)
    except OverflowError:  # an integer too large for a float
        pass
    return clean(_plain(value), limit=500)


def table(head: Sequence[object], body: Iterable[Sequence[object]]) -> str:
    """An HTML table; each heading and cell through ``text``."""
    rows = "".join("<tr>" + "".join(f"<td>{text(c)}</td>" for c in row) + "</tr>" for row in body)
    heads = "".join(f"<th>{text(h)}</th>" for h in head)
    return f'<table class="cwm"><thead><tr>{heads}</tr></thead><tbody>{rows}</tbody></table>'


def fields(pairs: Iterable[tuple[str, object]]) -> str:
    """Two columns, a name and its value, as a table (names are ours, values through ``text``)."""
    rows = "".join(f'<tr><th style="text-align:left">{html.escape(name)}</th><td>{text(value)}</td></tr>'
                   for name, value in pairs)
    return f'<table class="cwm">{rows}</table>'


def collapsed(summary: str, body: str) -> str:
    """A block shown closed (``<details>``): ``summary`` is text, ``body`` is code kept whole up to
    ``CODE_LIMIT`` characters, line breaks included."""
    code = html.escape(clean(_plain(body), limit=CODE_LIMIT, multiline=True), quote=True)
    return f"<details><summary>{text(summary)}</summary><pre>{code}</pre></details>"


def heading(title: object, *, level: int = 4) -> str:
    """A heading whose text is ``title``."""
    return f"<h{level}>{text(title)}</h{level}>"


def paragraph(words: object) -> str:
    """A paragraph whose text is ``words``."""
    return f"<p>{text(words, limit=None)}</p>"


def block(*parts: str) -> str:
    """The parts of one display, in order, in one ``<div>``."""
    return '<div class="cwm-display">' + "".join(parts) + "</div>"
