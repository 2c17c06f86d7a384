"""A refinement prompt's failing tests show every player's expected and actual observation whole, within the
section's budget: a value is never cut, a field or failure that does not fit is left out with a note."""

from __future__ import annotations

import re

from cwm.synthesis.render import FAILURE_CHARS, render_failures
from cwm.types import CheckFailure, CheckReport, TypeStats


def _observations(n: int, length: int, tag: str) -> list[dict]:
    """One observation per player, each holding a hand of ``length`` cards; the last card names the player."""
    return [{"hand": [f"{tag}{k}" for k in range(length)] + [f"end-of-player-{p}"]} for p in range(n)]


def _failure(step: int, length: int, *, test_type: str = "observations") -> CheckFailure:
    expected, got = _observations(3, length, "c"), _observations(3, length, "g")
    return CheckFailure(test_type, 0, step, "get_observations(state)", expected, got, "hand differs",
                        history=("deal",) * step)


def _report(failures: list[CheckFailure]) -> CheckReport:
    total = len(failures) + 10
    return CheckReport(by_type={"observations": TypeStats(10, total)}, transitions_passed=10, transitions_total=total,
                       failures=tuple(failures))


def test_every_players_long_observation_is_shown_whole():
    failure = _failure(3, 150)  # each player's observation is about 1,000 characters, three players
    assert len(repr(failure.expected)) > 2000
    text = render_failures(_report([failure]), [failure])
    expected = re.search(r"^  expected: (.*)$", text, re.MULTILINE).group(1)  # type: ignore[union-attr]
    got = re.search(r"^  got:      (.*)$", text, re.MULTILINE).group(1)  # type: ignore[union-attr]
    assert eval(expected) == failure.expected and eval(got) == failure.got  # noqa: S307 - our own repr
    assert all(f"end-of-player-{p}" in expected for p in range(3))


def test_a_value_too_long_for_the_budget_is_left_out_whole_not_cut():
    small, large = _failure(1, 5), _failure(2, 2000)  # the second's values are about 25,000 characters each
    text = render_failures(_report([small, large]), [small, large], max_chars=30_000)
    assert len(text) <= 30_000
    second = text.split("[observations] game 1, step 2")[1]
    # its longest fields are left out whole, each saying how long it was; what is shown is whole
    assert re.search(r"left out to keep this prompt short \(\d+ characters\)", second)
    for line in second.splitlines():
        if line.startswith(("  expected: [", "  got:      [")):
            assert eval(line.split(": ", 1)[1].strip())  # noqa: S307 - parses: never cut mid-value
    # the first failure, which fits, is whole
    first = text.split("[observations] game 1, step 2")[0]
    assert repr(small.expected) in first and repr(small.got) in first


def test_failures_that_do_not_fit_are_counted_and_named_in_a_closing_line():
    failures = [_failure(1, 5)] + [_failure(s, 300, test_type=t) for s, t in ((2, "observations"), (3, "rewards"))]
    one = len(render_failures(_report(failures[:1]), failures[:1]))
    text = render_failures(_report(failures), failures, max_chars=one + 100)  # too little for a second, even bare
    assert len(text) <= one + 100 + 200
    assert text.endswith("Not shown, to keep this prompt short: 2 more failures (observations, rewards). "
                         "Fixing the ones above may fix them too.")
    # a little more room: the second is shown with its long fields left out whole, the third is not
    roomier = render_failures(_report(failures), failures, max_chars=one + 400)
    assert "[observations] game 1, step 2" in roomier and "left out to keep this prompt short" in roomier
    assert roomier.endswith("Not shown, to keep this prompt short: 1 more failure (rewards). "
                            "Fixing the ones above may fix them too.")
    # by default there is room for all three, whole
    full = render_failures(_report(failures), failures)
    assert len(full) < FAILURE_CHARS and "Not shown" not in full and full.count("end-of-player-2") == 6
