"""A planning worker's refusal (its words for a model's breach, which quote the model) is shown cut and cleaned,
and a hostile one of many megabytes is never cleaned or copied whole."""

from __future__ import annotations

import tracemalloc

from cwm.agents.worker import MAX_REFUSED_CHARS, refusal


def test_a_huge_refusal_is_cut_before_it_is_cleaned():
    refused = "\x1b[2J" * (4 << 20)  # 16 M characters, each escape sequence cleaned into a longer visible one
    tracemalloc.start()
    try:
        error = refusal("m", refused)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert peak < 1 << 20, f"{peak:,} bytes allocated: the whole refusal was cleaned"
    text = str(error)
    assert text.startswith("world model m failed: \\x1b[2J") and "\x1b" not in text and "\n" not in text
    assert len(text) < MAX_REFUSED_CHARS + 100


def test_a_refusal_that_is_not_text_is_named_by_its_type():
    assert str(refusal("m", {"x": 1})) == "world model m failed: a dict, not a message"
    assert str(refusal("m", "the model's apply_action raised KeyError")) == \
        "world model m failed: the model's apply_action raised KeyError"
