"""Code extraction from LLM replies: a table of reply shapes and what must come out."""

from __future__ import annotations

import ast
import textwrap

import pytest
from synth_helpers import program, reply

from cwm.model import WORLD_MODEL_API
from cwm.synthesis import CodeExtractionError, extract_code

REQUIRED = [f.name for f in WORLD_MODEL_API]
CORRECT = program("correct")
V2 = program("v2_no_diagonals")

CASES = {
    # name: (reply text, expected candidates, expected "how")
    "fenced-with-prose": (reply("03_refine_correct"), [CORRECT], "blocks"),
    "two-versions": (reply("two_versions"), [V2, CORRECT], "blocks"),
    "split-across-blocks": (reply("split_blocks"), None, "joined"),
    "unclosed-fence": (reply("unclosed"), [CORRECT], "unclosed"),
    "bare-code-with-prose": ("Here you go:\n\n" + CORRECT + "\nThat is the whole module.\n", [CORRECT], "bare"),
    "untagged-fence": ("```\n" + CORRECT + "```\n", [CORRECT], "blocks"),
    "json-block-ignored": ("```json\n{\"a\": 1}\n```\n```python\n" + CORRECT + "```\n", [CORRECT], "blocks"),
    "fence-in-list": ("1. The module:\n\n   ```python\n" + textwrap.indent(CORRECT, "   ") + "   ```\n2. Done.\n",
                      [CORRECT], "blocks"),
    "crlf-line-ends": (("Here:\n```python\n" + CORRECT + "```\n").replace("\n", "\r\n"), [CORRECT], "blocks"),
    "duplicate-versions": ("```python\n" + CORRECT + "```\nagain:\n```python\n" + CORRECT + "```\n", [CORRECT], "blocks"),
}


@pytest.mark.parametrize("name", sorted(CASES))
def test_extracts(name: str) -> None:
    text, expected, how = CASES[name]
    got = extract_code(text, REQUIRED)
    assert got.how == how
    if expected is None:  # joined: one module that parses and defines everything
        assert len(got.candidates) == 1
        names = {n.name for n in ast.parse(got.candidates[0]).body if isinstance(n, ast.FunctionDef)}
        assert set(REQUIRED) <= names
    else:
        assert [c.strip() for c in got.candidates] == [e.strip() for e in expected]


def test_broken_code_is_still_a_candidate() -> None:
    got = extract_code(reply("broken"), REQUIRED)
    assert len(got.candidates) == 1
    with pytest.raises(SyntaxError):
        ast.parse(got.candidates[0])


@pytest.mark.parametrize("text,needle", [
    (reply("no_code"), "no code"),
    ("", "no code"),
    ("```python\ndef get_initial_state():\n    return {}\n```\n", "does not define"),
])
def test_typed_error(text: str, needle: str) -> None:
    with pytest.raises(CodeExtractionError, match=needle):
        extract_code(text, REQUIRED)


def test_missing_functions_are_named() -> None:
    with pytest.raises(CodeExtractionError) as info:
        extract_code("```python\ndef get_initial_state():\n    return {}\n```\n", REQUIRED)
    assert "get_rewards" in str(info.value) and "get_initial_state" in str(info.value)
