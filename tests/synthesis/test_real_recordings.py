"""The real-model sessions shipped with cwm (``cwm/data/recordings/real/``, answered through the batch client by
the model their provenance names): each still replays under today's prompts, as its provenance says it ran
(the rulebook tier's under ``prose/`` and other seeds' under ``seeds/`` at their own tier and seed), and
``cwm run`` prefers it to a scripted demo. A prompt change fails here: record the session again with
``experiments/real_session.py GAME --ship`` (a fresh answering model; see docs/experiments.md)."""

from __future__ import annotations

import importlib.resources
import json
from pathlib import Path

import pytest

from cwm import games, pipeline
from cwm.llm import ReplayClient
from cwm.synthesis import SynthesisSettings, synthesize_world_model
from cwm.synthesis.inference import synthesize_inference

REAL = Path(str(importlib.resources.files("cwm").joinpath("data", "recordings", "real")))
SESSIONS = sorted(p.stem for p in REAL.glob("*.jsonl"))
CLOSED = sorted(p.stem for p in (REAL / "closed").glob("*.jsonl"))  # closed-deck joint syntheses


def _provenance(game: str) -> dict:
    return json.loads((REAL / f"{game}.provenance.json").read_text(encoding="utf-8"))


def test_real_sessions_ship_for_some_games_each_with_its_provenance():
    assert {"tic_tac_toe"} <= set(SESSIONS)
    for game in SESSIONS:
        games.resolve(game)  # a registered game
        provenance = _provenance(game)
        assert provenance["game"] == game and provenance["answered_by"] and provenance["date"]
        # short structured fields: every reply carries the relay's hash of the request it was given, and it matched
        assert provenance["relay"] == "agent-relay-hashed" and provenance["prompts_hashed"] == provenance["replies"]
        assert len(provenance["answered_by"]) <= 120 and provenance["stages"]["world model"]["solved"] in (True, False)
        models = {json.loads(line)["response"]["model"] for line in (REAL / f"{game}.jsonl").read_text().splitlines()}
        assert len(models) == 1  # one answering model: no scripted or other model's reply mixed in


@pytest.mark.parametrize("game", SESSIONS)
def test_a_real_session_replays_under_todays_prompts_as_it_ran(game, tmp_path):
    provenance, llm = _provenance(game), ReplayClient(REAL / f"{game}.jsonl")
    world_model = synthesize_world_model(game, llm, SynthesisSettings.of("world_model", num_test=0, isolate=False), run_dir=tmp_path / "wm")
    stages = {"world model": world_model}
    if not games.resolve(game).perfect_information:
        stages["inference"] = synthesize_inference(game, llm, SynthesisSettings.of("inference", num_test=0, isolate=False), run_dir=tmp_path / "inf", world_model=world_model.best_source)
    assert {s: {"llm_calls": r.llm_calls, "solved": r.solved} for s, r in stages.items()} == provenance["stages"]


@pytest.mark.parametrize("game", CLOSED)
def test_a_real_closed_deck_session_replays_under_todays_prompts_as_it_ran(game, tmp_path):
    provenance = json.loads((REAL / "closed" / f"{game}.provenance.json").read_text(encoding="utf-8"))
    assert provenance["deck"] == "closed" and provenance["relay"] == "agent-relay-hashed"
    result = synthesize_inference(game, ReplayClient(REAL / "closed" / f"{game}.jsonl"), SynthesisSettings.of("inference", deck="closed", num_test=0, isolate=False), run_dir=tmp_path, world_model=None)
    assert {"joint": {"llm_calls": result.llm_calls, "solved": result.solved}} == provenance["stages"]


def test_cwm_run_replays_the_real_session_where_one_ships():
    for game in SESSIONS:
        assert pipeline.recording_for(game) == REAL / f"{game}.jsonl"
        assert pipeline.recording_provenance(REAL / f"{game}.jsonl")["answered_by"] == _provenance(game)["answered_by"]
    scripted = sorted(REAL.parent.glob("*.jsonl"))  # the hand-written demos, kept for the tests pinned to them
    assert {p.stem for p in scripted} & set(SESSIONS)  # a game with both plays the real one (checked above)
    for demo in scripted:
        assert pipeline.recording_provenance(demo) is None  # a scripted demo claims no answering model
        if demo.stem not in SESSIONS:
            assert pipeline.recording_for(demo.stem) == demo


# the sessions of the rulebook tier (``prose/``) and of seeds other than 0 (``seeds/``), found where
# ``real_session.py --ship`` puts them and replayed at the tier and seed their provenance names
OTHER = sorted(str(p.relative_to(REAL)) for p in REAL.rglob("*.jsonl") if {"prose", "seeds"} & set(p.relative_to(REAL).parts))


@pytest.mark.parametrize("path", OTHER)
def test_a_rulebook_tier_or_seed_session_replays_at_its_tier_and_seed(path, tmp_path):
    recording = REAL / path
    provenance = pipeline.recording_provenance(recording)
    assert provenance is not None and provenance["relay"] == "agent-relay-hashed"
    game, deck, seed = str(provenance["game"]), str(provenance["deck"]), int(provenance["seed"])
    assert pipeline.recording_for(game, deck, str(provenance["rules"]), seed) == recording  # found where it ships
    spec, llm = games.resolve(game, rules=str(provenance["rules"])), ReplayClient(recording)
    settings = {"num_test": 0, "isolate": False, "seed": seed}
    if deck == "closed":
        joint = synthesize_inference(spec, llm, SynthesisSettings.of("inference", deck="closed", **settings), run_dir=tmp_path, world_model=None)
        stages = {"joint": joint}
    else:
        world_model = synthesize_world_model(spec, llm, SynthesisSettings.of("world_model", **settings), run_dir=tmp_path / "wm")
        stages = {"world model": world_model}
        if not spec.perfect_information:
            stages["inference"] = synthesize_inference(spec, llm, SynthesisSettings.of("inference", **settings), run_dir=tmp_path / "inf", world_model=world_model.best_source)
    assert {s: {"llm_calls": r.llm_calls, "solved": r.solved} for s, r in stages.items()} == provenance["stages"]
