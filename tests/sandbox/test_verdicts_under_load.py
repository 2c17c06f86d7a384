"""Check verdicts do not depend on how busy the machine is: a recorded session's checks, run in the sandbox
while spinning processes saturate every core, give the same verdicts as on an idle machine, and a check
that needs more CPU time than its ``wall_s`` ends with its result (CPU time decides)."""

from __future__ import annotations

import contextlib
import importlib.resources
import json
import os
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from cwm.llm import ReplayClient
from cwm.sandbox import CALL_JOB, Limits, Sandbox, load_source
from cwm.synthesis import SynthesisSettings, synthesize_world_model
from cwm.synthesis.inference import synthesize_inference

REAL = Path(str(importlib.resources.files("cwm").joinpath("data", "recordings", "real")))
GAME = "leduc_poker"  # hidden information: a world model, then an inference function, each checked in the sandbox


@contextlib.contextmanager
def saturated() -> Iterator[None]:
    """Two spinning processes per core for the block's duration (the load of a busy shared server)."""
    hogs = [subprocess.Popen([sys.executable, "-c", "while True:\n    pass\n"])
            for _ in range(2 * (os.cpu_count() or 1))]
    try:
        yield
    finally:
        for hog in hogs:
            hog.send_signal(signal.SIGKILL)
        for hog in hogs:
            hog.wait()


def _verdicts(run_dir: Path) -> dict[str, Any]:
    """Every verdict the session's checks gave: per stage, its calls, whether solved, the best program's pass
    rates, and each candidate's score."""
    llm = ReplayClient(REAL / f"{GAME}.jsonl")
    world_model = synthesize_world_model(GAME, llm, SynthesisSettings.of("world_model", num_test=0),
                                         run_dir=run_dir / "wm")
    inference = synthesize_inference(GAME, llm, SynthesisSettings.of("inference", num_test=0), run_dir=run_dir / "inf",
                                     world_model=world_model.best_source)
    return {stage: {"llm_calls": r.llm_calls, "solved": r.solved, "train_pass_rate": r.train_pass_rate,
                    "train_by_type": r.train_by_type, "best_node": r.best_node,
                    "nodes": [(n.pass_rate, n.transition_accuracy, n.by_type, n.error, n.solved) for n in r.nodes]}
            for stage, r in (("world model", world_model), ("inference", inference))}


def test_a_recorded_sessions_checks_give_the_same_verdicts_on_a_saturated_machine(tmp_path: Path) -> None:
    idle = _verdicts(tmp_path / "idle")
    provenance = json.loads((REAL / f"{GAME}.provenance.json").read_text(encoding="utf-8"))["stages"]
    assert {s: {"llm_calls": v["llm_calls"], "solved": v["solved"]} for s, v in idle.items()} == provenance
    with saturated():
        loaded = _verdicts(tmp_path / "loaded")
    assert loaded == idle


def test_a_job_that_needs_more_cpu_than_its_wall_s_finishes_on_a_saturated_machine() -> None:
    # The job needs about a second of CPU time, so on a saturated machine several seconds of wall time: far
    # past its wall_s (0.5), which is only the backstop's floor. Its CPU limit (30 s) decides, so it ends
    # with its result, as it does in-process.
    source = "def f():\n    total = 0\n    for i in range(12_000_000):\n        total += i * i % 7\n    return total\n"
    expected = load_source(source, api=()).f()
    limits = Limits(wall_s=0.5, cpu_s=30.0, memory_mb=1024, per_call_s=30.0)
    with Sandbox(limits=limits, isolation="process") as box:
        assert box.run(CALL_JOB, "def f():\n    return 1\n", {"function": "f"}).ok  # started before the load
        with saturated():
            start = time.monotonic()
            result = box.run(CALL_JOB, source, {"function": "f"})
            took = time.monotonic() - start
    assert took > limits.wall_s  # the old wall-clock limit would have killed it
    assert (result.kind, result.value) == ("ok", expected), result.error
