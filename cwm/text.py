"""Untrusted text made safe to store, write and print: ``clean`` (one string), ``clean_json`` (every string
in a JSON value) and ``without_surrogates`` (for text kept whole, such as an LLM's reply).

Text a model or an agent produced (an exception message, a traceback, a forfeit reason, a value it returned)
can hold characters that break the files and terminals it reaches: a lone surrogate cannot be encoded as
UTF-8, so writing it crashes (and a resumed run that reads it back crashes again); control characters and
ANSI escape sequences rewrite a terminal or forge lines of output; a megabyte message floods every report.
``clean`` neutralises all of them and is idempotent, so cleaning at every boundary costs nothing twice.
``counted`` writes a count with its noun ("1 LLM call", "2 LLM calls") for reports.

The ``html_*`` functions build the rich displays a notebook shows (``_repr_html_`` of a bundle, a check
report, a tournament's standings): what they show comes from files cwm does not trust (a shared bundle's
manifest, a results folder's rows, a model's failure messages), so every value goes through ``html_text``:
``plain_text`` reads only a value's real type and the builtins' own methods, so no code the value's class
defines runs (a ``str`` subclass is read as the plain string it holds: its ``__str__``, ``__format__`` or
``replace`` is never called; a container, subclasses included, is walked as the builtin it is, to a bounded
depth and length), a number as Python writes a plain number, any other value as its type's name; the result
is cleaned and HTML-escaped, so a field that holds markup or script renders as the characters it holds,
never as a tag.
"""

from __future__ import annotations

import html
import json
import re
from collections.abc import Callable, Iterable, Sequence
from typing import Any

DEFAULT_LIMIT = 2000
"""The characters kept of one piece of text by default; the rest is replaced by a marker saying how many."""

REPLACEMENT = "\ufffd"  # what a lone surrogate becomes

# A lone surrogate (a Python str never holds a valid pair: JSON and UTF-8 decoding join pairs into one
# character), and the characters a terminal acts on or that end a line: C0 and C1 controls (ESC starts
# every ANSI sequence, CSI is also U+009B), DEL, the Unicode line and paragraph separators, and the bidi
# overrides and isolates that make text display in another order than it reads.
_SURROGATE = re.compile("[\ud800-\udfff]")
_CONTROL = re.compile("[\x00-\x1f\x7f-\x9f\u2028\u2029\u202a-\u202e\u2066-\u2069]")
# what clean changes, in one search (most text holds none of it and is returned as it is)
_UNSAFE = re.compile("[\ud800-\udfff\x00-\x1f\x7f-\x9f\u2028\u2029\u202a-\u202e\u2066-\u2069]")
_UNSAFE_MULTILINE = re.compile("[\ud800-\udfff\x00-\x08\x0b-\x1f\x7f-\x9f\u2028\u2029\u202a-\u202e\u2066-\u2069]")
_MULTILINE_KEEP = frozenset("\n\t")


_NAMED = {"\n": "\\n", "\t": "\\t", "\r": "\\r"}


def _visible(match: re.Match[str]) -> str:
    char = match.group()
    if char in _NAMED:
        return _NAMED[char]
    return f"\\x{ord(char):02x}" if ord(char) < 0x100 else f"\\u{ord(char):04x}"


def _visible_except_lines(match: re.Match[str]) -> str:
    return match.group() if match.group() in _MULTILINE_KEEP else _visible(match)


def without_surrogates(text: str) -> str:
    """``text`` with each lone surrogate replaced by U+FFFD, and nothing else changed: for text that is kept
    whole (an LLM's reply, code), where only what cannot be encoded as UTF-8 must go."""
    return _SURROGATE.sub(REPLACEMENT, text)


def clean(text: str, *, limit: int | None = DEFAULT_LIMIT, multiline: bool = False) -> str:
    """``text`` as an exact ``str`` that is safe to encode as UTF-8, write and print.

    Lone surrogates become U+FFFD; every control character (NUL, ESC and so every ANSI escape sequence, CR,
    DEL, C1 controls, line separators, bidi overrides) is replaced by its visible escape (``\\x1b``,
    ``\\x00``, ``\\u202e``), so nothing reaches a terminal as a command and the text still shows what was
    there. With ``multiline`` newlines and tabs are kept (a ``\\r\\n`` line end becomes ``\\n``); without it
    they are escaped too, so the result is one line. Text longer than ``limit`` characters is cut to that
    length, ending in a marker that says how many characters were cut. Cleaning clean text changes nothing.

    Args:
      text: any string (a ``str`` subclass is read as the plain string it holds, not through its methods).
      limit: the most characters of the result, the marker included (``None``: no cap; keep it above 40).
      multiline: keep newlines and tabs.
    """
    plain = text if type(text) is str else str.__str__(text)  # a subclass's own methods may lie
    if (limit is None or len(plain) <= limit) and not (_UNSAFE_MULTILINE if multiline else _UNSAFE).search(plain):
        return plain
    if multiline:
        plain = plain.replace("\r\n", "\n")
    plain = without_surrogates(plain)
    plain = _CONTROL.sub(_visible_except_lines if multiline else _visible, plain)
    if limit is not None and len(plain) > limit:
        # the marker counts towards the limit, so a cut text is clean text (cleaning it again changes nothing)
        keep = max(0, limit - len(_marker(len(plain))))
        plain = plain[:keep] + _marker(len(plain) - keep)
    return plain


def _marker(cut: int) -> str:
    return f"... [{cut} more characters cut]"


# Container types whose items live outside their own list/dict storage, with the reader of what they hold (a
# tuple, or a mapping): ``cwm.json_values`` registers its read-only state containers here. Looked up by exact
# type, so a model's own subclass is never read through a reader.
STORAGE: dict[type, Callable[[Any], Any]] = {}


def _list_items(value: Any) -> Any:
    """The items of a list or tuple (subclasses included), read without calling any method it defines."""
    reader = STORAGE.get(type(value))
    if reader is not None:
        return reader(value)
    return list.__iter__(value) if issubclass(type(value), list) else tuple.__iter__(value)


def _dict_items(value: Any) -> Any:
    """The items of a dict (subclasses included), read without calling any method it defines."""
    reader = STORAGE.get(type(value))
    return reader(value).items() if reader is not None else dict.items(value)


def clean_json(value: Any, *, limit: int | None = DEFAULT_LIMIT, multiline: bool = True) -> Any:
    """``value`` with every string in it (dict keys too, at any depth) passed through :func:`clean`.

    Lists and tuples keep their type, other values are returned as they are.
    """
    t = type(value)  # never isinstance, which asks the value's own __class__
    if issubclass(t, str):
        return clean(value, limit=limit, multiline=multiline)
    if issubclass(t, dict):
        return {clean_json(k, limit=limit, multiline=multiline): clean_json(v, limit=limit, multiline=multiline)
                for k, v in _dict_items(value)}
    if issubclass(t, (list, tuple)):
        items = [v if type(v) in _PLAIN else clean_json(v, limit=limit, multiline=multiline)
                 for v in _list_items(value)]
        return tuple(items) if issubclass(t, tuple) else items
    return value


_PLAIN = frozenset({int, float, bool, type(None)})  # nothing to clean in them


def counted(n: int, noun: str) -> str:
    """``n`` and ``noun``, the noun plural (an ``s`` added) unless ``n`` is 1: "1 LLM call", "3 seeds"."""
    return f"{n} {noun}" if n == 1 else f"{n} {noun}s"


HTML_CODE_LIMIT = 200_000
"""The characters of one code file a display shows (the rest is marked as cut by ``cwm.text.clean``)."""


def html_text(value: object, *, limit: int | None = 500) -> str:
    """``value`` as escaped HTML text, at most ``limit`` characters of it (``None``: all)."""
    return html.escape(clean(plain_text(value, limit=limit), limit=limit), quote=True)


TEXT_DEPTH = 16
"""How deep ``plain_text`` writes a nested list or dict (deeper levels are shown as ``"..."``)."""


def plain_text(value: object, *, limit: int | None = DEFAULT_LIMIT) -> str:
    """The plain text of ``value`` without running any code its class defines (not cleaned: pass it on to
    ``clean`` or ``html_text``).

    Only the value's real type is read (``type``, never ``isinstance``, which asks the value's own
    ``__class__``): a ``str`` subclass gives the string it holds, an ``int`` or ``float`` subclass the number
    it holds as Python writes a plain one (an int too long to write in decimal: its size in bits), a list,
    tuple or dict (subclasses too) JSON written by walking the builtin containers (at most ``TEXT_DEPTH``
    levels, stopped soon after ``limit`` characters), ``None`` nothing, anything else its type's name.
    """
    budget = HTML_CODE_LIMIT if limit is None else limit
    t = type(value)
    if value is None:
        return ""
    if t is bool:
        return "True" if value else "False"
    if issubclass(t, str):
        return str.__str__(value)  # type: ignore[arg-type]
    if issubclass(t, (int, float)):
        return _number_text(value)
    if issubclass(t, (list, tuple, dict)):
        parts: list[str] = []
        _json_walk(value, parts, [budget], 0)
        return "".join(parts)
    return f"<{_type_name(t)}>"


def _type_name(t: type) -> str:
    """A type's own name, read without its metaclass (which may define ``__name__`` as code)."""
    return str(type.__dict__["__name__"].__get__(t, type))


def _number_text(value: Any) -> str:
    if issubclass(type(value), float):
        return float.__repr__(value)
    try:
        return int.__repr__(value)
    except ValueError:  # more digits than Python writes (sys.get_int_max_str_digits)
        return f"<an int of {int.bit_length(value)} bits>"


def _json_walk(value: Any, parts: list[str], left: list[int], depth: int) -> None:
    """Appends ``value`` as JSON to ``parts``, walking only exact builtins; ``left`` counts down the
    characters still wanted (at 0 the walk stops adding)."""
    t = type(value)
    if value is None or t is bool:
        text = "null" if value is None else "true" if value else "false"
    elif issubclass(t, str):
        text = json.dumps(str.__str__(value)[:left[0] + 1], ensure_ascii=False)
    elif issubclass(t, float):
        text = json.dumps(float.__float__(value))
    elif issubclass(t, int):
        text = _number_text(value)
        text = json.dumps(text) if text.startswith("<") else text  # too long to write: its size, as a string
    elif issubclass(t, (list, tuple, dict)):
        if depth >= TEXT_DEPTH:
            text = '"..."'
        else:
            _container_walk(value, parts, left, depth)
            return
    else:
        text = json.dumps(f"<{_type_name(t)}>")
    _put(text, parts, left)


def _container_walk(value: Any, parts: list[str], left: list[int], depth: int) -> None:
    is_dict = issubclass(type(value), dict)
    items = _dict_items(value) if is_dict else _list_items(value)
    _put("{" if is_dict else "[", parts, left)
    for i, item in enumerate(items):
        if left[0] <= 0:
            _put(", ..." if i else "...", parts, left)
            break
        if i:
            _put(", ", parts, left)
        if is_dict:
            key, item = item
            _json_walk(_key_text(key), parts, left, depth + 1)
            _put(": ", parts, left)
        _json_walk(item, parts, left, depth + 1)
    _put("}" if is_dict else "]", parts, left)


def _put(text: str, parts: list[str], left: list[int]) -> None:
    parts.append(text)
    left[0] -= len(text)


def _key_text(key: Any) -> str:
    """A dict key as JSON writes it (a number, a bool or ``None`` as its JSON text, anything else its type)."""
    t = type(key)
    if key is None or t is bool:
        return "null" if key is None else "true" if key else "false"
    if issubclass(t, str):
        return str.__str__(key)
    if issubclass(t, (int, float)):
        return _number_text(key)
    return f"<{_type_name(t)}>"


def html_number(value: object, spec: str = ".3f") -> str:
    """A number formatted by ``spec`` (an ``int`` or ``float`` subclass read as the plain number it holds), as
    plain text for ``html_table`` or ``html_fields`` to escape; any other value as its ``plain_text`` (a
    manifest may hold anything where a number belongs)."""
    t = type(value)
    try:
        if issubclass(t, float):
            return format(float.__float__(value), spec)  # type: ignore[arg-type]
        if issubclass(t, int) and t is not bool:
            return format(float(int.__int__(value)), spec)  # type: ignore[arg-type]
    except OverflowError:  # an integer too large for a float
        pass
    return clean(plain_text(value, limit=500), limit=500)


def html_table(head: Sequence[object], body: Iterable[Sequence[object]]) -> str:
    """An HTML table; each heading and cell through ``html_text``."""
    rows = "".join("<tr>" + "".join(f"<td>{html_text(c)}</td>" for c in row) + "</tr>" for row in body)
    heads = "".join(f"<th>{html_text(h)}</th>" for h in head)
    return f'<table class="cwm"><thead><tr>{heads}</tr></thead><tbody>{rows}</tbody></table>'


def html_fields(pairs: Iterable[tuple[str, object]]) -> str:
    """Two columns, a name and its value, as a table (names are ours, values through ``html_text``)."""
    rows = "".join(f'<tr><th style="text-align:left">{html.escape(name)}</th><td>{html_text(value)}</td></tr>'
                   for name, value in pairs)
    return f'<table class="cwm">{rows}</table>'


def html_collapsed(summary: str, body: str) -> str:
    """A block shown closed (``<details>``): ``summary`` is text, ``body`` is code kept whole up to
    ``HTML_CODE_LIMIT`` characters, line breaks included."""
    code = html.escape(clean(plain_text(body, limit=HTML_CODE_LIMIT), limit=HTML_CODE_LIMIT, multiline=True),
                       quote=True)
    return f"<details><summary>{html_text(summary)}</summary><pre>{code}</pre></details>"


def html_heading(title: object, *, level: int = 4) -> str:
    """A heading whose text is ``title``."""
    return f"<h{level}>{html_text(title)}</h{level}>"


def html_paragraph(words: object, *, limit: int = DEFAULT_LIMIT) -> str:
    """A paragraph whose text is ``words``, at most ``limit`` characters of it (a paragraph may hold fields
    read from a file: always bounded)."""
    return f"<p>{html_text(words, limit=limit)}</p>"


def html_block(*parts: str) -> str:
    """The parts of one display, in order, in one ``<div>``."""
    return '<div class="cwm-display">' + "".join(parts) + "</div>"


__all__ = ["DEFAULT_LIMIT", "HTML_CODE_LIMIT", "REPLACEMENT", "clean", "clean_json", "counted", "html_block",
           "html_collapsed", "html_fields", "html_heading", "html_number", "html_paragraph", "html_table",
           "html_text", "plain_text", "without_surrogates"]
