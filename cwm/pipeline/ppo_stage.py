"""``cwm run``'s PPO stage: the game's shipped PPO session (an observation encoder, then a JAX twin checked
against it: ``cwm/data/recordings/twins/GAME.ppo.jsonl``) replayed into the run's bundle, and PPO trained on
that twin entirely in JAX in one sandbox child (``cwm.ppo.contained``, what ``cwm train ppo --env auto``
does); the policy goes into the bundle, where the arena's ``ppo`` agent plays it.

The stage runs only for the model the session was asked for (its provenance's SHA-256), with JAX installed
(``pip install 'cwm[jax]'``); otherwise its record says why it was skipped. Its record (``ppo.json``) is
written once the policy is in the bundle, so a resumed run does not train again; an interrupted one resumes
the syntheses without repeating a call and the training from its checkpoints (``ppo/train/``).
"""

from __future__ import annotations

import importlib.util
import json
import time
from typing import Any

from cwm.arena import cost
from cwm.bundle import export_bundle, load_bundle
from cwm.bundle.twin import FILES, save_twin
from cwm.bundle.update import save_encoder
from cwm.files import read_text
from cwm.games import trajectories
from cwm.llm import make_client
from cwm.pipeline.twins import (
    TWIN_BUDGET,
    StageInput,
    equivalence_of,
    provenance,
    recorded_stage,
    session,
    skipped,
)
from cwm.synthesis import SynthesisSettings, synthesize_encoder, synthesize_jax
from cwm.types import JSON

PPO_RECORD = "ppo.json"
JAX_FILES = FILES["jax"]  # jax_twin.py and its evidence
PPO_LABEL = "ppo"  # the PPO agent's name in the arena and the report
PPO_STEPS = 100_000  # the default budget: tic-tac-toe's twin trains it in about half a CPU-minute, JIT included


def ppo_stage(stage: StageInput) -> dict[str, JSON]:
    """The PPO stage; its record (``ppo.json``), also when skipped."""
    return recorded_stage(stage, PPO_RECORD, "PPO", _ppo)


def _ppo(stage: StageInput, sha: str) -> dict[str, JSON]:
    steps, name = stage.config.ppo_steps, stage.spec.name
    if steps == 0:
        return skipped("turned off (--ppo-steps 0)")
    recording = session(name, "ppo")
    if recording is None:
        return skipped(f"no PPO session (encoder and JAX twin) of {name} ships with cwm")
    recorded = provenance(recording)
    if recorded.get("model_sha256") != sha:
        return skipped(f"the shipped PPO session asked for an encoder and a JAX twin of another model than this "
                       f"run's ({recorded.get('model_from')})")
    if importlib.util.find_spec("jax") is None or importlib.util.find_spec("optax") is None:
        return skipped("PPO on a JAX twin needs JAX and optax: pip install 'cwm[jax]'")
    base: dict[str, JSON] = {"session": f"<cwm>/data/recordings/twins/{recording.name}",
                             "answered_by": recorded.get("answered_by")}
    problem = _replay(stage, recording, recorded)
    if problem:
        return skipped(problem, **base)
    return base | _train(stage, steps)


def _replay(stage: StageInput, recording: Any, recorded: dict[str, Any]) -> str:
    """The encoder and the JAX twin of the session, replayed into the bundle (kept when already there);
    ``""``, or why not.

    The session's prompts show the observations of the bundle it was asked from (the model with two stored
    games of random play, seed 0), so it is replayed into such a bundle (``ppo/bundle``); the encoder and the
    twin with its evidence then go into the run's bundle, whose load checks the twin against the model and
    the encoder on the run's own stored games."""
    if "encoder.py" in load_bundle(stage.bundle_dir, game=stage.spec).sources and \
            (stage.bundle_dir / JAX_FILES[0]).is_file():
        return ""
    root = stage.out / "ppo"
    side = root / "bundle"
    if not (side / "manifest.json").is_file():
        model = read_text(stage.bundle_dir / "model.py", what="bundle file")
        export_bundle(side, game=stage.spec, model_source=model, train=trajectories.collect(stage.spec, 2, seed=0),
                      overwrite=True)
    replay = make_client(f"replay:{recording}")
    encoder = synthesize_encoder(stage.spec, replay, SynthesisSettings.of("encoder", budget=TWIN_BUDGET),
                                 run_dir=root / "encoder", bundle=side)
    if encoder.encoder is None:
        return "the shipped PPO session's encoder no longer passes (or replays): see ppo/encoder/summary.md"
    twin = synthesize_jax(stage.spec, replay, SynthesisSettings.of("jax", budget=TWIN_BUDGET), run_dir=root / "jax",
                          bundle=side, equivalence=equivalence_of(recorded))
    if twin.twin is None or twin.evidence is None:
        return "the shipped PPO session's JAX twin no longer passes (or replays): see ppo/jax/summary.md"
    made = json.loads(read_text(side / "manifest.json", what="bundle manifest")).get("provenance", {})
    save_encoder(stage.bundle_dir, encoder.encoder, made.get("encoder") or {})
    save_twin(stage.bundle_dir, twin.twin, twin.evidence, provenance=made.get("jax_twin") or {}, target="jax")
    return ""


def _train(stage: StageInput, steps: int) -> dict[str, JSON]:
    """PPO on the bundle's JAX twin (one seed: the run's), its estimate printed first; what it cost."""
    from cwm.ppo import bundle as ppo_bundle  # the jax extra: cwm run works without it (checked above)
    from cwm.ppo.train import TrainConfig  # the jax extra, as above

    loaded = load_bundle(stage.bundle_dir, game=stage.spec)
    config = TrainConfig(total_steps=steps, recurrent=not stage.spec.perfect_information)
    source = ppo_bundle.training_source(loaded, twin_source=loaded.jax_twin or "")
    seeds, out = [stage.config.seed], stage.out / "ppo" / "train"
    estimate = ppo_bundle.estimate_training(source, config, seeds, out_dir=out, workers=1)
    print(f"PPO on the JAX twin of {stage.spec.name}, {steps:,} steps: " + "; ".join(
        line.strip() for line in estimate.lines()) + "; JAX's start and compilation in the child not counted "
          "(about 20 CPU s for tic-tac-toe)", flush=True)
    start = time.perf_counter()
    with cost.cpu_meter() as used:
        best = ppo_bundle.train_bundle(loaded, source, config, seeds, out_dir=out, progress=stage.progress)
    return {"status": "trained", "steps": steps, "seed": best.seed, "best_score": best.best_score,
            "cpu_s": used.cpu_s(), "wall_s": time.perf_counter() - start, "estimate": estimate.to_json(),
            "env": "the JAX twin (jax_twin.py), in a sandbox child"}


__all__ = ["PPO_LABEL", "PPO_RECORD", "PPO_STEPS", "ppo_stage"]
