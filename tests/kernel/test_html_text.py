"""cwm.text.html_* and CheckReport's rich display: every value a notebook shows is text, never markup, whatever
class it comes in; a check report shows its counts and the failures a broken model produced."""

from __future__ import annotations

import re
from pathlib import Path

from cwm.checks.world_model import run_checks
from cwm.games import trajectories
from cwm.sandbox import load_source
from cwm.text import html_collapsed, html_number, html_paragraph, html_table, html_text, plain_text

DATA = Path(__file__).resolve().parents[1] / "data"
HOSTILE = "<script>alert('x')</script><img src=x onerror=alert(1)>"


class Lying(str):
    """A str that says something else through every hook a formatter might call."""

    def __str__(self) -> str:
        return HOSTILE

    def __format__(self, spec: str) -> str:
        return HOSTILE

    def replace(self, *args: object) -> str:  # type: ignore[override]
        return HOSTILE


class Loud(float):
    def __repr__(self) -> str:
        return HOSTILE

    def __format__(self, spec: str) -> str:
        return HOSTILE


def test_markup_renders_as_the_characters_it_holds(html_tags):
    shown = html_table(["field"], [[HOSTILE]])
    assert "script" not in html_tags(shown).tags and "img" not in html_tags(shown).tags
    assert HOSTILE in "".join(html_tags(shown).text)


def test_a_str_subclass_is_read_as_the_string_it_holds_not_through_its_hooks():
    assert html_text(Lying("plain words")) == "plain words"
    assert html_number(Loud(0.25)) == "0.250"
    assert html_number(Lying("0.5")) == "0.5"  # not a number: shown as the text it holds


def test_control_characters_and_odd_values_are_shown_safely():
    assert html_text("a\x1b[31mred\u202etxt") == "a\\x1b[31mred\\u202etxt"
    assert html_number(10 ** 400).startswith("1000")  # too large for a float: its digits, cut to a limit
    assert html_text(object()) == "&lt;object&gt;"
    assert html_text({"k": [1, None]}) == html_text('{"k": [1, null]}')


class Ran(Exception):
    """Raised by a hook of a hostile value: a display that lets it escape ran the value's own code."""


class Masked:
    """An object that claims to be a str through ``__class__`` (what ``isinstance`` asks)."""

    @property  # type: ignore[misc]
    def __class__(self):  # noqa: ANN204
        raise Ran("__class__ was read")


class CountingDict(dict):
    """A dict whose own methods record that they ran (and change what they would show)."""

    def items(self):  # type: ignore[override]
        raise Ran("items() ran")

    def keys(self):  # type: ignore[override]
        raise Ran("keys() ran")

    def __iter__(self):
        raise Ran("__iter__ ran")


class LyingList(list):
    def __iter__(self):
        raise Ran("__iter__ ran")


def test_no_hook_of_the_value_runs_whatever_it_claims_to_be():
    assert html_text(Masked()) == "&lt;Masked&gt;"
    assert html_number(Masked()) == "<Masked>"
    shown = html_text({"outer": CountingDict(k=Lying("held")), "list": LyingList([1, 2])})
    assert shown == html_text('{"outer": {"k": "held"}, "list": [1, 2]}')
    assert html_text((1, 2.5, None, True)) == "[1, 2.5, null, true]"


def test_an_int_too_long_to_write_is_shown_by_its_size():
    huge = 10 ** 5000  # more than the 4,300 digits Python writes in decimal
    assert html_text(huge) == f"&lt;an int of {huge.bit_length()} bits&gt;"
    assert html_number(huge) == f"<an int of {huge.bit_length()} bits>"
    assert html_text([huge]) == html_text(f'["<an int of {huge.bit_length()} bits>"]')


def test_a_deep_or_long_container_is_cut_not_walked_whole():
    deep: list[object] = []
    deep.append(deep)  # a list that holds itself: json.dumps refuses it, the walk stops at its depth bound
    assert plain_text(deep).count("[") == plain_text(deep).count("]") <= 16
    long = list(range(1_000_000))
    assert len(plain_text(long, limit=100)) < 200
    assert len(html_text(long, limit=100)) <= 100
    assert len(html_paragraph("x" * (1 << 20))) < 2100  # a manifest field of a megabyte is not shown whole


def test_collapsed_code_keeps_its_lines_and_cannot_close_its_block(html_tags):
    code = "def f():\n    return '</pre></details><script>x()</script>'\n"
    shown = html_collapsed("model.py (2 lines)", code)
    tags = html_tags(shown)
    assert tags.tags == ["details", "summary", "pre"]
    assert "".join(tags.text).endswith(code)


def test_a_check_report_shows_its_counts_and_the_failures_of_a_broken_model(html_tags):
    games = trajectories.collect("tic_tac_toe", 3, seed=0)
    buggy = load_source((DATA / "synthesis" / "ttt_v1_no_diagonals_bad_terminal.py").read_text(), name="buggy")
    report = run_checks(buggy, games)
    assert report.failures, "the buggy model must fail some check"
    page = report._repr_html_()
    text = " ".join(html_tags(page).text)
    assert report.summary().splitlines()[0] in text
    for kind, stats in report.by_type.items():
        assert re.search(rf"{kind} {stats.passed} {stats.total}", text)
    rows = re.findall(r"<tr><td>([a-z_]+)</td><td>(\d+)</td><td>(\d+)</td><td>([^<]*)</td><td>([^<]*)</td>", page)
    assert len(rows) == len(report.failures)
    first = report.failures[0]
    assert rows[0][:3] == (first.test_type, str(first.trajectory + 1), str(first.step))


def test_a_failure_a_model_wrote_renders_as_text(html_tags):
    games = trajectories.collect("tic_tac_toe", 2, seed=1)
    source = (DATA / "synthesis" / "ttt_correct.py").read_text()
    hostile = source.replace("def get_legal_actions(state):",
                             f"def get_legal_actions(state):\n    raise ValueError({HOSTILE!r})", 1)
    assert hostile != source
    report = run_checks(load_source(hostile, name="hostile"), games)
    page = report._repr_html_()
    assert report.failures and not {"script", "img"} & set(html_tags(page).tags)
    assert "ValueError: &lt;script&gt;alert(" in page
