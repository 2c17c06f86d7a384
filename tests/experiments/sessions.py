"""Recorded sessions for the imperfect-information experiments, made inside the tests from hand-written replies
(test fixtures, not LLM output): the reference world models and inference functions under tests/data/.

``record_open`` writes an open-deck session (a world-model reply, then an inference reply), ``record_closed``
a closed-deck one (one joint program), each as ``cwm.llm.RecordingClient`` writes a live session, by running
the same syntheses the experiments run (seed 0, tree search); ``--llm replay:`` of the file, or the folder as
``--recordings``, then answers exactly the experiments' prompts.
"""

from __future__ import annotations

import tempfile
from pathlib import Path

from cwm.llm import RecordingClient, ScriptedClient
from cwm.synthesis import SynthesisSettings, synthesize_world_model
from cwm.synthesis.inference import synthesize_inference

DATA = Path(__file__).resolve().parents[1] / "data"
LEDUC_MODEL = DATA / "reference" / "leduc_poker_model.py"
LEDUC_INFERENCE = DATA / "reference" / "leduc_poker_inference.py"
QUADRANTO_MODEL = DATA / "games" / "quadranto_cwm.py"
QUADRANTO_INFERENCE = DATA / "reference" / "quadranto_inference.py"


def reply(source: str) -> str:
    return f"Here is the module.\n\n```python\n{source.strip()}\n```\n"


def record_open(folder: Path, game: str, model: str, inference: str, *, num_train: int = 5) -> Path:
    """Writes ``folder/<game>.jsonl``: the world model ``model`` answers the first call, ``inference`` the
    inference synthesis's first call (each is then the best program of a one-call run)."""
    path = folder / f"{game}.jsonl"
    llm = RecordingClient(ScriptedClient([reply(model), reply(inference)], model=f"scripted-{game}"), path)
    with tempfile.TemporaryDirectory() as run:
        world = synthesize_world_model(game, llm, SynthesisSettings.of("world_model", budget=1, num_train=num_train, num_test=0, isolate=False), run_dir=Path(run) / "wm")
        synthesize_inference(game, llm, SynthesisSettings.of("inference", budget=1, num_train=num_train, num_test=0, isolate=False), run_dir=Path(run) / "inf", world_model=world.best_source)
    return path


def record_closed(folder: Path, game: str, joint: str, *, num_train: int = 5) -> Path:
    """Writes ``folder/closed/<game>.jsonl``: the program ``joint`` (world model and inference) answers the
    closed-deck synthesis's first call."""
    path = folder / "closed" / f"{game}.jsonl"
    path.parent.mkdir(parents=True, exist_ok=True)
    llm = RecordingClient(ScriptedClient([reply(joint)], model=f"scripted-closed-{game}"), path)
    with tempfile.TemporaryDirectory() as run:
        synthesize_inference(game, llm, SynthesisSettings.of("inference", deck="closed", budget=1, num_train=num_train, num_test=0, isolate=False), run_dir=Path(run) / "joint")
    return path
