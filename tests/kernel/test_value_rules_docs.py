"""docs/foundation.md states the contract's value rules in exactly the table ``cwm.value_rules.RULES`` renders, so
the page, the prompts and the checks can never disagree about a rule."""

from __future__ import annotations

from pathlib import Path

from cwm import value_rules

DOCS = Path(__file__).resolve().parents[2] / "docs" / "foundation.md"  # the checkout (tests run on an installed cwm)
HEADER = "| value | rule |"


def _table_at(text: str, header: str) -> str:
    """The markdown table that starts with ``header``: its lines up to the first that is not a table row."""
    lines = text.splitlines()
    start = lines.index(header)
    end = start
    while end < len(lines) and lines[end].startswith("|"):
        end += 1
    return "\n".join(lines[start:end])


def test_the_contract_section_holds_the_rules_table_byte_for_byte() -> None:
    text = DOCS.read_text(encoding="utf-8")
    assert text.count(HEADER) == 1
    assert _table_at(text, HEADER) == value_rules.rules_markdown()
    contract = text[text.index("## The CWM contract"): text.index("## Checks and reports")]
    assert value_rules.rules_markdown() in contract

