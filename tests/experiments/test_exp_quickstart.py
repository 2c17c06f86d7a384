"""examples/quickstart.py stays runnable: run it as a script, offline, in a temporary working directory."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

from cwm import pipeline

QUICKSTART = Path(__file__).resolve().parents[2] / "examples" / "quickstart.py"


def test_quickstart_runs_offline_and_prints_each_step(tmp_path):
    env = {k: v for k, v in os.environ.items() if k not in pipeline.API_KEY_VARS}
    proc = subprocess.run([sys.executable, str(QUICKSTART)], cwd=tmp_path, env=env, capture_output=True,
                          text=True, timeout=240)
    assert proc.returncode == 0, proc.stderr[-3000:]
    out = proc.stdout
    assert "LLM: replay:" in out
    # the shipped real-model session: one reply, from the model its provenance names
    answered_by = pipeline.recording_provenance(pipeline.recording_for("tic_tac_toe"))["answered_by"]
    assert "solved: True after 1 LLM call; train accuracy 1.000, test accuracy 1.000" in out
    assert f"bundle for tic_tac_toe, written by {answered_by} in 1 call" in out
    assert re.search(r"load check: (\d+)/\1 checks passed", out)
    assert "model.py: " in out and re.search(r"^it defines: .*get_initial_state, .*apply_action", out, re.MULTILINE)
    moves = re.findall(r"^player ([01]) plays ([xo])\(\d,\d\)$", out, flags=re.MULTILINE)
    assert moves == [("0", "x"), ("1", "o"), ("0", "x"), ("1", "o")]
    assert re.search(r"OpenSpiel's MCTSBot on \S+ \(9 actions\) opens with x\(\d,\d\)", out)
    assert "| cwm | random | all | 6 |" in out
    wins, draws, losses = map(int, re.search(r"over 6 matches: (\d+) wins, (\d+) draws, (\d+) losses", out).groups())
    assert wins + draws + losses == 6 and wins > losses
    work = tmp_path / "runs" / "quickstart"
    assert (work / "bundle" / "manifest.json").is_file() and (work / "arena" / "matches.jsonl").is_file()
