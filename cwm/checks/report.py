"""How checks become a report: counting outcomes per type (``Tally``), and wording the difference between
what the ground truth expects and what a model returned, for an LLM to act on (``diff``)."""

from __future__ import annotations

from collections.abc import Callable, Sequence

from cwm import value_rules
from cwm.types import JSON, CheckFailure, CheckReport, TypeStats

# The order of a report's types: the order a replay meets them (kept stable: reports are shown to LLMs).
REPORT_ORDER = ("current_player", "observations", "legal_actions", "chance_outcomes", "transition", "rewards",
                 "termination", "inference", "inference_terminal", "random_play")


class Tally:
    """Accumulates check outcomes for one report: counts per type, breaches, and the failures kept."""

    def __init__(self, max_failures_per_type: int):
        self.stats: dict[str, list[int]] = {}
        self.failures: list[CheckFailure] = []
        self.shown: dict[str, int] = {}
        self.limit = max_failures_per_type
        self.breaches = 0

    def ok(self, test_type: str) -> bool:
        s = self.stats.get(test_type)
        if s is None:
            s = self.stats[test_type] = [0, 0]
        s[0] += 1
        s[1] += 1
        return True

    def fail(self, failure: Callable[[], CheckFailure], test_type: str, *, breach: bool, count: int = 1) -> bool:
        s = self.stats.setdefault(test_type, [0, 0])
        s[1] += count
        self.breaches += count if breach else 0
        if self.shown.get(test_type, 0) < self.limit:
            self.shown[test_type] = self.shown.get(test_type, 0) + 1
            self.failures.append(failure())
        return False

    def tally(self, test_types: Sequence[str], count: int) -> None:
        """Counts ``count`` passed checks of each type at once (the replay's fast path)."""
        for test_type in test_types:
            s = self.stats.setdefault(test_type, [0, 0])
            s[0] += count
            s[1] += count

    def report(self, transitions_passed: int, transitions_total: int) -> CheckReport:
        order = {t: i for i, t in enumerate(REPORT_ORDER)}
        return CheckReport(
            by_type={k: TypeStats(*self.stats[k]) for k in sorted(self.stats, key=lambda t: order.get(t, 99))},
            transitions_passed=transitions_passed,
            transitions_total=transitions_total,
            failures=tuple(self.failures),
            breaches=self.breaches,
        )


def diff(expected: JSON, got: JSON, *, path: str = "", limit: int = 6) -> list[str]:
    """Readable differences between two JSON values, at most ``limit`` lines, each naming where."""
    out: list[str] = []
    _diff(expected, got, path or "value", out, limit)
    return out


def _diff(expected: JSON, got: JSON, path: str, out: list[str], limit: int) -> None:
    if len(out) >= limit or value_rules.same(got, expected):
        return
    if isinstance(expected, dict) and isinstance(got, dict):
        for key in expected.keys() - got.keys():
            out.append(f"{path}: missing key {key!r}")
        for key in got.keys() - expected.keys():
            out.append(f"{path}: unexpected key {key!r}")
        for key in sorted(expected.keys() & got.keys(), key=str):
            _diff(expected[key], got[key], f"{path}[{key!r}]", out, limit)
    elif isinstance(expected, list) and isinstance(got, list) and len(expected) == len(got):
        for i, (e, g) in enumerate(zip(expected, got)):
            _diff(e, g, f"{path}[{i}]", out, limit)
    elif isinstance(expected, str) and isinstance(got, str) and "\n" in expected + got:
        el, gl = expected.splitlines(), got.splitlines()
        for i in range(max(len(el), len(gl))):
            e, g = (el[i] if i < len(el) else "<none>"), (gl[i] if i < len(gl) else "<none>")
            if e != g:
                out.append(f"{path} line {i + 1}: expected {e!r}, got {g!r}")
                break
    else:
        out.append(f"{path}: expected {value_rules.describe(expected, 200)}, got {value_rules.describe(got, 200)}")
    del out[limit:]


def set_diff(expected: Sequence[str], got: Sequence[str]) -> str:
    missing = [a for a in expected if a not in got]
    extra = [a for a in got if a not in expected]
    parts = []
    if missing:
        parts.append(f"missing {missing[:10]}")
    if extra:
        parts.append(f"not legal but returned {extra[:10]}")
    return "; ".join(parts)


def merge(*reports: CheckReport) -> CheckReport:
    """One report of several (the inference checks and random play of a closed-deck candidate): counts and
    breaches summed per type, failures and errors kept in order."""
    by_type: dict[str, list[int]] = {}
    for report in reports:
        for name, stats in report.by_type.items():
            counts = by_type.setdefault(name, [0, 0])
            counts[0] += stats.passed
            counts[1] += stats.total
    order = {t: i for i, t in enumerate(REPORT_ORDER)}
    return CheckReport(
        by_type={k: TypeStats(*by_type[k]) for k in sorted(by_type, key=lambda t: order.get(t, 99))},
        transitions_passed=sum(r.transitions_passed for r in reports),
        transitions_total=sum(r.transitions_total for r in reports),
        failures=tuple(f for r in reports for f in r.failures),
        error="; ".join(r.error for r in reports if r.error),
        breaches=sum(r.breaches for r in reports),
    )
