"""Value-function sleepers: a bundle's value.py beside a correct model. Export checks that it passes the gate,
loads and defines get_value; load also runs the value checks in the sandbox (a failure is recorded in
``value_report``, not refused), and a planning worker's search calls it at every leaf. Through export, load and inspect, and cwm arena on the pool and inline, with the same watch as the
model sleepers (tests/security/conftest.py).
"""

from __future__ import annotations

import pytest

from cwm import bundle
from cwm.bundle import BundleError

from .programs import value_programs
from .stages import FIXTURE_MODEL, GAME, TRAIN, Pipeline

PROGRAMS = value_programs()
MATRIX = [pytest.param(p, id=p.name, marks=() if p.name == "spin_value" else pytest.mark.slow) for p in PROGRAMS]


def test_each_value_sleeper_says_what_every_stage_makes_of_it() -> None:
    assert {p.name for p in PROGRAMS} >= {"spin_value", "nan_value", "value_import_os"}
    assert all({"sleeper", "trigger", "export", "load", "arena"} <= set(p.header) for p in PROGRAMS)


@pytest.mark.parametrize("program", MATRIX)
def test_export_load_and_inspect(program, pipeline: Pipeline) -> None:
    outcome, text = program.expect("export")
    target = pipeline.root / "exported"
    got = pipeline.call("export_bundle", lambda: bundle.export_bundle(
        target, game=GAME, model_source=program.source, train=TRAIN, extra_sources=program.extra,
        provenance={"llm": FIXTURE_MODEL}))
    assert (got == target) if outcome == "ok" else (isinstance(got, BundleError) and text in str(got)), got
    pipeline.load_and_inspect(lambda loaded: set(loaded.sources) == {"model.py", "value.py"}, "value.py")


@pytest.mark.parametrize("executor", ["local:2", "inline"])
@pytest.mark.parametrize("program", MATRIX)
def test_cwm_arena(program, pipeline: Pipeline, executor: str) -> None:
    pipeline.arena(executor)
