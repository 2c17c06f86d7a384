"""PPO on a JAX twin in a sandbox child (``cwm.ppo.contained``): the contained run gives the in-process run's
weights bit for bit; a twin the gate refuses, or one that breaks the contract in play, stops with one line;
and what the child sends back is checked before it is used."""

from __future__ import annotations

import base64
import dataclasses
import importlib.util
from pathlib import Path

import numpy as np
import pytest

from cwm.bundle.policy import PolicyConfig, init_params, policy_bytes
from cwm.ppo.contained import CURVE_FIELDS, _checked, train_twin_contained
from cwm.ppo.jax_train import train_twin
from cwm.ppo.train import TrainConfig, summary
from cwm.sandbox.training import TrainingRefused

FIXTURE = Path(__file__).resolve().parents[1] / "fixtures" / "jax_twins" / "tic_tac_toe.py"
TINY = TrainConfig(total_steps=4 * 8 * 8, num_envs=8, rollout=8, epochs=2, minibatches=2, hidden=16,
                   eval_every=2, eval_games=20, checkpoint_every=2)


def _module(source: str):
    spec = importlib.util.spec_from_loader("ttt_twin", loader=None)
    module = importlib.util.module_from_spec(spec)
    exec(compile(source, str(FIXTURE), "exec"), vars(module))
    return module


def test_contained_run_is_the_in_process_run():
    source = FIXTURE.read_text()
    contained = train_twin_contained(source, TINY, game="tic_tac_toe", cpu_s=600)
    local = train_twin(_module(source), TINY, out_dir=None, game="tic_tac_toe", progress=False)
    assert contained.policy == local.policy == PolicyConfig(27, 9, 16, False, "tic_tac_toe")
    assert contained.curve == local.curve and contained.best_score == local.best_score
    for name, value in local.params.items():
        assert np.array_equal(contained.params[name], value), name


@pytest.mark.parametrize("change, words", [
    (("import jax.numpy as jnp\n", "import os\nimport jax.numpy as jnp\n"), "static"),
    (("    return state[\"rewards\"]\n", "    return state[\"rewards\"] * jnp.nan\n"), "a reward that is not finite"),
    (("NUM_DISTINCT_ACTIONS = 9", "NUM_DISTINCT_ACTIONS = 10"), "NUM_DISTINCT_ACTIONS is 10, the game's codec has 9"),
], ids=["imports-os", "nan-rewards", "wrong-action-count"])
def test_a_bad_twin_stops_contained_training_in_one_line(change, words):
    source = FIXTURE.read_text()
    assert change[0] in source
    with pytest.raises(TrainingRefused) as caught:
        train_twin_contained(source.replace(*change), TINY, game="tic_tac_toe", cpu_s=600)
    assert words in str(caught.value) and "\n" not in str(caught.value)


def _answer(params=None, config=None, **fields):
    config = config or PolicyConfig(27, 9, 16, False, "tic_tac_toe")
    params = init_params(config, seed=0) if params is None else params
    answer = {"policy": base64.b64encode(policy_bytes(params, config)).decode(), "best_score": 0.5,
              "curve": [{"update": 2, "steps": 128, "mean_return": 0.25}]}
    return answer | fields


class _Str(str):
    def __str__(self):
        return "lie"


@pytest.mark.parametrize("answer, words", [
    (_answer(), None),
    ({"refused": "JAX twin broke its contract in play: x"}, "broke its contract in play"),
    (_answer(extra=1), "not {policy, best_score, curve}"),
    (_answer(policy="%%%"), "the policy is not valid base64"),
    (_answer(policy=_Str("abc")), "not a base64 text"),
    (_answer(params=init_params(PolicyConfig(27, 9, 16), 0) | {"w1": np.full((27, 16), np.nan, np.float32)}),
     "array 'w1' is float32(27, 16), expected finite floats"),
    (_answer(config=PolicyConfig(27, 7, 16, False, "tic_tac_toe")), "not of this game and network"),
    (_answer(best_score=float("nan")), "best_score is not a finite number"),
    (_answer(curve=[{"steps": True}]), "curve row 0, 'steps' is not a finite number"),
    (_answer(curve=[{_Str("steps"): 1.0}]), "curve row 0 is not an object"),
    (_answer(curve=[{"update": 2}, {"steps": 1.0, "x" * 10_000: 1.0}]), f"curve row 1 has an unknown field '{'x' * 38}"),
    (_answer(curve=[{"update": 2, "Score": 1.0}]), "curve row 0 has an unknown field 'Score'"),
], ids=["good", "refused", "extra-key", "bad-base64", "str-subclass", "nan-weights", "other-actions",
        "nan-score", "bool-in-curve", "key-subclass", "long-unknown-key", "unknown-key"])
def test_the_childs_answer_is_checked(answer, words):
    config = dataclasses.replace(TINY)
    if words is None:
        result = _checked(answer, config, "tic_tac_toe", 9)
        assert result.best_score == 0.5 and result.curve[0]["steps"] == 128 and result.params["w1"].shape == (27, 16)
        return
    with pytest.raises(TrainingRefused) as caught:
        _checked(answer, config, "tic_tac_toe", 9)
    assert words in str(caught.value) and "\n" not in str(caught.value)


def test_every_field_an_evaluation_writes_is_accepted():
    """A row as the child's evaluation writes it (``summary`` of real returns, with the update and its steps)
    passes the host's check, field for field."""
    returns, seats = np.array([1.0, -1.0, 0.0, 1.0, 1.0, -1.0]), np.array([0, 1, 0, 1, 0, 1])
    row = {"update": 3, "steps": 192} | summary(returns, seats, loss_weight=4.0)
    checked = row | {f"check_{k}": v for k, v in summary(returns, seats, loss_weight=4.0).items()
                     if k.startswith(("losses_seat", "games_seat"))}
    result = _checked(_answer(curve=[row, checked]), dataclasses.replace(TINY, eval_games=6, stop_games=3),
                      "tic_tac_toe", 9)
    assert result.curve == [row, checked] and set(checked) == CURVE_FIELDS


def test_seeds_train_on_a_twin_source_and_the_estimate_is_timed_in_a_child(tmp_path):
    """``cwm train ppo``'s path with a JAX twin: the update timed in a sandbox child, two seeds trained there,
    the best saved as a policy directory with its encoder and every seed's curve."""
    from cwm.bundle.policy import load_policy
    from cwm.ppo.bundle import estimate_training
    from cwm.ppo.seeds import EnvSource, train_seeds

    encoder = (Path(__file__).resolve().parents[1] / "data" / "reference" / "tic_tac_toe_encoder.py").read_text()
    source = EnvSource(game="tic_tac_toe", encoder_source=encoder, twin_source=FIXTURE.read_text())
    estimate = estimate_training(source, TINY, [0, 1], out_dir=tmp_path, workers=1)
    assert estimate.update_s > 0 and estimate.updates_left == 2 * TINY.updates
    best = train_seeds(source, TINY, [0, 1], out_dir=tmp_path, progress=False)
    params, policy, record = load_policy(tmp_path / "policy")
    assert policy == PolicyConfig(27, 9, 16, False, "tic_tac_toe") and set(record["curves"]) == {"0", "1"}
    assert best.seed in (0, 1) and np.array_equal(params["w1"], best.params["w1"])


class _Bundle:
    def __init__(self, twin, sources=("model.py", "encoder.py")):
        self.jax_twin, self.sources, self.path = twin, dict.fromkeys(sources, ""), Path("b")


@pytest.mark.parametrize("bundle, env, encoder, expected", [
    (_Bundle("TWIN"), "auto", None, "TWIN"),
    (_Bundle(None), "auto", None, ""),
    (_Bundle("TWIN"), "python", None, ""),
    (_Bundle("TWIN"), "jax", None, "TWIN"),
    (_Bundle(None), "jax", None, "has no jax_twin.py"),
    (_Bundle("TWIN"), "jax", "def encode(o, p): ...", "--encoder cannot replace it"),
    (_Bundle("TWIN", ("model.py",)), "auto", None, "the bundle needs one"),
], ids=["auto-twin", "auto-model", "python", "jax", "jax-no-twin", "jax-own-encoder", "jax-no-encoder"])
def test_cli_env_choice(bundle, env, encoder, expected):
    from cwm.commands.train import training_twin
    from cwm.types import UsageError

    if expected in ("", "TWIN"):
        assert training_twin(bundle, env, encoder=encoder, num_envs=64, minibatches=4) == expected
        return
    with pytest.raises(UsageError) as caught:
        training_twin(bundle, env, encoder=encoder, num_envs=64, minibatches=4)
    assert expected in str(caught.value)
