"""The static gate's allowances (what a game model legitimately writes) and call_budget for in-process models."""

from __future__ import annotations

import builtins
import threading
import time

import pytest

from cwm import model
from cwm.sandbox import load_source, static_gate
from cwm.sandbox.budget import call_budget
from cwm.types import ModelContractError, ModelLoadError

ALLOWED = {
    "self-private": "class A:\n    def __init__(self):\n        self._x = 1\n    def f(self):\n        return self._x\n",
    "seeded-random": "import random\nrng = random.Random(3)\nv = rng.choice([1, 2])\n",
    "seeded-numpy": "from numpy.random import default_rng\nrng = default_rng(seed=4)\nimport numpy as np\n"
                    "g = np.random.default_rng(5)\n",
    "fstring": "def f(a):\n    return f'{a}({a},{a})'\n",
    "format": "def f(a):\n    return '{}-{}'.format(a, a) + '{0}'.format(a)\n",
    "collections-abc": "from collections.abc import Mapping\nimport collections.abc\n",
    "dataclass": "import dataclasses\n@dataclasses.dataclass\nclass S:\n    x: int = 0\n",
    "json-loads": "import json\ndef f(s):\n    return json.loads(json.dumps(s))\n",
    "builtin-positional-match": "def f(x):\n    match x:\n        case int(n) | str(n):\n            return n\n",
    "keyword-class-match": "import dataclasses\n@dataclasses.dataclass\nclass P:\n    x: int = 0\n"
                           "def f(p):\n    match p:\n        case P(x=v):\n            return v\n",
    "main-guard": "if __name__ == '__main__':\n    pass\n",
    "generator-and-finally": "def g(xs):\n    for x in xs:\n        yield x\n"
                             "def f():\n    try:\n        return 1\n    finally:\n        pass\n",
    "except-exception": "def f():\n    try:\n        return 1\n    except (ValueError, Exception):\n        return 0\n"
                        "    finally:\n        pass\n",
}

REJECTED = {
    "relative-import": ("from . import x\n", "line 1: relative imports are not allowed"),
    "star-import": ("from math import *\n", "line 1: 'from math import *' is not allowed"),
    "unseeded-Random": ("import random\nr = random.Random()\n", "line 2: Random() without a seed"),
    "unseeded-default_rng": ("import numpy as np\ng = np.random.default_rng()\n",
                             "line 2: default_rng() without a seed"),
    "system-random": ("import random\nr = random.SystemRandom(1)\n", "line 2: SystemRandom is not reproducible"),
    "from-random-choice": ("from random import choice\n", "line 1: random.choice draws from the global"),
    "np-alias-random": ("import numpy.random as npr\nx = npr.rand()\n", "line 2: numpy.random.rand()"),
    "attribute-store": ("import math\nmath.pi = 3\n", "line 2: assigning or deleting attribute 'pi'"),
    "attribute-delete": ("import json\ndel json.loads\n", "line 2: assigning or deleting attribute 'loads'"),
    "vars": ("x = vars()\n", "line 1: use of 'vars' is not allowed"),
    "positional-class-match": ("import random\nclass P:\n    pass\nmatch random:\n    case P(o):\n        pass\n",
                               "line 5: positional sub-patterns in a class pattern"),
    "three-argument-type": ("P = type('P', (), {})\n", "line 1: type() with more than one argument"),
    "dunder-string": ("names = ('__match_args__',)\n", "line 1: the string '__match_args__' names a dunder"),
    "rebind-builtin-class": ("import dataclasses as int\n", "line 1: rebinding the builtin name 'int'"),
    "bare-except": ("try:\n    pass\nexcept:\n    pass\n", "line 3: a bare 'except:' is not allowed"),
    "except-base-exception": ("try:\n    pass\nexcept BaseException:\n    pass\n",
                              "line 3: use of 'BaseException' is not allowed"),
    "alias-base-exception": ("E = (ValueError, BaseException)\n", "line 1: use of 'BaseException' is not allowed"),
    "raise-system-exit": ("raise SystemExit\n", "line 1: use of 'SystemExit' is not allowed"),
    "generator-exit": ("def f():\n    raise GeneratorExit\n", "line 2: use of 'GeneratorExit' is not allowed"),
    "finally-continue": ("while True:\n    try:\n        pass\n    finally:\n        continue\n",
                         "line 5: return, break or continue inside 'finally'"),
    "mro": ("E = ValueError.mro()[-2]\n", "line 1: access to attribute 'mro' is not allowed"),
    "typing-contextlib": ("from typing import contextlib\n", "line 1: access to attribute 'contextlib'"),
    "make-dataclass": ("import dataclasses\nP = dataclasses.make_dataclass('P', [])\n",
                       "line 2: access to attribute 'make_dataclass'"),
    "yield-in-try-finally": ("def g():\n    try:\n        yield 1\n    finally:\n        pass\n",
                             "line 3: yield or await inside a 'try' that has a 'finally'"),
    "huge-source": ("x = 1\n" * 200_000, "characters; the limit is"),
}


@pytest.mark.parametrize("source", list(ALLOWED.values()), ids=list(ALLOWED))
def test_gate_allows_what_models_need(source: str) -> None:
    static_gate(source)


@pytest.mark.parametrize("source,reason", list(REJECTED.values()), ids=list(REJECTED))
def test_gate_rejects_with_line_and_reason(source: str, reason: str) -> None:
    with pytest.raises(ModelLoadError) as err:
        static_gate(source)
    assert reason in str(err.value)


def test_load_source_uses_the_gate() -> None:
    with pytest.raises(ModelLoadError, match="import of 'os'"):
        load_source("import os\n")


LIBRARY_MODEL = """
import dataclasses
import enum
from collections import namedtuple
import numpy as np

Point = namedtuple("Point", "row col")


class Mark(enum.Enum):
    X = "x"


@dataclasses.dataclass(frozen=True)
class Cell:
    point: Point
    mark: Mark


def get_initial_state():
    cell = Cell(Point(0, 1), Mark.X)
    return {"cell": [cell.point.row, cell.mark.value], "sum": float(np.arange(4).sum())}
"""


def test_load_source_runs_gated_models_with_the_sandbox_builtins() -> None:
    """A gate bypass in an accepted model would otherwise find open/eval/__import__ in its builtins."""
    module = load_source(LIBRARY_MODEL, api=())
    assert module.get_initial_state() == {"cell": [0, "x"], "sum": 6.0}  # dataclasses, enum, numpy still work
    seen = module.get_initial_state.__globals__["__builtins__"]
    assert isinstance(seen, dict)
    assert not {"open", "eval", "exec", "getattr", "compile", "__loader__"} & set(seen)
    with pytest.raises(ImportError, match="sandbox: import of 'os' is not allowed"):
        seen["__import__"]("os")
    trusted = load_source("x = 1\n", api=(), gate=False)  # hand-written fixtures keep everything
    assert vars(trusted)["__builtins__"] in (builtins, vars(builtins))


def spin(seconds: float) -> str:
    """Spins for ``seconds`` of this thread's CPU time (what a budget counts)."""
    end = time.thread_time() + seconds
    while time.thread_time() < end:
        pass
    return "done"


def stubborn() -> str:
    """Swallows the first interrupt and keeps spinning: the budget's re-firing interval must still end it."""
    try:  # noqa: SIM105  (the point: a model that catches everything)
        spin(10)
    except BaseException:
        pass
    return spin(10)


def test_call_budget_passes_fast_calls_through() -> None:
    guard = call_budget(0.5)
    assert guard(spin, 0.01) == "done"
    assert guard(lambda a, b: a + b, 1, 2) == 3


@pytest.mark.parametrize("fn", [spin, stubborn], ids=["loop", "swallows-once"])
def test_call_budget_turns_a_runaway_call_into_a_contract_error(fn) -> None:  # noqa: ANN001
    guard = call_budget(0.1)
    start = time.thread_time()
    with pytest.raises(ModelContractError, match=rf"{fn.__name__}\(\.\.\.\) ran longer than its time budget of 0.1 s"):
        guard(fn, 10) if fn is spin else guard(fn)
    assert time.thread_time() - start < 1.0  # CPU time: however busy the machine, the call got 0.1 s and a poll


def test_call_budget_counts_cpu_time_not_wall_time() -> None:
    # A call that waits (here: a blocked wait of 0.3 s, five budgets of wall time) uses almost no CPU: it is
    # not over its budget, as a call slowed down by a busy machine is not.
    guard = call_budget(0.06)
    assert guard(lambda: threading.Event().wait(0.3) or "waited") == "waited"


def _waits(seconds: float) -> str:
    """Uses no CPU for ``seconds`` (short waits, so that an interrupt can land between them)."""
    for _ in range(round(seconds / 0.05)):
        threading.Event().wait(0.05)
    return "waited"


def _sleeps(seconds: float) -> str:
    """Uses no CPU for ``seconds``: one sleep, which allocates nothing (so no garbage collection runs in it)."""
    time.sleep(seconds)
    return "slept"


def test_a_call_that_gets_no_cpu_is_not_cut_before_the_backstop_floor() -> None:
    # A call that gets no CPU for 0.6 s (as a thread descheduled on a busy machine, or waiting for the GIL,
    # does) under a 2 ms budget: 300 budgets of wall time, far under the 30 s floor. It is not over budget.
    # (Short waits in a loop would allocate, and a collection of a large test process's heap can use the 2 ms.)
    assert call_budget(0.002)(_sleeps, 0.6) == "slept"


def test_a_call_that_blocks_is_ended_by_the_backstop_at_its_cpu_share(monkeypatch: pytest.MonkeyPatch) -> None:
    from cwm.sandbox import budget, watch

    monkeypatch.setattr(budget, "BACKSTOP_FLOOR_S", 0.1)  # instead of 30 s, so that the test is short
    monkeypatch.setattr(watch, "MIN_SHARE", 1.0)  # the backstop then never grows past three budgets (0.15 s)
    with pytest.raises(ModelContractError, match=r"_waits\(\.\.\.\) ran longer than its time budget of 0.05 s"):
        call_budget(0.05)(_waits, 60.0)


def test_call_budget_in_a_worker_thread() -> None:
    guard = call_budget(0.1)
    out: dict[str, object] = {}

    def work() -> None:
        out["fast"] = guard(spin, 0.01)
        try:
            guard(spin, 10)
        except ModelContractError as e:
            out["error"] = str(e)
        out["cpu"] = time.thread_time()

    t = threading.Thread(target=work)
    t.start()
    t.join(120)
    assert out.pop("cpu") < 2.0  # the thread's own CPU time: the budget stopped the call, not the 10 s spin
    assert out == {"fast": "done", "error": "spin(...) ran longer than its time budget of 0.1 s"}


def test_call_budget_guards_a_world_model() -> None:
    source = "def get_initial_state():\n    while True:\n        pass\n" + "".join(
        f"def {f.name}(*a):\n    return None\n" for f in model.WORLD_MODEL_API if f.name != "get_initial_state")
    wm = model.WorldModel(load_source(source), guard=call_budget(0.1))
    with pytest.raises(ModelContractError, match="get_initial_state"):
        wm.new_initial_state()


def test_a_stretch_gives_each_call_its_own_budget() -> None:
    """Five calls of 0.06 s under a 0.1 s budget: 0.3 s in all, no call over budget, nothing stopped."""
    guard = call_budget(0.1)

    def body(beat) -> str:  # noqa: ANN001
        for _ in range(5):
            beat("spin")
            spin(0.06)
        return "ok"

    assert guard.stretch(body) == "ok"


def test_a_stretch_names_the_call_that_ran_over_and_frees_the_guard() -> None:
    guard = call_budget(0.1)

    def body(beat) -> None:  # noqa: ANN001
        beat("get_legal_actions")
        spin(0.01)
        beat("apply_action")
        spin(10)

    start = time.thread_time()
    with pytest.raises(ModelContractError, match=r"^apply_action\(\.\.\.\) ran longer than its time budget of 0.1 s$"):
        guard.stretch(body)
    assert time.thread_time() - start < 1.0
    assert guard(lambda: 1) == 1
    with pytest.raises(ModelContractError, match=r"^spin\(\.\.\.\) ran longer"):  # not the stretch's old name
        guard(spin, 10)


def test_a_stretch_inside_a_guarded_call_cannot_extend_the_outer_budget() -> None:
    guard = call_budget(0.2)

    def beating(beat) -> str:  # noqa: ANN001
        for _ in range(40):  # 2 s of calls, each beat well inside 0.2 s
            beat("spin")
            spin(0.05)
        return "not stopped"

    def outer() -> str:
        return guard.stretch(beating)

    start = time.thread_time()
    with pytest.raises(ModelContractError, match=r"^outer\(\.\.\.\) ran longer than its time budget of 0.2 s$"):
        guard(outer)
    assert time.thread_time() - start < 1.0  # CPU time: the beats did not extend the outer call's 0.2 s


def test_a_world_model_stretch_uses_bare_functions_only_under_a_timed_guard() -> None:
    source = "".join(f"def {f.name}(*a):\n    return None\n" for f in model.WORLD_MODEL_API)
    module = load_source(source)
    calls = []

    def counting(fn, *args):  # noqa: ANN001, ANN202
        calls.append(fn.__name__)
        return fn(*args)

    for guard, timed in [(model.direct_guard, False), (counting, False), (call_budget(1.0), True)]:
        wm = model.WorldModel(module, guard=guard)
        calls.clear()

        def body(beat, fns):  # noqa: ANN001, ANN202
            beat("apply_action")
            return beat, fns["apply_action"]({}, "a")

        beat, result = wm.stretch(body)
        assert result is None
        assert (beat is not model.no_beat) == timed  # a timed stretch hands out real beats ...
        assert calls == ([] if timed or guard is model.direct_guard else ["apply_action"])  # ... and bare functions


class _InterruptOnce:
    """Stands in for a lock or a thread start: raises once (as a signal handler's exception landing there
    would), then does what the real one does."""

    def __init__(self, real) -> None:  # noqa: ANN001
        self.real, self.raised = real, False

    def __call__(self, *args):  # noqa: ANN002, ANN204
        if not self.raised:
            self.raised = True
            raise KeyboardInterrupt("an interrupt landing here")
        return self.real(*args)


def test_an_interrupt_in_the_guards_cleanup_leaves_the_guard_armed(monkeypatch) -> None:
    from cwm.sandbox import budget as _sandbox_budget

    guard = call_budget(0.1)
    assert guard(lambda: 1) == 1
    slot = _sandbox_budget._WATCHDOG.local.slot
    real_lock = slot.lock

    class Lock:  # the first release-and-read of the call's state is interrupted
        enter = _InterruptOnce(real_lock.__enter__)

        def __enter__(self):  # noqa: ANN204
            return self.enter()

        def __exit__(self, *exc):  # noqa: ANN002, ANN204
            return real_lock.__exit__(*exc)

    monkeypatch.setattr(slot, "lock", Lock())
    with pytest.raises(KeyboardInterrupt):
        guard(lambda: 1)
    start = time.thread_time()
    with pytest.raises(ModelContractError, match="spin"):  # still a guarded call, not a "nested" one
        guard(spin, 10)
    assert time.thread_time() - start < 1.0


def test_a_watchdog_whose_start_was_interrupted_starts_on_the_next_call(monkeypatch) -> None:
    from cwm.sandbox import budget as _sandbox_budget

    dog = _sandbox_budget._Watchdog()
    monkeypatch.setattr(_sandbox_budget, "_WATCHDOG", dog)
    start_once = _InterruptOnce(threading.Thread.start)
    monkeypatch.setattr(threading.Thread, "start", lambda thread: start_once(thread))
    guard = call_budget(0.1)
    with pytest.raises(KeyboardInterrupt):
        guard(lambda: 1)
    start = time.thread_time()
    with pytest.raises(ModelContractError, match="spin"):
        guard(spin, 10)
    assert time.thread_time() - start < 1.0


# A model that keeps catching the budget's interrupt would never return from an in-process call; the gate
# refuses every way of catching it, so what load_source accepts is always ended by call_budget.
SWALLOW_FOREVER = {
    "base-exception": "except BaseException:",
    "bare": "except:",
    "alias": "except (ValueError, KeyboardInterrupt, SystemExit, GeneratorExit):",
    "mro": "except ValueError.mro()[-2]:",
}


def _retrying_model(handler: str) -> str:
    body = ("def get_initial_state():\n    while True:\n        try:\n            while True:\n                pass\n"
            f"        {handler}\n            pass\n")
    return body + "".join(f"def {f.name}(*a):\n    return None\n" for f in model.WORLD_MODEL_API
                          if f.name != "get_initial_state")


@pytest.mark.parametrize("handler", list(SWALLOW_FOREVER.values()), ids=list(SWALLOW_FOREVER))
def test_load_source_refuses_models_that_swallow_the_interrupt(handler: str) -> None:
    with pytest.raises(ModelLoadError, match="is not allowed"):
        load_source(_retrying_model(handler))


def test_call_budget_ends_a_model_that_retries_after_every_exception() -> None:
    wm = model.WorldModel(load_source(_retrying_model("except Exception:")), guard=call_budget(0.1))
    start = time.thread_time()
    with pytest.raises(ModelContractError, match="get_initial_state"):
        wm.new_initial_state()
    assert time.thread_time() - start < 1.0


def test_call_budget_rejects_nonpositive() -> None:
    with pytest.raises(ValueError, match="must be > 0"):
        call_budget(0)


def test_call_budget_fires_in_a_forked_child_after_the_parent_used_it() -> None:
    """The arena's process pool forks workers: the watchdog thread does not survive a fork and must restart."""
    import os

    guard = call_budget(0.2)
    assert guard(lambda: 1) == 1  # the parent's watchdog thread is running now
    read, write = os.pipe()
    pid = os.fork()
    if pid == 0:  # child: report what the guard did, then leave without running pytest's teardown
        os.close(read)
        try:
            guard(spin, 30)
            verdict = b"not stopped"
        except ModelContractError:
            verdict = b"stopped"
        os.write(write, verdict)
        os._exit(0)
    os.close(write)
    deadline = time.monotonic() + 10
    data = b""
    while time.monotonic() < deadline and not data:
        data = os.read(read, 64)
    os.close(read)
    if not data:
        os.kill(pid, 9)
    os.waitpid(pid, 0)
    assert data == b"stopped"


def test_call_budget_longer_than_the_watchdogs_idle_time_still_fires() -> None:
    """The watchdog parks when idle; a long call must keep it awake (budgets over 1 s once never fired)."""
    guard = call_budget(1.2)
    start = time.thread_time()
    with pytest.raises(ModelContractError, match="time budget of 1.2 s"):
        guard(spin, 20)
    assert time.thread_time() - start < 5  # CPU time: stopped near 1.2 s of the 20 s spin
