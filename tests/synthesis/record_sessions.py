"""Re-records the sessions shipped under cwm/data/recordings/: *scripted* sessions, not a live LLM.

Every reply is a hand-written candidate under tests/data/synthesis/<game>/, answered in order by
``cwm.llm.ScriptedClient`` and written by the LLM layer's ``RecordingClient``:

- ``<game>.jsonl`` (what ``cwm run GAME`` replays offline): the world-model synthesis and, for a game with
  hidden information, the open-deck inference synthesis for the world model it found, in one file;
- ``closed/<game>.jsonl``: the closed-deck joint synthesis (``cwm synthesize GAME --target joint``).

Each session replays with the default settings of its command (seed 0, tree search, 5 training games) and
needs exactly the prompts of the recording, so re-run this after changing the synthesis or inference
prompts, the contract or its value rules (``cwm.value_rules.RULES``, shown in the prompt), a game's rules or the trajectory format
(``tests/synthesis/test_recordings.py`` fails until you do):

    python tests/synthesis/record_sessions.py            # every session
    python tests/synthesis/record_sessions.py leduc_poker closed/leduc_poker
"""

from __future__ import annotations

import dataclasses
import sys
import tempfile
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from cwm.synthesis import SynthesisSettings

HERE = Path(__file__).resolve().parent
ROOT = HERE.parents[1]
RECORDINGS = ROOT / "cwm" / "data" / "recordings"
REPLIES = ROOT / "tests" / "data" / "synthesis"


@dataclasses.dataclass(frozen=True)
class Session:
    """One recorded session: the game, the reply files of each stage in order, and its synthesis budget.

    ``world_model`` and ``inference`` make an open-deck session (what ``cwm run`` replays); ``joint`` a
    closed-deck one. ``budget`` is the default 500 unless the session stops short of solving its target.
    """

    game: str
    world_model: tuple[str, ...] = ()
    inference: tuple[str, ...] = ()
    joint: tuple[str, ...] = ()
    budget: int = 500

    @property
    def closed(self) -> bool:
        return bool(self.joint)

    @property
    def name(self) -> str:
        """Its place under cwm/data/recordings/, without ``.jsonl``."""
        return f"closed/{self.game}" if self.closed else self.game

    @property
    def model(self) -> str:
        """The model id written in the file (it says the replies are scripted)."""
        return f"scripted-{self.game.replace('_', '-')}" + ("-joint" if self.closed else "")

    def replies(self) -> list[str]:
        names = [*self.world_model, *self.inference, *self.joint]
        return [(REPLIES / self.game / f"{n}.md").read_text(encoding="utf-8") for n in names]


SESSIONS = {s.name: s for s in (
    Session("tic_tac_toe", world_model=("01_initial_buggy", "02_refine_partial", "03_refine_correct")),
    Session("leduc_poker", world_model=("world_model_1_initial", "world_model_2_fixed"),
            inference=("inference_1_initial", "inference_2_fixed", "inference_3_own_fold")),
    Session("leduc_poker", joint=("joint_1_initial", "joint_2_fixed", "joint_3_own_fold")),
    Session("quadranto", world_model=("world_model_1_initial", "world_model_2_fixed"),
            inference=("inference_1_initial", "inference_2_fixed", "inference_3_caught")),
    Session("quadranto", joint=("joint_1_initial", "joint_2_refined")),
    Session("tiny_hanabi", world_model=("world_model_1_initial", "world_model_2_fixed"),
            inference=("inference_1_initial", "inference_2_return")),
    Session("hanabi", world_model=("world_model_1_initial", "world_model_2_fixed"),
            inference=("inference_1_initial", "inference_2_fixed")),
)}


def record(session: Session, out: Path) -> list[dict[str, Any]]:
    """Runs ``session`` against its scripted replies, recording every call to ``out`` (replaced), with the
    settings the replaying command uses by default; returns the results of its stages (``to_json``)."""
    from cwm.llm import RecordingClient, ScriptedClient
    from cwm.synthesis import synthesize_world_model
    from cwm.synthesis.inference import synthesize_inference

    out.unlink(missing_ok=True)
    llm = RecordingClient(ScriptedClient(session.replies(), model=session.model), out)
    results = []
    with tempfile.TemporaryDirectory() as tmp:
        run = Path(tmp)
        if session.closed:
            results.append(synthesize_inference(session.game, llm, SynthesisSettings.of("inference", deck="closed", budget=session.budget, num_test=0, isolate=False), run_dir=run / "joint"))
        else:
            wm = synthesize_world_model(session.game, llm, SynthesisSettings.of("world_model", num_test=0, isolate=False), run_dir=run / "synthesis")
            results.append(wm)
            if session.inference:  # what `cwm run` asks next, for the world model it found
                results.append(synthesize_inference(session.game, llm, SynthesisSettings.of("inference", budget=session.budget, num_test=0, isolate=False), run_dir=run / "inference", world_model=wm.best_source))
    return [r.to_json() for r in results]


def main(argv: Sequence[str] = ()) -> int:
    """Records the sessions named in ``argv`` (default: all); 1 if a session that should solve did not."""
    names = list(argv) or sorted(SESSIONS)
    unknown = [n for n in names if n not in SESSIONS]
    if unknown:
        print(f"unknown sessions {unknown}; known: {sorted(SESSIONS)}", file=sys.stderr)
        return 2
    failed = False
    for name in names:
        session = SESSIONS[name]
        results = record(session, RECORDINGS / f"{name}.jsonl")
        solved = [bool(r["solved"]) for r in results]
        calls = sum(int(r["llm_calls"]) for r in results)
        print(f"recorded {calls} calls to {RECORDINGS / name}.jsonl (solved: {solved})")
        failed |= session.budget == 500 and not all(solved)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
