"""The posterior check's interval for posteriors of any size, its draws sized for a stated distance, and its
generic hidden feature on a game outside ``cwm.games.hidden.HIDDEN`` (a text view).

The power tests use simulated multinomial samples with a known distance, and the hand-written Leduc inference
mutant that draws the lowest consistent card one time in ten (a belief off by 0.075-0.08 in total variation)."""

from __future__ import annotations

import importlib.util
import math
import random
from pathlib import Path

import numpy as np
import pytest

from cwm.checks.posterior import (
    PosteriorSettings,
    draws_for_margin,
    log_subsets,
    posterior_check,
    tv_margin,
)
from cwm.contract import INFERENCE_API
from cwm.games.hidden import GENERIC, FeatureError, HiddenInfo, hidden_info, opponent_field
from cwm.sandbox import load_source

REFERENCE = Path(__file__).resolve().parents[1] / "data" / "reference"


@pytest.mark.parametrize("values", [2, 3, 10, 60, 1023, 1024, 1025, 5000])
def test_log_subsets_equals_the_exact_integer_logarithm(values):
    assert log_subsets(values) == pytest.approx(math.log(2 ** values - 2), rel=1e-12)


def test_the_margin_is_finite_for_posteriors_of_any_size():
    # the reviewer's case: the old float 2.0 ** 1025 overflowed
    assert tv_margin(1025, 400, 0.0025) == pytest.approx(math.sqrt(2 * (1025 * math.log(2) + math.log(400)) / 400) / 2)
    assert tv_margin(1025, 400, 0.0025) > tv_margin(10, 400, 0.0025)
    assert tv_margin(10 ** 6, 400, 0.0025) == 1.0  # capped: 400 draws cannot bound a million values
    assert tv_margin(10 ** 6, 10 ** 9, 0.0025) == pytest.approx(math.sqrt(2 * (10 ** 6 * math.log(2) + math.log(400)) / 10 ** 9) / 2)
    assert tv_margin(10 ** 6, 10 ** 9, 0.0025) < tv_margin(10 ** 6, 10 ** 8, 0.0025) < 1.0
    # a small posterior keeps the value the closed form gives
    for values, draws in [(2, 100), (5, 400), (30, 2000)]:
        assert tv_margin(values, draws, 0.01) == pytest.approx(
            math.sqrt(2 * (math.log(2.0 ** values - 2) + math.log(100)) / draws) / 2, rel=1e-12)


@pytest.mark.parametrize("values,margin", [(3, 0.1), (6, 0.0375), (1025, 0.5), (40, 0.02)])
def test_draws_for_margin_are_the_fewest_that_reach_it(values, margin):
    draws = draws_for_margin(values, margin, 0.05 / 20)
    assert tv_margin(values, draws, 0.05 / 20) <= margin < tv_margin(values, draws - 1, 0.05 / 20)


def _detections(p: np.ndarray, q: np.ndarray, draws: int, delta: float, trials: int, seed: int) -> float:
    """The fraction of ``trials`` samples of ``draws`` draws from ``q`` whose interval around TV(p, q_hat)
    excludes 0 (the check's verdict at one state with an exact truth)."""
    rng = np.random.default_rng(seed)
    margin = tv_margin(len(p) + 1, draws, delta)
    hits = 0
    for _ in range(trials):
        counts = rng.multinomial(draws, q)
        hits += 0.5 * float(np.abs(p - counts / draws).sum()) - margin > 0
    return hits / trials


def test_draws_sized_for_a_distance_detect_a_sampler_that_far_off_and_spare_a_right_one():
    p = np.full(5, 0.2)
    wrong = 0.9 * p + 0.1 * np.eye(5)[0]  # the lowest value one time in ten: TV 0.08
    distance = 0.5 * float(np.abs(p - wrong).sum())
    delta = 0.05
    draws = draws_for_margin(6, distance / 2, delta)
    assert _detections(p, wrong, draws, delta, trials=400, seed=1) >= 0.95
    assert _detections(p, p, draws, delta, trials=400, seed=2) <= delta  # a right sampler passes
    # at 400 draws (the check's default) the same wrong sampler is mostly missed: the sizing matters
    assert draws > 2000 and _detections(p, wrong, 400, delta, trials=400, seed=3) < 0.5


def _leduc(name: str | None):
    source = (REFERENCE / "leduc_poker_inference.py").read_text(encoding="utf-8")
    if name is not None:
        spec = importlib.util.spec_from_file_location("leduc_mutants", REFERENCE / "leduc_poker_inference_mutants.py")
        mutants = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(mutants)
        source = mutants.source(name)
    return load_source(source, name=name or "leduc_reference", api=INFERENCE_API).resample_history


SIZED = PosteriorSettings(games_played=4, states=4, draws=400, seed=0, detect=0.075)


def test_the_issues_wrong_leduc_sampler_is_missed_at_the_defaults_and_caught_at_draws_sized_for_it():
    wrong = _leduc("lowest_card_one_time_in_ten")
    small = posterior_check("leduc_poker", wrong, PosteriorSettings(games_played=4, states=4, draws=400, seed=0))
    assert small.accuracy == 1.0 and small.detectable > 0.15  # 400 draws cannot show a distance of 0.08
    sized = posterior_check("leduc_poker", wrong, SIZED)
    assert sized.detectable <= 0.075 + 1e-9 and all(s.detectable <= 0.075 + 1e-9 for s in sized.states)
    assert all(s.draws > 2000 for s in sized.states)
    assert sized.lo > 0 and all(s.lo > 0 for s in sized.states), sized.summary()
    assert "detectable 0.075" in sized.summary()


def test_the_reference_leduc_sampler_passes_at_the_same_draws():
    right = posterior_check("leduc_poker", _leduc(None), SIZED)
    assert right.accuracy == 1.0 and right.lo == 0.0 and all(s.lo == 0.0 for s in right.states), right.summary()


@pytest.mark.parametrize("bad", [0.0, -0.1, 1.5])
def test_a_detect_distance_outside_0_1_is_refused(bad):
    with pytest.raises(ValueError, match="detect must be a distance"):
        PosteriorSettings(detect=bad)


def _rps(events, player_id, seed):
    """The right belief at rock-paper-scissors played in turns: the first player's hidden choice is uniform."""
    return [] if player_id == 0 else [random.Random(seed).choice(["Rock", "Paper", "Scissors"])]


def _rps_rock(events, player_id, seed):
    return [] if player_id == 0 else ["Rock"]


def test_a_game_outside_hidden_with_a_text_view_is_checked_on_its_own_information():
    assert hidden_info("rock_paper_scissors") is GENERIC
    size = PosteriorSettings(games_played=6, states=3, draws=300, seed=0)
    right = posterior_check("rock_paper_scissors", _rps, size)
    assert len(right.states) == 3 and right.accuracy == 1.0 and right.lo == 0.0, right.summary()
    assert all(len(s.p) == 3 for s in right.states if s.player == 1)  # three choices the first player hid
    wrong = posterior_check("rock_paper_scissors", _rps_rock, size)
    assert wrong.accuracy == 1.0 and all(s.lo > 0.5 for s in wrong.states if s.player == 1), wrong.summary()


def test_a_field_the_view_does_not_have_is_an_error_not_a_constant():
    hand = HiddenInfo("the opponent's hand", opponent_field("hand"))
    with pytest.raises(FeatureError, match=r"rock_paper_scissors: .*text view.* no field 'hand' .*\['observation'\]"):
        posterior_check("rock_paper_scissors", _rps, PosteriorSettings(games_played=1, states=1, draws=5), hidden=hand)

