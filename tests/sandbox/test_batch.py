"""A batch of checks in one child (``Sandbox.run_batch``): every verdict is the one a fresh child per check
gives, whatever the other checks of the batch did; a child runs the next check only after an ``ok`` (or a
gate refusal) that left nothing behind, and the checks after a failure run in a fresh child."""

from __future__ import annotations

import dataclasses
from pathlib import Path

import numpy as np
import pytest

from cwm.sandbox import CALL_JOB, CHECK_JOB, BatchJob, load_source
from cwm.sandbox.checkers import check_many, world_model_checker

TTT = (Path(__file__).resolve().parents[1] / "data" / "reference" / "tic_tac_toe_model.py").read_text()
SPIN = TTT.replace("def get_initial_state():", "def get_initial_state():\n    while True:\n        pass\n", 1)
GREEDY = TTT.replace("def get_initial_state():", "def get_initial_state():\n    _ = [0] * (1 << 40)\n", 1)
BROKEN = "def get_initial_state(:\n"  # refused by the gate (it does not parse)
RAISES = "raise ValueError('at import')\n"
SERR = "import numpy as np\n\ndef f(x):\n    np.seterr(all='raise')\n    return 1\n"
READER = "import numpy as np\n\ndef f(x):\n    return str(np.float64(1.0) / np.float64(0.0))\n"
APPEND = "def f(xs):\n    xs.append(9)\n    return len(xs)\n"
COUNT = "def f(xs):\n    return len(xs)\n"
COUNTER = "N = [0]\n\ndef f(xs):\n    N[0] += 1\n    return N[0]\n"
CALL = {"function": "f", "args": [[1, 2, 3]]}


def _both(sandbox, jobs):
    """The verdicts of ``jobs`` in one batch, which child ran each, and their verdicts a fresh child per job."""
    batched = sandbox.run_batch(jobs)
    children = list(sandbox.batch_children)
    return batched, children, sandbox.run_batch(jobs, one_child=False)


def test_checks_that_pass_share_one_child_and_keep_their_reports(sandbox, ttt_trajectories):
    payload = {"trajectories": list(ttt_trajectories)}
    jobs = [BatchJob(CHECK_JOB, TTT + f"\n# candidate {i}\n", payload) for i in range(4)]
    batched, children, alone = _both(sandbox, jobs)
    assert children == [0, 0, 0, 0]
    assert batched == alone and all(r.ok for r in batched)
    reports = sandbox.check_batch(jobs)
    assert all(r.all_passed and r.executed > 0 for r in reports)


def test_a_failing_check_keeps_its_verdict_and_the_rest_run_in_a_fresh_child(sandbox, ttt_trajectories):
    """A hang (per-call budget), a module that raises, a job over its CPU limit, a memory blow-up: each gets
    the verdict it gets alone, the checks reported before it keep theirs, the ones after run in a new child.
    A gate refusal runs no candidate code, so the child goes on."""
    payload = {"trajectories": list(ttt_trajectories)}
    slow = dataclasses.replace(sandbox.limits, per_call_s=5.0)  # the job's CPU limit (1 s) comes first
    jobs = [BatchJob(CHECK_JOB, TTT, payload), BatchJob(CHECK_JOB, BROKEN, payload),
            BatchJob(CHECK_JOB, TTT + "\n# 2\n", payload), BatchJob(CHECK_JOB, SPIN, payload),
            BatchJob(CHECK_JOB, TTT + "\n# 4\n", payload), BatchJob(CHECK_JOB, RAISES, payload),
            BatchJob(CHECK_JOB, SPIN + "\n# 6\n", payload, limits=slow), BatchJob(CHECK_JOB, GREEDY, payload),
            BatchJob(CHECK_JOB, TTT + "\n# 8\n", payload)]
    batched, children, alone = _both(sandbox, jobs)
    assert [r.kind for r in batched] == ["ok", "static", "ok", "timeout", "ok", "load", "timeout", "memory", "ok"]
    assert batched == alone
    assert children == [0, 0, 0, 0, 1, 1, 2, 3, 4]


def test_state_a_check_leaves_in_a_shared_module_sends_the_next_check_to_a_fresh_child(sandbox):
    """``numpy.seterr`` outlives a check: in one process the next candidate's division would raise. The child
    sees the change after the verdict and ends, so the next check runs where numpy is as the zygote left it."""
    saved = np.geterr()
    try:  # the hazard, in this process: the first candidate's call changes what the second one computes
        load_source(SERR, api=()).f(0)
        with pytest.raises(FloatingPointError):
            load_source(READER, api=()).f(0)
    finally:
        np.seterr(**saved)
    batched, children, alone = _both(sandbox, [BatchJob(CALL_JOB, SERR, CALL), BatchJob(CALL_JOB, READER, CALL)])
    assert [r.value for r in batched] == [1, "inf"] and batched == alone
    assert children == [0, 1]


def test_a_payload_and_module_globals_changed_by_one_check_are_fresh_for_the_next(sandbox):
    """Each check gets a fresh copy of its payload and a fresh module: a candidate that appends to its
    argument, or counts its calls in a module global, changes nothing the next check sees."""
    jobs = [BatchJob(CALL_JOB, APPEND, CALL), BatchJob(CALL_JOB, COUNT, CALL), BatchJob(CALL_JOB, COUNTER, CALL),
            BatchJob(CALL_JOB, COUNTER, CALL), BatchJob(CALL_JOB, APPEND, CALL)]
    batched, children, alone = _both(sandbox, jobs)
    assert [r.value for r in batched] == [4, 3, 1, 1, 4] and batched == alone
    assert children == [0, 0, 0, 0, 0]


def test_a_sandboxed_world_model_checker_checks_many_candidates_each_in_its_own_child(sandbox, ttt_trajectories):
    """``check_many`` with the checker synthesis uses: the candidates are different untrusted programs, so each
    runs in a child of its own, and the reports are the ones each candidate gets alone."""
    check = world_model_checker(ttt_trajectories, sandbox=sandbox)
    wrong = TTT.replace("return [1.0, -1.0]", "return [-1.0, 1.0]", 1)  # x's win scored as o's: failing checks
    assert wrong != TTT
    sources = [TTT, wrong, TTT + "\n# again\n", SPIN, TTT + "\n# last\n"]
    reports = check_many(check, sources)
    assert sandbox.batch_children == [0, 1, 2, 3, 4]
    assert reports == [check(source) for source in sources]
    assert reports[0].all_passed and not reports[1].all_passed and reports[3].error.startswith("timeout:")


PATCHES_COUNTER = ("import collections\n\nclass P:\n    def m(self):\n"
                   "        self.most_common = lambda *a: [('forged', 99)]\n\n"
                   "def f(xs):\n    P.m(collections.Counter)\n    return 1\n")
USES_COUNTER = "import collections\n\ndef f(xs):\n    return collections.Counter(xs).most_common(1)\n"


def test_the_checks_batch_of_different_programs_gives_each_its_own_child(sandbox):
    """A gated program can change a library class (a method called with the class as ``self``) that no tamper
    check lists: in one shared child the next program sees it (``run_batch``'s one child is only for jobs that
    trust each other). The checks' batches (``_batched``: how synthesis checks one reply's programs) run every
    program in a child of its own, where the second program computes what it computes alone."""
    from cwm.sandbox.checkers import _batched

    call = {"function": "f", "args": [[1, 2, 2]]}
    jobs = [BatchJob(CALL_JOB, PATCHES_COUNTER, call), BatchJob(CALL_JOB, USES_COUNTER, call)]
    alone = sandbox.run(CALL_JOB, USES_COUNTER, call)
    assert alone.ok and alone.value == [[2, 2]]
    assert sandbox.run_batch(jobs)[1].value == [["forged", 99]]  # one shared child: the leak is real
    assert sandbox.run_batch(jobs, one_child=False)[1].value == alone.value
    _batched(sandbox, lambda source: None, CALL_JOB, lambda: call, None).many([PATCHES_COUNTER, USES_COUNTER])
    assert sandbox.batch_children == [0, 1]  # the checks' batch: a child per program
