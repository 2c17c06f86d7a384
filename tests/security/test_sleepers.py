"""The hostile-model suite: every sleeper of tests/data/sleepers through every stage of the pipeline, each
stage watched for files, secrets, connections and time (tests/security/conftest.py says what is promised).

A sleeper passes the checks on the recorded games (and, most of them, the random play at load) and attacks
only where they do not look: after more model calls than any check makes, or on the calls only the
library's model wrapper makes. Its header says what each stage must make of it.
"""

from __future__ import annotations

import json

import pytest

from cwm import bundle, games
from cwm.agents import bundle_move
from cwm.agents.base import AgentError
from cwm.agents.worker import WorkerCrash, WorkerTimeout
from cwm.bundle import Bundle, BundleError
from cwm.sandbox import static_gate
from cwm.text import clean
from cwm.types import ModelLoadError
from planners.config import SearchConfig

from .conftest import REPRESENTATIVE
from .harness import CLI_START_S, MOVE_LIMIT, MOVE_SLACK_S, SEARCH_ARGS
from .programs import REFERENCE, STAGES, programs
from .stages import FIXTURE_MODEL, GAME, TRAIN, Pipeline, one_line_error

PROGRAMS = programs()
BY_NAME = {p.name: p for p in PROGRAMS}


def program_text(name: str) -> str:
    """What the reason of the sleeper's forfeit must say (its header's arena line)."""
    return BY_NAME[name].expect("arena")[1]


def matrix(stage: str) -> list:
    """Every sleeper as a parameter of one stage's test: slow unless representative, and an expected failure
    where its header names a library bug at that stage (``xfail: STAGE: why``)."""
    params = []
    for p in PROGRAMS:
        marks = [] if p.name in REPRESENTATIVE else [pytest.mark.slow]
        stages, _, why = p.header.get("xfail", "").partition(": ")
        if stage in stages.split():
            marks.append(pytest.mark.xfail(strict=True, reason=why))
        params.append(pytest.param(p, id=p.name, marks=marks))
    return params


def test_the_suite_is_large_and_mostly_attacks_at_run_time() -> None:
    assert len(PROGRAMS) >= 40 and len({p.name for p in PROGRAMS}) == len(PROGRAMS)
    refused = [p.name for p in PROGRAMS if p.gated_out]
    assert refused and len(refused) < len(PROGRAMS) / 2, refused
    for p in PROGRAMS:
        assert {"sleeper", "trigger", *STAGES} <= set(p.header), p.name
        assert p.source.startswith(REFERENCE)
    assert {p.name for p in PROGRAMS} >= REPRESENTATIVE


@pytest.mark.parametrize("program", PROGRAMS, ids=[p.name for p in PROGRAMS])
def test_the_gate_agrees_with_the_header(program) -> None:
    outcome, text = program.expect("check")
    if outcome == "static":
        with pytest.raises(ModelLoadError, match=text.replace("(", r"\(").replace(")", r"\)").replace(".", r"\.")):
            static_gate(program.source)
    else:
        static_gate(program.source)


@pytest.mark.parametrize("program", matrix("check"))
def test_cwm_check(program, pipeline: Pipeline) -> None:
    ran = pipeline.cwm(["check", str(pipeline.model), "--game", GAME, "--trajectories", str(pipeline.train)],
                       CLI_START_S)
    outcome, text = program.expect("check")
    if outcome == "passes":
        assert ran.rc == 0 and "235/235 checks passed" in ran.out, ran
    else:
        one_line_error(ran, text)


@pytest.mark.parametrize("program", matrix("export"))
def test_export(program, pipeline: Pipeline) -> None:
    outcome, text = program.expect("export")
    target = pipeline.root / "exported"
    got = pipeline.call("export_bundle", lambda: bundle.export_bundle(
        target, game=GAME, model_source=program.source, train=TRAIN, provenance={"llm": FIXTURE_MODEL}))
    if outcome == "ok":
        assert got == target and (target / "manifest.json").is_file()
    else:
        assert isinstance(got, BundleError) and text in str(got), got
        assert not target.exists() and not target.with_name("exported.partial").exists()
    ran = pipeline.cwm(["export", str(pipeline.synthesis_run()), "--out", str(pipeline.root / "exported-cli")],
                       CLI_START_S)
    load, load_text = program.expect("load")
    if outcome == "ok" and load == "ok":  # `cwm export` loads what it wrote, as a receiver would
        assert ran.rc == 0 and "exported" in ran.out and "load check: 235/235 checks passed" in ran.out, ran
    else:
        one_line_error(ran, text if outcome != "ok" else load_text)


@pytest.mark.parametrize("program", matrix("load"))
def test_load_and_inspect(program, pipeline: Pipeline) -> None:
    def contained(loaded: Bundle) -> bool:
        with pytest.raises(BundleError, match="contained"):
            loaded.model  # noqa: B018  (a contained bundle's model never enters this process)
        return not loaded.trusted and loaded.check_report.passed == 235

    pipeline.load_and_inspect(contained, "load check: 235/235 checks passed")


@pytest.mark.parametrize("executor", ["local:2", "inline"])
@pytest.mark.parametrize("program", matrix("arena"))
def test_cwm_arena(program, pipeline: Pipeline, executor: str) -> None:
    pipeline.arena(executor)


@pytest.mark.parametrize("program", matrix("arena"))
def test_cwm_run(program, pipeline: Pipeline) -> None:
    out = pipeline.root / "run"
    args = ["run", GAME, "--llm", f"replay:{pipeline.recording()}", "--out", str(out), "--budget", "1",
            "--num-test", "2", "--matches", "1", *SEARCH_ARGS, "--opponents", "random", "--executor", "local:2",
            "--quiet"]
    if program.gated_out:  # the only reply is refused, and so is its export: said in one line, also on resume
        for _ in range(2):
            one_line_error(pipeline.cwm(args, CLI_START_S), "model.py failed its sandbox check: static")
        assert not (out / "bundle").exists() and not (out / "arena").exists()
        return
    pipeline.tournament(args, out / "arena", "cwm", 2)
    report = json.loads((out / "report.json").read_text(encoding="utf-8"))
    assert report["synthesis"]["solved"] and report["synthesis"]["llm_calls"] == 1, report["synthesis"]
    assert json.loads((out / "arena" / "config.json").read_text())["move_time_limit"] == MOVE_LIMIT


@pytest.mark.parametrize("name, error", [("spin_apply_action", WorkerTimeout), ("c_stack_overflow", WorkerCrash),
                                         ("exception_escapes", AgentError), ("str_action_hash_spins", None)])
def test_a_notebook_plans_on_a_contained_bundle_in_a_worker(name, error, pipeline_of) -> None:
    """``bundle_move(load_bundle(path), state)``: the sleeper wakes in the worker's first search; this process gets a
    move or an AgentError naming the reason (in text that prints safely), never the model's code."""
    pipeline = pipeline_of(name)
    loaded = bundle.load_bundle(pipeline.bundle())
    state = games.load_game(GAME).new_initial_state()
    config = SearchConfig(num_simulations=50, rollouts=1)
    got = pipeline.call("bundle_move", lambda: bundle_move(loaded, state, config, seed=0, move_cpu_s=MOVE_LIMIT),
                        bound_s=MOVE_LIMIT + MOVE_SLACK_S + CLI_START_S)
    if error is None:
        assert got in state.legal_actions(), got
    else:
        assert type(got) is error and program_text(name) in str(got), got
        assert clean(str(got), limit=None) == str(got), "the model's text reached the caller raw"
