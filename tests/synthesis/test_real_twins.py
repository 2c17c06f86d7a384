"""The shipped real fast- and JAX-twin sessions (cwm/data/recordings/twins, answered by a model through the hashed
relay, as their provenance says) replay offline: from the model of the game's shipped real world-model session,
the recorded reply is the accepted twin, it passes the equivalence check and lands in the bundle."""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

import pytest

from cwm import bundle
from cwm.games import trajectories
from cwm.jax_contract import required_functions
from cwm.llm import make_client
from cwm.pipeline.recordings import recording_for
from cwm.sandbox.equivalence import EquivalenceSettings
from cwm.synthesis import SynthesisSettings, synthesize_world_model
from cwm.synthesis.extract import extract_code
from cwm.synthesis.fast import synthesize_fast
from cwm.synthesis.jax_synthesis import synthesize_jax

SESSIONS = Path(__file__).resolve().parents[2] / "cwm" / "data" / "recordings" / "twins"
QUICK = EquivalenceSettings(p=0.2, delta=0.05, simulations=20)


def model_bundle(game: str, target: str, tmp_path: Path) -> Path:
    """The bundle of the model the twin session of ``target`` was asked for: the game's shipped real world-model
    session replayed (its SHA-256 the provenance's), with two training games."""
    provenance = json.loads((SESSIONS / f"{game}.{target}.provenance.json").read_text())
    assert provenance["answered_by"] == "claude (Anthropic), version not exposed" and provenance["target"] == target
    session = recording_for(game)
    assert session is not None
    model = synthesize_world_model(game, make_client(f"replay:{session}"),
                                   SynthesisSettings.of("world_model", budget=20, num_test=0),
                                   run_dir=tmp_path / "wm").best_source
    assert hashlib.sha256(model.encode()).hexdigest() == provenance["model_sha256"]  # the model the twin was asked for
    return bundle.export_bundle(tmp_path / "b", game=game, model_source=model,
                                train=trajectories.collect(game, 2, seed=0))


@pytest.mark.parametrize("game", ["tic_tac_toe", "connect_four", "leduc_poker"])
def test_a_shipped_real_twin_session_replays_to_an_equivalent_twin(game: str, tmp_path: Path) -> None:
    made = model_bundle(game, "fast", tmp_path)
    profile = json.loads((SESSIONS / f"{game}.profile.json").read_text())
    result = synthesize_fast(game, make_client(f"replay:{SESSIONS / f'{game}.fast.jsonl'}"),
                             SynthesisSettings.of("fast", budget=5), run_dir=tmp_path / "fast", bundle=made,
                             equivalence=QUICK, profile=profile)
    assert result.synthesis.solved and result.synthesis.llm_calls == 1
    assert result.evidence is not None and result.evidence["verdict"] == "equivalent"
    assert bundle.load_bundle(made).sources["twin.py"] == result.twin != bundle.load_bundle(made).sources["model.py"]


@pytest.mark.parametrize("game", ["tic_tac_toe", "connect_four", "leduc_poker"])
def test_a_shipped_real_jax_twin_session_replays_to_an_equivalent_jax_twin(game: str, tmp_path: Path) -> None:
    made = model_bundle(game, "jax", tmp_path)
    result = synthesize_jax(game, make_client(f"replay:{SESSIONS / f'{game}.jax.jsonl'}"),
                            SynthesisSettings.of("jax", budget=5), run_dir=tmp_path / "jax", bundle=made,
                            equivalence=QUICK)
    assert result.synthesis.solved and result.synthesis.llm_calls == 1
    assert result.evidence is not None and result.evidence["verdict"] == "equivalent"
    assert bundle.load_bundle(made).jax_twin == result.twin


class _Answered(Exception):
    """Raised once the probe's session answered its first request."""


@pytest.mark.slow  # backgammon's world model replayed and exported (about 30 s); its check (minutes) is not run
def test_backgammons_jax_session_answers_todays_request_with_the_twin_its_evidence_names(tmp_path: Path) -> None:
    """The backgammon JAX-twin session (its check costs minutes of CPU, so it is not replayed here): today's
    first request is the recorded one, and the reply holds the module the recorded check accepted (its
    SHA-256 is the evidence's twin_sha256, in the provenance)."""
    provenance = json.loads((SESSIONS / "backgammon.jax.provenance.json").read_text())
    made = model_bundle("backgammon", "jax", tmp_path)
    replay = make_client(f"replay:{SESSIONS / 'backgammon.jax.jsonl'}")
    replies = []

    class Probe:
        def complete(self, request):  # type: ignore[no-untyped-def]
            replies.append(replay.complete(request))  # a request the session does not hold raises here
            raise _Answered

        def __getattr__(self, name: str):  # type: ignore[no-untyped-def]
            return getattr(replay, name)

    with pytest.raises(_Answered):
        synthesize_jax("backgammon", Probe(), SynthesisSettings.of("jax", budget=1),  # type: ignore[arg-type]
                       run_dir=tmp_path / "jax", bundle=made, equivalence=EquivalenceSettings(**provenance["equivalence"]))
    source = extract_code(replies[0].texts[0], [f.name for f in required_functions(36)]).candidates[0]
    assert hashlib.sha256(source.encode()).hexdigest() == provenance["twin_sha256"]
