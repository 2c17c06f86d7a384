"""``cwm.types.from_former_keywords``: a settings object given whole or, deprecated, as keyword arguments."""

from __future__ import annotations

import contextlib
import dataclasses

import pytest

from cwm.types import UsageError, from_former_keywords


@dataclasses.dataclass(frozen=True)
class Plan:
    games: int
    seed: int = 0
    move_s: float | None = 60.0


class PlanError(ValueError):
    pass


def run(plan: Plan | None = None, **former: object) -> Plan | None:
    return from_former_keywords(Plan, plan, former, who="run", error=PlanError, rename={"num_games": "games"})


def test_the_settings_object_is_passed_through_unchanged():
    plan = Plan(games=4)
    assert run(plan) is plan and run() is None


def test_former_keywords_build_the_object_with_a_warning_at_the_caller():
    with pytest.warns(DeprecationWarning, match=r"run\(move_s=, num_games=, seed=...\) is deprecated: pass Plan\(...\)") as seen:
        plan = run(num_games=6, seed=3, move_s=None)
    assert plan == Plan(games=6, seed=3)  # renamed; a None keyword keeps the field's default
    assert seen[0].filename == __file__


@pytest.mark.parametrize("plan,former,message", [
    (Plan(games=1), {"seed": 2}, r"run: pass either a Plan or \['seed'\], not both"),
    (None, {"games": 2, "sed": 1}, r"run: unknown arguments \['sed'\]"),
    (None, {"seed": 1}, "run: .*games"),  # the required field is missing
])
def test_bad_arguments_raise_the_callers_error(plan, former, message):
    warns = plan is None and "sed" not in former  # a missing field is found after the warning, a stray name before
    with pytest.warns(DeprecationWarning) if warns else contextlib.nullcontext(), \
            pytest.raises(PlanError, match=message):
        run(plan, **former)


def test_the_default_error_is_a_usage_error():
    with pytest.raises(UsageError, match="pass either"):
        from_former_keywords(Plan, Plan(games=1), {"seed": 1}, who="f")

