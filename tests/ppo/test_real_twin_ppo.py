"""PPO trained on a real (LLM-written) JAX twin, offline: the shipped PPO sessions (cwm/data/recordings/twins/
GAME.ppo.jsonl, answered by a model through the hashed relay, as their provenance says) replay to an observation
encoder written for the bundle of the game's real world model, then to a JAX twin asked with that encoder in
the bundle; the bundle's load checks the twin against the model and the encoder, a short PPO run trains on
the twin in a sandbox child (what ``cwm train ppo --env auto`` picks), and the policy written into the bundle
plays only legal moves against random in the real game through ``ppo:BUNDLE``."""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

import pytest

from cwm import arena, bundle, games
from cwm.agents import make_agent
from cwm.agents.base import RandomAgent
from cwm.commands.train import training_twin
from cwm.games import trajectories
from cwm.llm import make_client
from cwm.pipeline.recordings import recording_for
from cwm.ppo.bundle import train_bundle, training_source
from cwm.ppo.train import TrainConfig
from cwm.sandbox.equivalence import EquivalenceSettings
from cwm.synthesis import SynthesisSettings, synthesize_world_model
from cwm.synthesis.encoder import synthesize_encoder
from cwm.synthesis.jax_synthesis import synthesize_jax

SESSIONS = Path(__file__).resolve().parents[2] / "cwm" / "data" / "recordings" / "twins"
QUICK = EquivalenceSettings(p=0.2, delta=0.05, simulations=20)
SHORT = TrainConfig(total_steps=4 * 8 * 8, num_envs=8, rollout=8, epochs=2, minibatches=2, hidden=16,
                    eval_every=2, eval_games=20, checkpoint_every=2)
SHIPPED = sorted(p.name.split(".")[0] for p in SESSIONS.glob("*.ppo.jsonl"))


def session_bundle(game: str, tmp_path: Path) -> Path:
    """The bundle of the game's shipped real world-model session (the model the provenance hashes), with the
    encoder and the JAX twin of the shipped PPO session replayed into it."""
    provenance = json.loads((SESSIONS / f"{game}.ppo.provenance.json").read_text())
    assert provenance["answered_by"] == "claude (Anthropic), version not exposed"
    assert provenance["solved"] == {"encoder": True, "jax": True}
    session = recording_for(game)
    assert session is not None
    model = synthesize_world_model(game, make_client(f"replay:{session}"),
                                   SynthesisSettings.of("world_model", budget=20, num_test=0),
                                   run_dir=tmp_path / "wm").best_source
    assert hashlib.sha256(model.encode()).hexdigest() == provenance["model_sha256"]
    made = bundle.export_bundle(tmp_path / "b", game=game, model_source=model,
                                train=trajectories.collect(game, 2, seed=0))
    replay = make_client(f"replay:{SESSIONS / f'{game}.ppo.jsonl'}")
    encoder = synthesize_encoder(game, replay, SynthesisSettings.of("encoder", budget=5), run_dir=tmp_path / "enc",
                                 bundle=made)
    assert encoder.encoder is not None and encoder.synthesis.llm_calls == provenance["llm_calls"]["encoder"]
    twin = synthesize_jax(game, replay, SynthesisSettings.of("jax", budget=5), run_dir=tmp_path / "jax", bundle=made,
                          equivalence=QUICK)
    assert twin.synthesis.solved and twin.synthesis.llm_calls == provenance["llm_calls"]["jax"]
    assert twin.evidence is not None and twin.evidence["verdict"] == "equivalent"
    assert twin.evidence["observation_tensor"].startswith("compared with the bundle's encoder")
    return made


def test_ppo_sessions_are_shipped() -> None:
    assert "tic_tac_toe" in SHIPPED


@pytest.mark.slow  # 1.5-3 CPU-minutes a game (a sandboxed JAX training): CI runs it, the default suite does not
@pytest.mark.parametrize("game", SHIPPED)
def test_ppo_trains_on_a_real_jax_twin_and_plays_legal_moves(game: str, tmp_path: Path) -> None:
    made = session_bundle(game, tmp_path)
    loaded = bundle.load_bundle(made)  # checks jax_twin.py against model.py and encoder.py on the stored games
    assert loaded.jax_twin is not None and "encoder.py" in loaded.sources
    twin = training_twin(loaded, "auto", encoder=None, num_envs=SHORT.num_envs, minibatches=SHORT.minibatches)
    assert twin == loaded.jax_twin  # what cwm train ppo --env auto trains on
    best = train_bundle(loaded, training_source(loaded, twin_source=twin), SHORT, [0], out_dir=tmp_path / "ppo",
                        progress=False)
    assert len(best.curve) == SHORT.updates // SHORT.eval_every
    assert bundle.load_bundle(made).policy is not None
    agent = make_agent(f"ppo:{made}", game, seed=0)
    real = games.load_game(game)
    try:
        outcomes = [arena.play_match(real, [agent, RandomAgent(seed=i)] if i % 2 == 0 else [RandomAgent(seed=i), agent],
                                     seed=i) for i in range(6)]
    finally:
        agent.close()
    assert all(o.forfeit_seat is None for o in outcomes), [o.reason for o in outcomes if o.forfeit_seat is not None]
    assert all(o.moves >= 5 for o in outcomes)


@pytest.mark.long  # 2-6 minutes (about 110 CPU seconds of training, then 400 real games): not in CI
@pytest.mark.timeout(1800)
def test_ppo_reaches_the_strength_bar_on_the_real_tic_tac_toe_twin_contained(tmp_path: Path) -> None:
    """The strength test's settings on the real tic-tac-toe twin, in a sandbox child, keeping the policy with the
    fewest losses in its worse seat and stopping at the first that loses none of an evaluation (500 twin games
    per seat) and of 5,000 more per seat; the bar: no loss in 200 real games against random in either seat,
    the policy playing through the bundle's encoder (``ppo:DIR``). Seed 0 stopped at 2,826,240 steps
    (docs/ppo.md)."""
    from cwm.bundle.policy import save_policy_dir
    from cwm.ppo.contained import train_twin_contained

    loaded = bundle.load_bundle(session_bundle("tic_tac_toe", tmp_path))
    assert loaded.jax_twin is not None
    config = TrainConfig(total_steps=4_096_000, num_envs=128, rollout=32, ent_coef=0.2, loss_weight=4.0,
                         eval_every=10, eval_games=1000, seed=0, keep="worst_seat", stop_games=5000)
    result = train_twin_contained(loaded.jax_twin, config, game="tic_tac_toe")
    last = result.curve[-1]
    assert last.get("check_losses_seat0") == last.get("check_losses_seat1") == 0, result.curve[-3:]
    save_policy_dir(tmp_path / "policy", result.params, result.policy, encoder_source=loaded.sources["encoder.py"])
    agent = make_agent(f"ppo:{tmp_path / 'policy'}", "tic_tac_toe", seed=0)
    real = games.load_game("tic_tac_toe")
    try:
        for seat in (0, 1):
            lost = 0
            for i in range(200):
                players = [agent, RandomAgent(seed=i)] if seat == 0 else [RandomAgent(seed=i), agent]
                outcome = arena.play_match(real, players, seed=10_000 * seat + i)
                lost += outcome.forfeit_seat == seat or outcome.returns[seat] < 0
            assert lost == 0, (seat, lost, last)
    finally:
        agent.close()
