"""Re-records cwm/data/recordings/tic_tac_toe.jsonl: a *scripted* synthesis session, not a live LLM.

The replies are the hand-written candidates under tests/data/synthesis/tic_tac_toe/ (a buggy first
program, a partial fix, a correct program), answered by ``cwm.llm.ScriptedClient`` and written by the
LLM layer's ``RecordingClient``. Replaying the file (``--llm replay:...``) needs exactly the prompts of
the recording, so re-run this after changing the synthesis prompts, the contract or its value rules
(``cwm.values.RULES``, shown in the prompt), the tic-tac-toe rules or the trajectory format:

    python tests/synthesis/record_tic_tac_toe.py
"""

from __future__ import annotations

import sys
import tempfile
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parents[1]
OUT = ROOT / "cwm" / "data" / "recordings" / "tic_tac_toe.jsonl"
REPLIES = ["01_initial_buggy", "02_refine_partial", "03_refine_correct"]


def main() -> int:
    from cwm.llm import RecordingClient, ScriptedClient
    from cwm.synthesis import synthesize_world_model

    texts = [(ROOT / "tests" / "data" / "synthesis" / "tic_tac_toe" / f"{n}.md").read_text(encoding="utf-8")
             for n in REPLIES]
    OUT.unlink(missing_ok=True)
    llm = RecordingClient(ScriptedClient(texts, model="scripted-tic-tac-toe"), OUT)
    with tempfile.TemporaryDirectory() as run_dir:
        # the CLI's defaults (seed 0, tree search, 5 training games), so `cwm synthesize tic_tac_toe
        # --llm replay:<this file>` asks exactly the recorded prompts
        result = synthesize_world_model("tic_tac_toe", llm=llm, run_dir=run_dir, num_test=0, isolate=False)
    print(f"recorded {result.llm_calls} calls to {OUT} (solved: {result.solved})")
    return 0 if result.solved else 1


if __name__ == "__main__":
    sys.exit(main())
