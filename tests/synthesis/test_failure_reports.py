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


def _huge(tag: str, strings: int = 60) -> list[str]:
    """A value of about ``strings`` × 8,000 characters (each string under the per-string cut)."""
    return [f"{tag}{k}-" + "z" * 8000 for k in range(strings)]


def _huge_failures() -> list[CheckFailure]:
    same = [{"board": _huge("o", 10)}] * 2  # an observation every player shares, over the cap
    return [
        CheckFailure("observations", 0, 2, "get_observations(state)", _observations(2, 20, "c"), _huge("g"),
                     "differs", history=("deal", "x(1,1)"), observed=None),
        CheckFailure("legal_actions", 1, 4, "get_legal_actions(state)", ["a", "b"], {"k": _huge("k")}, "differs",
                     traceback="Traceback: late", observed=same),
        CheckFailure("transition", 1, 5, "apply_action(state, 'a')", _huge("e"), None, "",
                     traceback="Traceback\n  KeyError: 'a'", observed=_observations(2, 5, "p")),
        _failure(6, 40),
    ]


def test_a_huge_value_is_not_stored_and_every_report_reads_as_if_it_were(monkeypatch):
    import json

    import cwm.types

    assert cwm.types.VALUE_CHARS > FAILURE_CHARS  # a prompt never shows a value the cap drops
    monkeypatch.setattr(cwm.types, "VALUE_CHARS", 10 ** 9)  # as before the cap: every value kept whole
    whole = _huge_failures()
    monkeypatch.undo()
    capped = _huge_failures()
    assert [f.got is None for f in capped] == [True, True, True, False]
    assert capped[0].not_kept == (("got", len(repr(whole[0].got)), repr(whole[0].got)[:600]),)
    assert capped[1].observed is None and capped[2].expected is None and capped[3].not_kept == ()
    # the refinement prompt's failing tests, at any budget, and the terminal report read the same
    for budget in (FAILURE_CHARS, 12_000, 3_000, 200):
        assert render_failures(_report(capped), capped, max_chars=budget) == \
            render_failures(_report(whole), whole, max_chars=budget)
    for kept, old in zip(capped, whole):
        assert kept.render() == old.render()  # a terminal shows a value's start and its length either way
        dropped = {"observed" if e[0].startswith("observed") else e[0] for e in kept.not_kept}
        assert kept.render(full=True) == old.render(full=True, leave_out=dropped)
    assert "the same for every player): left out to keep this prompt short" in capped[1].render(full=True)
    assert "got:      an exception (below)" in capped[2].render(full=True)  # its got is None: it raised
    # what a report file holds stays small; it reads back as the same failure
    stored = json.dumps(_report(capped).to_json())
    assert len(json.dumps(_report(whole).to_json())) > 1_500_000 and len(stored) < 60_000
    assert CheckReport.from_json(json.loads(stored)).failures == tuple(capped)
    assert "not_kept" not in json.loads(stored)["failures"][3]  # a failure that kept everything reads as before


def test_a_malformed_not_kept_entry_in_a_report_file_is_refused_in_one_line():
    import pytest

    data = _report([_failure(1, 3)]).to_json()
    for bad in (["got", 5, "x"], [["state", 5, "x"]], [["got", -1, "x"]], [["got", 5, 7]], [["got", True, "x"]]):
        data["failures"][0]["not_kept"] = bad  # type: ignore[index]
        with pytest.raises(ValueError, match=r"^failure field 'not_kept': .* is not") as err:
            CheckReport.from_json(data)
        assert "\n" not in str(err.value)
