"""The recorded sessions shipped with cwm are what their scripted replies record today: replay keys on the
request, so a change to a prompt, the contract, a game's rules or the trajectories fails here (re-record with
``python tests/synthesis/record_sessions.py``) instead of at a user's offline ``cwm run``."""

from __future__ import annotations

import importlib.resources
import json
from pathlib import Path

import pytest
from record_sessions import SESSIONS, record

from cwm.games import rules_text
from cwm.llm import ReplayClient, ReplayMissError
from cwm.synthesis import SynthesisSettings, synthesize_world_model

# the installed package's copies, so a recording left out of the package data fails here
SHIPPED = Path(str(importlib.resources.files("cwm").joinpath("data", "recordings")))


def _entries(path: Path) -> list[dict]:
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]


def test_every_shipped_recording_has_a_session_and_every_session_ships():
    # real sessions: tests/synthesis/test_real_recordings.py; direct-LLM play (batch folders, not synthesis
    # sessions): experiments/direct_llm_figure.py and, for a cooperative game's team, team_figure.py replay them
    shipped = {str(p.relative_to(SHIPPED).with_suffix("")) for p in SHIPPED.rglob("*.jsonl")
               if p.relative_to(SHIPPED).parts[0] not in ("real", "direct", "teams", "twins")}
    assert shipped == set(SESSIONS)
    assert {"leduc_poker", "quadranto", "closed/leduc_poker", "closed/quadranto"} <= shipped


@pytest.mark.parametrize("name", sorted(SESSIONS))
def test_a_shipped_recording_is_what_its_session_records_now(name, tmp_path):
    fresh = tmp_path / "fresh.jsonl"
    record(SESSIONS[name], fresh)
    now, shipped = _entries(fresh), _entries(SHIPPED / f"{name}.jsonl")
    stale = [i for i, (a, b) in enumerate(zip(now, shipped)) if a != b]
    assert len(now) == len(shipped) and not stale, (
        f"cwm/data/recordings/{name}.jsonl is stale from call {min(stale, default=len(shipped)) + 1} on (the "
        f"prompts, rules, contract or replies changed): run python tests/synthesis/record_sessions.py {name}")


def test_a_changed_prompt_misses_the_recording_and_names_the_difference(tmp_path):
    rules = rules_text("leduc_poker") + "\nA sentence the recording never saw.\n"
    llm = ReplayClient(SHIPPED / "leduc_poker.jsonl")
    with pytest.raises(ReplayMissError, match="first difference at character"):
        synthesize_world_model("leduc_poker", llm, SynthesisSettings.of("world_model", num_test=0, isolate=False), run_dir=tmp_path / "run", rules=rules)


def test_a_recording_replays_its_session_without_a_miss(tmp_path):
    llm = ReplayClient(SHIPPED / "quadranto.jsonl")
    result = synthesize_world_model("quadranto", llm, SynthesisSettings.of("world_model", num_test=0, isolate=False), run_dir=tmp_path / "run")
    assert result.solved and result.llm_calls == 2 and llm.model == "scripted-quadranto"
