"""Every import path and dotted name the README, the docs and the examples use resolves in the installed
package, and none of them is a deprecated alias: a reader who copies a line gets working, current code."""

from __future__ import annotations

import ast
import importlib
import re
import warnings
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
DOCUMENTS = sorted([ROOT / "README.md", *(ROOT / "docs").glob("*.md"), *(ROOT / "examples").glob("*.py")])
DOTTED = re.compile(r"(?<![\w./-])((?:cwm|planners)(?:\.[A-Za-z_][A-Za-z0-9_]*)+)(?![\w/])")
FILES = (".md", ".py", ".json", ".jsonl", ".txt", ".toml", ".npz")  # a file name, not a Python name
IMPORT = re.compile(r"^\s*(from\s+(?:cwm|planners)[\w.]*\s+import\s+[^#\n]+|import\s+(?:cwm|planners)[\w.]*)")


def _imports(text: str) -> list[str]:
    """Every single-line ``import``/``from ... import`` statement of cwm or planners in ``text``."""
    found = []
    for line in text.splitlines():
        m = IMPORT.match(line)
        if m:
            statement = m.group(1).strip().rstrip("\\").strip()
            if statement.endswith("(") or statement.count("(") != statement.count(")"):
                continue  # a parenthesised import split over lines: its names are checked as dotted names
            found.append(statement)
    return found


def _resolve(dotted: str) -> object:
    """The object a dotted name denotes: the longest importable module prefix, then attributes."""
    parts = dotted.split(".")
    for cut in range(len(parts), 0, -1):
        try:
            obj: object = importlib.import_module(".".join(parts[:cut]))
        except ModuleNotFoundError:
            continue
        for attr in parts[cut:]:
            obj = getattr(obj, attr)
        return obj
    raise ModuleNotFoundError(dotted)


def _cases() -> list[tuple[str, str]]:
    cases = []
    for doc in DOCUMENTS:
        text = doc.read_text(encoding="utf-8")
        name = str(doc.relative_to(ROOT))
        cases += [(name, s) for s in dict.fromkeys(_imports(text))]
        cases += [(name, d) for d in dict.fromkeys(DOTTED.findall(text)) if not d.endswith(FILES)]
    return cases


CASES = _cases()


def test_the_documents_name_some_of_cwm() -> None:
    assert len(CASES) > 200  # the scan found the docs; an empty scan would pass every case below


@pytest.mark.parametrize("doc, name", CASES, ids=[f"{d}:{n}" for d, n in CASES])
def test_a_documented_name_resolves_without_a_deprecation(doc: str, name: str) -> None:
    with warnings.catch_warnings():
        warnings.simplefilter("error", DeprecationWarning)
        if name.startswith(("from ", "import ")):
            exec(compile(ast.parse(name), doc, "exec"), {})
        else:
            _resolve(name)
