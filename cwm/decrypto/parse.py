"""Reading answers: what follows the last ``ANSWER:`` marker, as a code, three hints or four keywords.

Each reader returns ``(value, "")`` or ``(None, why)``; ``why`` goes back to the player in the retry prompt.
Human entries are read by the same functions (without the marker).
"""

from __future__ import annotations

import functools
import re
import unicodedata
from collections.abc import Callable, Sequence
from typing import Any

from cwm.decrypto.engine import code_problem, hint_problem, keyword_list
from cwm.decrypto.types import CODE_LENGTH, DIGITS, Code

MARKER = "ANSWER:"
_MARKER = re.compile(r"^[\s*#>`]*ANSWER[\s*`]*:[\s*`]*(.*?)[\s*`]*$", re.IGNORECASE | re.MULTILINE)
_SEPARATORS = re.compile(r"\s*[|;,]\s*|\s+-\s+")

Reader = Callable[[str], tuple[Any, str]]


def after_marker(reply: str) -> str | None:
    """The text after the reply's last ``ANSWER:`` line marker, stripped (None when there is none)."""
    found = _MARKER.findall(reply)
    if not found:
        return None
    text = found[-1].strip().strip("`'\"[]()").strip()
    return text or None


def read_code(text: str) -> tuple[Code | None, str]:
    """A code such as ``3-1-4``, ``3 1 4``, ``[3, 1, 4]`` or ``314``."""
    digits = re.findall(r"\d", text)
    if re.search(r"\d\d", text) and len(text.strip()) != CODE_LENGTH:
        return None, f"write the code as {CODE_LENGTH} digits separated by dashes, like 3-1-4, got {text!r}"
    code = tuple(int(d) for d in digits)
    problem = code_problem(code)
    if problem:
        return None, f"{problem}; write a code like 3-1-4 using digits {DIGITS[0]}-{DIGITS[-1]}"
    return code, ""


def split_items(text: str) -> list[str]:
    """Items separated by ``|``, ``;`` or ``,`` (quotes and list brackets stripped)."""
    parts = _SEPARATORS.split(text.strip().strip("[]()"))
    return [p.strip().strip("'\"`").strip() for p in parts if p.strip().strip("'\"`").strip()]


def hints_reader(keywords: Sequence[str]) -> Reader:
    """A reader of three hints separated by ``|`` that checks each against the rules."""

    def read(text: str) -> tuple[tuple[str, ...] | None, str]:
        items = [p.strip().strip("'\"`").strip() for p in text.split("|")] if "|" in text else split_items(text)
        items = [i for i in items if i]
        if len(items) != CODE_LENGTH:
            return None, f"give exactly {CODE_LENGTH} hints separated by '|', got {len(items)}: {text[:80]!r}"
        for hint in items:
            problem = hint_problem(hint, keywords)
            if problem:
                return None, problem
        return tuple(items), ""

    return read


def read_keywords(text: str) -> tuple[tuple[str, ...] | None, str]:
    """Four guessed keywords in digit order, separated by ``|`` or commas."""
    items = [p.strip().strip("'\"`").strip() for p in text.split("|")] if "|" in text else split_items(text)
    items = [re.sub(r"^\d\s*[.:)=-]\s*", "", i).strip() for i in items if i]
    if len(items) != len(DIGITS) or not all(items):
        return None, f"give exactly {len(DIGITS)} keywords separated by '|', got {len(items)}: {text[:80]!r}"
    return tuple(items), ""


def read_reply(reply: str, reader: Reader) -> tuple[Any, str, str]:
    """``(value, outcome, why)`` for an LLM reply: outcome ``ok``, ``unreadable`` or ``invalid``."""
    text = after_marker(reply)
    if text is None:
        return None, "unreadable", f"no line starting with '{MARKER}' was found"
    value, why = reader(text)
    return (value, "ok", "") if value is not None else (None, "invalid", why)


# Plurals that no suffix rule undoes (and the -f/-fe nouns whose plural ends in -ves).
IRREGULAR_PLURALS = {
    "mice": "mouse", "geese": "goose", "feet": "foot", "teeth": "tooth", "children": "child", "men": "man",
    "women": "woman", "people": "person", "oxen": "ox", "dice": "die", "lice": "louse", "knives": "knife",
    "wives": "wife", "lives": "life", "wolves": "wolf", "leaves": "leaf", "loaves": "loaf", "halves": "half",
    "shelves": "shelf", "calves": "calf", "thieves": "thief", "scarves": "scarf", "hooves": "hoof",
    "elves": "elf", "selves": "self",
}
_ARTICLES = ("the", "a", "an")
_EDGE = " \t\"'`.,;:!?()[]{}"


def _singulars(word: str) -> list[str]:
    """The singulars a regular English plural may come from, most likely first (none for a non-plural)."""
    if len(word) <= 3 or word.endswith(("ss", "us", "is")) or not word.endswith("s"):
        return []
    if word.endswith("ies"):
        return [word[:-3] + "y", word[:-1]]
    if word.endswith(("ches", "shes", "xes", "zes", "sses")):
        return [word[:-2], word[:-1]]
    if word.endswith(("oes", "ses", "ves")):
        return [word[:-1], word[:-2]]
    return [word[:-1]]


def lemma(word: str, known: frozenset[str] | None = None) -> str:
    """A lowercase English noun reduced to its singular: the irregular table, else the first regular
    singular that is a known word (the keyword list by default), else the first regular singular.

    A known word is kept as it is (``glass``, ``scissors``), so only plurals are reduced.
    """
    words = _known_words() if known is None else known
    if word in IRREGULAR_PLURALS:
        return IRREGULAR_PLURALS[word]
    if word in words:
        return word
    candidates = _singulars(word)
    return next((c for c in candidates if c in words), candidates[0] if candidates else word)


def normalise_keyword(text: str) -> str:
    """A keyword answer as it is compared: Unicode NFKC, lowercase, surrounding quotes and punctuation
    dropped, runs of whitespace made one space, a leading article dropped, and the last word (the head noun
    of a phrase) reduced by :func:`lemma` (``"The Cats."`` and ``cat`` both give ``cat``)."""
    words = unicodedata.normalize("NFKC", text).lower().strip(_EDGE).split()
    if len(words) > 1 and words[0] in _ARTICLES:
        words = words[1:]
    if not words:
        return ""
    return " ".join([*words[:-1], lemma(words[-1].strip(_EDGE))])


@functools.lru_cache(maxsize=1)
def _known_words() -> frozenset[str]:
    return frozenset(keyword_list())


def same_keywords(a: Sequence[str] | None, b: Sequence[str] | None) -> bool:
    """Whether two keyword lists name the same words in the same order, each word compared after
    :func:`normalise_keyword` (case, whitespace, articles and plurals ignored: ``Cats`` matches ``cat``)."""
    if a is None or b is None or len(a) != len(b):
        return False
    return all(normalise_keyword(x) == normalise_keyword(y) for x, y in zip(a, b))
