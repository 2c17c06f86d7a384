"""Which evaluated policy a PPO run keeps (``TrainConfig.keep``) and when it stops early
(``TrainConfig.stop_games``): on evaluation rows made from games' returns, on a short run on the hand-written
tic-tac-toe twin (in this process and in a sandbox child), and the child's per-seat counts checked before use."""

from __future__ import annotations

import base64
import dataclasses
import importlib.util
from pathlib import Path

import numpy as np
import pytest

from cwm.bundle.policy import PolicyConfig, init_params, policy_bytes
from cwm.ppo.contained import _checked, train_twin_contained
from cwm.ppo.jax_train import train_twin
from cwm.ppo.train import RunState, TrainConfig, TrainResult, kept_row, record, summary
from cwm.sandbox.training import TrainingRefused

FIXTURE = Path(__file__).resolve().parents[1] / "fixtures" / "jax_twins" / "tic_tac_toe.py"
TINY = TrainConfig(total_steps=12 * 8 * 8, num_envs=8, rollout=8, epochs=2, minibatches=2, hidden=16,
                   eval_every=2, eval_games=20, checkpoint_every=4)
SEATS = np.array([0, 1] * 10)


def _row(seat0: list[int], seat1: list[int]) -> dict[str, float]:
    """``summary``'s row for ten games in each seat with these returns (seats rotating), loss weight 4."""
    result = np.empty(20)
    result[0::2], result[1::2] = seat0, seat1
    return summary(result, SEATS, 4.0)


STRONG_BUT_LOSES = _row([1] * 10, [1] * 9 + [-1])  # score (19 - 4) / 20 = 0.75, one loss as the second player
SAFE = _row([1] * 10, [1] * 5 + [0] * 5)  # score 0.75 as well, no loss
SAFER_AND_BETTER = _row([1] * 10, [1] * 8 + [0] * 2)  # score 0.9, no loss


def _run() -> RunState:
    return RunState({}, None, {}, -np.inf, 0, [])


def _never(games: int, seed: int) -> dict[str, float]:
    raise AssertionError("no stop check was asked for")


@pytest.mark.parametrize("keep, kept", [("score", "a"), ("worst_seat", "c")])
def test_the_run_keeps_the_policy_its_criterion_ranks_first(keep, kept):
    """A policy with a loss in one seat, then one as good on the score without a loss (a tie: the first
    stays), then a worse one on both counts: ``score`` keeps the first, ``worst_seat`` the one without loss
    (and moves to the third only when the third ranks above it)."""
    config = dataclasses.replace(TINY, keep=keep)
    run = _run()
    worse = _row([1] * 8 + [-1] * 2, [0] * 10)
    for name, row in (("a", STRONG_BUT_LOSES), ("c", SAFE), ("d", worse)):
        record(run, {"w": np.array(name)}, row, config, _never)
    assert str(run.best["w"]) == kept and run.best_score == 0.75 and len(run.curve) == 3
    assert run.curve[0]["losses_seat1"] == 1 and run.curve[0]["games_seat1"] == 10
    assert kept_row(run.curve, keep) == run.curve["acd".index(kept)]  # the choice replayed from the curve alone
    record(run, {"w": np.array("e")}, SAFER_AND_BETTER, config, _never)
    assert str(run.best["w"]) == "e" and run.best_score == 0.9 and not run.stopped


@pytest.mark.parametrize("keep, best_seed", [("score", 0), ("worst_seat", 1)])
def test_seeds_compare_by_the_same_criterion(keep, best_seed):
    """Seed 0 kept a policy scoring 0.9 with a loss in one seat, seed 1 one scoring 0.75 with none."""
    from cwm.ppo.seeds import _seed_rank

    losing = _row([1] * 10, [1] * 9 + [-1]) | {"score": 0.9}
    results = [TrainResult({}, PolicyConfig(27, 9, 16), row["score"], [row], seed)
               for seed, row in enumerate((losing, SAFE))]
    assert max(results, key=lambda r: _seed_rank(r, keep)).seed == best_seed


def test_a_policy_without_loss_is_checked_on_more_games_and_stops_the_run_when_it_loses_none():
    config = dataclasses.replace(TINY, stop_games=50)
    asked: list[tuple[int, int]] = []

    def recheck(outcomes: list[int]):
        def play(games: int, seed: int) -> dict[str, float]:
            asked.append((games, seed))
            return summary(np.resize(outcomes, games), np.resize([0, 1], games), 4.0)
        return play

    run = _run()
    record(run, {"w": np.array("a")}, STRONG_BUT_LOSES, config, _never)  # a loss: no check
    record(run, {"w": np.array("b")}, SAFER_AND_BETTER, config, recheck([1, 1, 1, -1]))  # loses as seat 1
    assert str(run.best["w"]) == "b" and not run.stopped
    assert run.curve[-1]["check_losses_seat1"] == 25 and run.curve[-1]["check_games_seat0"] == 50
    record(run, {"w": np.array("c")}, SAFE, config, recheck([1, 0]))  # lower score than b, but clean throughout
    assert run.stopped and str(run.best["w"]) == "c" and run.best_row["check_losses_seat0"] == 0
    assert kept_row(run.curve, "score") == run.curve[-1]
    assert [games for games, _ in asked] == [100, 100]


def _twin():
    spec = importlib.util.spec_from_file_location("ttt_twin_keep", FIXTURE)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


STOPPING = dataclasses.replace(TINY, eval_games=2, keep="worst_seat", stop_games=2)


def test_a_twin_run_stops_at_its_first_clean_policy_and_resumes_stopped(tmp_path):
    """On the twin: the run stops at the first evaluation whose games and check lose none, keeps that policy,
    and a resumed run of the same directory trains no further."""
    result = train_twin(_twin(), STOPPING, out_dir=tmp_path, progress=False)
    full = train_twin(_twin(), dataclasses.replace(STOPPING, stop_games=0), out_dir=None, progress=False)
    last = result.curve[-1]
    assert len(result.curve) < len(full.curve) == STOPPING.updates // STOPPING.eval_every
    assert last["check_losses_seat0"] == last["check_losses_seat1"] == 0 and last["check_games_seat1"] == 2
    assert all(r.get("check_losses_seat0", 1) + r.get("check_losses_seat1", 1) > 0 for r in result.curve[:-1])
    plain = [{k: v for k, v in r.items() if not k.startswith("check_")} for r in result.curve]
    assert plain == full.curve[:len(result.curve)]  # the checks do not change the training
    again = train_twin(_twin(), STOPPING, out_dir=tmp_path, progress=False)
    assert again.curve == result.curve and all(np.array_equal(again.params[k], v) for k, v in result.params.items())


def test_a_contained_stopping_run_is_the_in_process_run():
    contained = train_twin_contained(FIXTURE.read_text(), STOPPING, game="tic_tac_toe", cpu_s=600)
    local = train_twin(_twin(), STOPPING, out_dir=None, game="tic_tac_toe", progress=False)
    assert contained.curve == local.curve and contained.best_score == local.best_score
    assert all(np.array_equal(contained.params[k], v) for k, v in local.params.items())


def _answer(curve: list[dict]) -> dict:
    config = PolicyConfig(27, 9, 16, False, "tic_tac_toe")
    return {"policy": base64.b64encode(policy_bytes(init_params(config, seed=0), config)).decode(),
            "best_score": 0.5, "curve": curve}


GOOD = {"update": 2, "steps": 128, "score": 0.5, "loss_rate_seat0": 0.0, "loss_rate_seat1": 0.1,
        "losses_seat0": 0, "losses_seat1": 1, "games_seat0": 10, "games_seat1": 10}


@pytest.mark.parametrize("change, words", [
    ({}, None),
    ({"check_losses_seat0": 0, "check_losses_seat1": 0, "check_games_seat0": 3, "check_games_seat1": 3}, None),
    ({"losses_seat1": None}, "lacks some of losses_seat0"),
    ({"loss_rate_seat0": None}, "lacks loss_rate_seat0 or loss_rate_seat1"),
    ({"losses_seat1": 1.0}, "not whole numbers"),
    ({"losses_seat1": -1, "loss_rate_seat1": -0.1}, "not whole numbers"),
    ({"losses_seat1": 11, "loss_rate_seat1": 1.1}, "not whole numbers"),
    ({"games_seat1": 30}, "within 20 games"),
    ({"loss_rate_seat1": 0.0}, "loss_rate_seat1 0.0 is not 1 of 10 games"),
    ({"check_losses_seat0": 0, "check_losses_seat1": 0, "check_games_seat0": 3}, "lacks some of check_losses"),
    ({"check_losses_seat0": 0, "check_losses_seat1": 0, "check_games_seat0": 3, "check_games_seat1": 4},
     "within 6 games"),
    ({"losses_seat0": True}, "'losses_seat0' is not a finite number"),
], ids=["good", "good-check", "missing", "no-rate", "float", "negative", "more-than-games", "other-games", "rate-lies",
        "check-missing", "check-other-games", "bool"])
def test_the_childs_per_seat_counts_are_checked(change, words):
    row = {k: v for k, v in (GOOD | change).items() if v is not None}
    config = dataclasses.replace(TINY, keep="worst_seat", stop_games=3)
    if words is None:
        assert _checked(_answer([row]), config, "tic_tac_toe", 9).curve == [row]
        return
    with pytest.raises(TrainingRefused) as caught:
        _checked(_answer([row]), config, "tic_tac_toe", 9)
    assert words in str(caught.value) and "\n" not in str(caught.value)


def test_counts_are_optional_under_the_default_settings_and_required_otherwise():
    row = {"update": 2, "steps": 128, "mean_return": 0.25}
    assert _checked(_answer([row]), TINY, "tic_tac_toe", 9).curve == [row]
    with pytest.raises(TrainingRefused, match="lacks some of losses_seat0"):
        _checked(_answer([row]), dataclasses.replace(TINY, keep="worst_seat"), "tic_tac_toe", 9)


@pytest.mark.parametrize("change, words", [({"keep": "best"}, "TrainConfig.keep must be one of score, worst_seat"),
                                           ({"stop_games": -1}, "stop_games"), ({"stop_games": 1.5}, "stop_games")])
def test_bad_keep_settings_are_refused(change, words):
    with pytest.raises(ValueError, match=words):
        dataclasses.replace(TINY, **change).check()


def test_the_python_trainer_stops_as_well(tmp_path, model_envs):
    """cwm's PPO in the hand-written tic-tac-toe model, the same settings: it stops at its first clean policy,
    which it keeps, and the training before is that of a run that never stops."""
    from cwm.ppo.train import train

    result = train(model_envs("tic_tac_toe"), STOPPING, out_dir=tmp_path / "a", progress=False)
    full = train(model_envs("tic_tac_toe"), dataclasses.replace(STOPPING, stop_games=0), out_dir=tmp_path / "b",
                 progress=False)
    last = result.curve[-1]
    assert len(result.curve) < len(full.curve) and last["check_losses_seat0"] == last["check_losses_seat1"] == 0
    assert result.best_score == last["score"]
    plain = [{k: v for k, v in r.items() if not k.startswith("check_")} for r in result.curve]
    assert plain == full.curve[:len(result.curve)]
