"""One timer per stretch of model calls in a sandbox child (a replayed trajectory, a rollout): every call keeps
its own per-call budget, so a call that spins in the middle of a stretch is stopped with the verdict a lone
guarded call gets, and calls that each stay under the budget pass however long the stretch runs."""

from __future__ import annotations

import os
import random
import signal
import textwrap
import time
from collections.abc import Callable
from typing import Any

from cwm import value_rules
from cwm.games import trajectories
from cwm.model import WorldModel
from cwm.sandbox import CHECK_JOB, Limits, Sandbox, load_source
from cwm.sandbox.child import _CURRENT, Abort, _Child, child_guard
from cwm.types import CheckReport
from planners.rollout import rollout_returns

from .conftest import REFERENCE_TTT

MARKS = '(9 - state["board"].count("."))'  # marks on the board: 0 at the start, 3 in the middle of a game


def _spinning(function: str, from_marks: int, body: str = "while True:\n    pass") -> str:
    """The reference model, with ``function`` running ``body`` once the board holds ``from_marks`` marks."""
    head = f"def {function}(state):\n" if function != "apply_action" else "def apply_action(state, action):\n"
    assert head in REFERENCE_TTT
    return REFERENCE_TTT.replace(head, f"{head}    if {MARKS} >= {from_marks}:\n{textwrap.indent(body, ' ' * 8)}\n")


def test_a_call_that_spins_in_the_middle_of_a_replay_is_stopped_naming_it(sandbox: Sandbox) -> None:
    trajs = tuple(trajectories.record("tic_tac_toe", seed=s) for s in range(2))
    report = sandbox.check_world_model(_spinning("apply_action", 3), trajs)
    assert report.error == "timeout: apply_action(...) ran longer than the per-call budget of 0.3 s"
    # the per-call path (one timer per call) gives the same verdict
    result = sandbox.run(CHECK_JOB, _spinning("apply_action", 3),
                         {"trajectories": list(trajs), "stretch": False})
    assert (result.kind, result.error) == ("timeout", "apply_action(...) ran longer than the per-call budget of 0.3 s")


def test_memory_exhausted_in_the_middle_of_a_replay_is_the_memory_verdict_naming_the_call(sandbox: Sandbox) -> None:
    trajs = (trajectories.record("tic_tac_toe", seed=0),)
    source = "import numpy as np\n" + _spinning(
        "get_observations", 3, "blocks = []\nwhile True:\n    blocks.append(np.ones(10 ** 7))")
    report = sandbox.check_world_model(source, trajs)
    assert report.error == "memory: get_observations(...) exceeded the memory limit of 256 MB"


def _loop_cpu(n: int) -> float:
    start = time.process_time()
    x = 0
    for i in range(n):
        x += i
    return time.process_time() - start


def test_calls_each_under_the_budget_pass_however_long_the_replay(sandbox: Sandbox) -> None:
    """Every get_rewards spins about a quarter of the budget (about 0.05 s of CPU): two trajectories take
    several budgets, and still pass (each call is timed, not the stretch)."""
    n = int(300_000 * 0.05 / min(_loop_cpu(300_000) for _ in range(3)))
    quarter = min(_loop_cpu(n) for _ in range(3))
    budget = round(4 * quarter, 3)
    slow = _spinning("get_rewards", 0, f"x = 0\nfor i in range({n}):\n    x += i")
    trajs = tuple(t for t in (trajectories.record("tic_tac_toe", seed=s) for s in range(20)) if len(t.steps) >= 8)[:2]
    limits = Limits(wall_s=60.0, cpu_s=60.0, memory_mb=256, per_call_s=budget)
    result = sandbox.run(CHECK_JOB, slow, {"trajectories": list(trajs)}, limits=limits)
    assert result.kind == "ok", result.error
    report = CheckReport.from_json(result.value)
    assert report.all_passed and report.transitions_total >= 16
    assert report.transitions_total * quarter > 3 * budget  # the replays ran longer than one call's budget


def test_a_call_made_of_long_built_in_calls_is_stopped_at_its_budget(sandbox: Sandbox) -> None:
    """A tick is handled only between bytecodes, so a call made of a few long built-in calls (each several
    ticks of CPU) is seen once per built-in call: the stretch reads the CPU the call used from the clock, and
    stops it as a lone guarded call is stopped, where counting ticks let it run many budgets and pass."""
    start = time.process_time()
    n = 1_000_000
    sum(range(n))
    per_sum = max(time.process_time() - start, 1e-4)
    n = int(n * 0.08 / per_sum)  # one sum(range(n)): about 0.08 s of CPU, 0.4 of the budget below
    body = f"for _ in range(8):\n    sum(range({n}))"  # about 3 budgets of CPU in 8 built-in calls
    trajs = (trajectories.record("tic_tac_toe", seed=0),)
    limits = Limits(wall_s=60.0, cpu_s=60.0, memory_mb=256, per_call_s=0.2)
    expected = "apply_action(...) ran longer than the per-call budget of 0.2 s"
    for stretch in (True, False):
        result = sandbox.run(CHECK_JOB, _spinning("apply_action", 0, body),
                             {"trajectories": list(trajs), "stretch": stretch}, limits=limits)
        assert (result.kind, result.error) == ("timeout", expected), stretch


def _in_child(body: Callable[[], Any], per_call_s: float) -> str:
    """``body()`` in a forked process set up as a sandbox child's timer is (``child_main``): its result, or the
    verdict of the ``Abort`` that stopped it."""
    read, write = os.pipe()
    pid = os.fork()
    if pid == 0:
        try:
            os.close(read)
            child = _Child({"per_call_s": per_call_s, "memory_mb": 256})
            _CURRENT[:] = [child]
            signal.signal(signal.SIGVTALRM, child.on_alarm)
            try:
                out = f"ok: {body()!r}"
            except Abort as a:
                out = f"{a.kind}: {a.message}"
            except BaseException as e:  # noqa: BLE001  (the test reports whatever ended the body)
                out = f"raised {type(e).__name__}: {e}"
            os.write(write, out.encode())
        finally:
            os._exit(0)
    os.close(write)
    chunks = []
    while chunk := os.read(read, 4096):
        chunks.append(chunk)
    os.close(read)
    os.waitpid(pid, 0)
    return b"".join(chunks).decode()


def _rollouts(source: str, *, gate: bool = True) -> Callable[[], Any]:
    def body() -> Any:
        model = WorldModel(load_source(source, name="spins", gate=gate), guard=child_guard())
        assert getattr(model.guard, "stretch", None) is not None  # rollouts run as stretches here
        return rollout_returns(model.new_initial_state(), 3, random.Random(0))

    return body


def test_a_rollout_that_spins_in_the_middle_of_its_playout_is_stopped_naming_the_call() -> None:
    for function in ("get_legal_actions", "apply_action", "get_rewards", "get_current_player"):
        got = _in_child(_rollouts(_spinning(function, 4)), per_call_s=0.2)
        assert got == f"timeout: {function}(...) ran longer than the per-call budget of 0.2 s", (function, got)


def test_a_rollout_whose_calls_stay_under_the_budget_completes() -> None:
    got = _in_child(_rollouts(REFERENCE_TTT), per_call_s=0.2)
    assert got.startswith("ok: [") and got.count(",") == 1, got


def test_a_model_that_swallows_the_interrupt_mid_rollout_is_still_stopped() -> None:
    swallow = "try:\n    while True:\n        pass\nexcept BaseException:\n    pass"
    # the gate refuses BaseException in a model: ungated here, as a model that got past it would run
    got = _in_child(_rollouts(_spinning("apply_action", 4, swallow), gate=False), per_call_s=0.2)
    assert got == "timeout: apply_action(...) ran longer than the per-call budget of 0.2 s", got


def test_outside_a_sandbox_child_the_guard_is_a_plain_call() -> None:
    model = WorldModel(load_source(_spinning("get_rewards", 99), name="plain"), guard=child_guard())
    assert getattr(model.guard, "stretch", None) is None
    with_rollouts = rollout_returns(model.new_initial_state(), 2, random.Random(1))
    assert len(with_rollouts) == 2


def test_the_checks_own_work_after_a_call_counts_against_no_call(sandbox: Sandbox) -> None:
    """A state that is cheap for the model to build (one list repeated two million times) and slow for the
    checks to freeze: a timer per call never counts the freezing, and neither does a stretch (the verdicts
    of both paths are the same passing report)."""
    padded = REFERENCE_TTT.replace(
        '    return {"board": board, "player": 1 - state["player"]}',
        '    new = {"board": board, "player": 1 - state["player"]}\n'
        '    if board.count(".") == 6:\n'
        '        new["pad"] = [[0]] * 2_000_000\n'
        '    return new')
    assert padded != REFERENCE_TTT
    trajs = tuple(t for t in (trajectories.record("tic_tac_toe", seed=s) for s in range(20)) if len(t.steps) >= 5)[:1]
    start = time.process_time()
    value_rules.state({"board": [], "pad": [[0]] * 2_000_000})  # what the checks spend freezing it
    freeze = time.process_time() - start
    assert freeze > 0.15, "freezing two million lists should take longer than this"
    limits = Limits(wall_s=60.0, cpu_s=60.0, memory_mb=1024, per_call_s=round(max(0.05, freeze / 3), 3))
    results = {stretch: sandbox.run(CHECK_JOB, padded, {"trajectories": list(trajs), "stretch": stretch},
                                    limits=limits) for stretch in (False, True)}
    assert results[False].kind == "ok", results[False].error
    assert results[True].kind == "ok", results[True].error
    assert results[True].value == results[False].value and CheckReport.from_json(results[True].value).all_passed
