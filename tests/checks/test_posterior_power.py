"""The posterior check's interval for posteriors of any size (its coverage on simulated samples), its draws sized for a
stated distance (for the sampler and an estimated truth), and its
generic hidden feature on a game outside ``cwm.games.hidden.HIDDEN`` (a text view).

The power tests use simulated multinomial samples with a known distance, and the hand-written Leduc inference
mutant that draws the lowest consistent card one time in ten (a belief off by 0.075-0.08 in total variation)."""

from __future__ import annotations

import dataclasses
import importlib.util
import math
import random
from pathlib import Path

import numpy as np
import pytest

from cwm import games
from cwm.checks.posterior import (
    OPPONENT_MODEL,
    OpponentModel,
    PosteriorSettings,
    draws_for,
    draws_for_margin,
    log_subsets,
    posterior_check,
    truth_draws_for,
    tv_margin,
)
from cwm.contract import INFERENCE_API
from cwm.games.hidden import GENERIC, FeatureError, HiddenInfo, hidden_info, opponent_field
from cwm.sandbox import load_source

REFERENCE = Path(__file__).resolve().parents[1] / "data" / "reference"


@pytest.mark.parametrize("values", [2, 3, 10, 60, 1023, 1024, 1025, 5000])
def test_log_subsets_equals_the_exact_integer_logarithm(values):
    assert log_subsets(values) == pytest.approx(math.log(2 ** values - 2), rel=1e-12)


def _coverage(q: np.ndarray, draws: int, delta: float, trials: int, seed: int) -> float:
    """The fraction of ``trials`` samples of ``draws`` draws from ``q`` whose frequencies lie within the
    margin of ``q`` in total variation (``values`` counted as the support plus one, as the check does)."""
    rng = np.random.default_rng(seed)
    margin = tv_margin(len(q) + 1, draws, delta)
    counts = rng.multinomial(draws, q, size=trials)
    return float((0.5 * np.abs(counts / draws - q).sum(axis=1) <= margin).mean())


@pytest.mark.parametrize("q", [np.full(3, 1 / 3), np.array([0.7, 0.2, 0.1]), np.full(40, 1 / 40),
                               np.random.default_rng(0).dirichlet(np.ones(1025))],
                         ids=["uniform-3", "skewed-3", "uniform-40", "random-1025"])
@pytest.mark.parametrize("delta", [0.05, 0.05 / 20])
def test_the_margin_covers_the_sampling_error_at_its_stated_confidence(q, delta):
    # simulated samples with a known distribution: the margin must hold in at least 1 - delta of them, for a
    # posterior of 1,025 values too (where the old float 2.0 ** 1025 overflowed)
    draws = 400 if len(q) < 100 else 200_000
    assert tv_margin(len(q) + 1, draws, delta) < 1.0  # a margin that says something
    assert _coverage(q, draws, delta, trials=2000, seed=len(q)) >= 1 - delta


def test_a_margin_over_any_number_of_values_is_finite_and_shrinks_with_draws():
    margins = [tv_margin(10 ** 6, n, 0.0025) for n in (400, 10 ** 8, 10 ** 9)]
    assert margins[0] == 1.0 and 1.0 > margins[1] > margins[2] > 0  # 400 draws cannot bound a million values
    assert tv_margin(1025, 400, 0.0025) > tv_margin(10, 400, 0.0025)


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


@pytest.mark.parametrize("bad", [0.0, -0.1, 1.5, math.nan])
def test_a_detect_distance_outside_0_1_is_refused(bad):
    with pytest.raises(ValueError, match="detect must be a distance"):
        PosteriorSettings(detect=bad)


@pytest.mark.parametrize("field,bad", [("draws", 0), ("max_draws", -5), ("truth_draws", 2.5), ("states", True)])
def test_sizes_that_are_not_positive_whole_numbers_are_refused(field, bad):
    with pytest.raises(ValueError, match=f"PosteriorSettings.{field} must be a whole number"):
        PosteriorSettings(**{field: bad})


@pytest.mark.parametrize("detect", [2e-160, 2e-200, 1e-300, 5e-324])
def test_a_vanishing_distance_falls_back_to_the_base_draws_instead_of_overflowing(detect):
    # 2e-160 overflowed math.ceil and 2e-200 divided by zero (its square underflows)
    settings = PosteriorSettings(draws=300, detect=detect, max_draws=5000)
    assert draws_for(settings, 6, 0.0, 0.05) == 300
    assert truth_draws_for(settings, 6, 0.05) == settings.truth_draws
    assert draws_for_margin(6, detect, 0.05, most=10 ** 12) is None
    with pytest.raises(ValueError, match="needs more than"):
        draws_for_margin(6, detect, 0.05)


@pytest.mark.parametrize("margin", [0.0, -1.0, math.nan, math.inf])
def test_a_margin_that_is_not_a_distance_is_refused(margin):
    with pytest.raises(ValueError, match="the margin must be a distance"):
        draws_for_margin(6, margin, 0.05)


def test_a_distance_within_reach_gets_the_draws_for_it_and_one_beyond_reach_keeps_the_base():
    reach = PosteriorSettings(draws=200, detect=0.2, max_draws=5000)
    assert 200 < draws_for(reach, 6, 0.05, 0.05 / 8) <= 5000
    short = dataclasses.replace(reach, max_draws=300)  # 0.2 needs some 1,500 draws over 6 values
    assert draws_for(short, 6, 0.05, 0.05 / 8) == 200
    assert draws_for(reach, 6, 0.1, 0.05 / 8) == 200  # the truth alone uses all the room


LEDUC_ESTIMATED = HiddenInfo("the opponent's private card", opponent_field("private"), exact=False)


def test_an_estimated_truth_gets_draws_so_that_the_stated_distance_is_reached():
    # the setting of cwm run: 500 truth draws left a margin of ~0.1, so every state spent max_draws and still
    # could not detect 0.2; now the truth is drawn for half of the room and the sampler needs far fewer
    settings = PosteriorSettings(games_played=3, states=3, draws=200, truth_draws=500, seed=0, detect=0.2,
                                 max_draws=5000)
    right = posterior_check("leduc_poker", _leduc(None), settings, hidden=LEDUC_ESTIMATED)
    assert all(s.truth != "exact" for s in right.states) and len(right.states) == 3
    assert all(s.detectable <= 0.2 + 1e-9 and 200 <= s.draws < 5000 for s in right.states), right.summary()
    assert right.lo == 0.0, right.summary()
    wrong = posterior_check("leduc_poker", _leduc("always_same_deal"), settings, hidden=LEDUC_ESTIMATED)
    assert wrong.lo > 0, wrong.summary()


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



def _raises_with_a_king(state, player):
    """A fixed Leduc opponent: raises nearly always with a king (cards 4 and 5), nearly never without one."""
    king = state.history()[player] >= 4  # the first two chance outcomes deal player 0's card, then player 1's
    legal = state.legal_actions()
    raise_p = (0.95 if king else 0.05) if 2 in legal else 0.0
    rest = [a for a in legal if a != 2]
    return [(2, raise_p)] * (2 in legal) + [(a, (1 - raise_p) / len(rest)) for a in rest]


def test_a_sampler_right_for_random_opponents_is_shown_wrong_under_a_stated_opponent_model():
    model = OpponentModel("raises with a king (fixed policy)", _raises_with_a_king)
    uniform = posterior_check("leduc_poker", _leduc(None), SIZED)
    stated = posterior_check("leduc_poker", _leduc(None), SIZED, opponent=model)
    assert uniform.lo == 0.0 and uniform.opponent_model == OPPONENT_MODEL
    assert stated.opponent_model == model.name and stated.to_json()["opponent_model"] == model.name
    assert [(s.game, s.step) for s in stated.states] == [(s.game, s.step) for s in uniform.states]  # same states
    assert stated.lo > 0 and stated.tv > uniform.tv + 0.1, stated.summary()  # the betting tells the king now
    assert any(s.p != u.p for s, u in zip(stated.states, uniform.states))  # the model moved the truth


def test_a_state_the_opponent_model_could_not_reach_is_skipped_not_measured():
    never = OpponentModel("never raises", lambda state, player: [
        (a, 1.0 / len([b for b in state.legal_actions() if b != 2])) for a in state.legal_actions() if a != 2])
    state = games.load_game("leduc_poker").new_initial_state()
    for action in (0, 4, 1, 2):  # the cards dealt, player 0 checks, player 1 raises
        state.apply_action(action)
    small = PosteriorSettings(states=1, draws=50, seed=0)
    assert len(posterior_check("leduc_poker", _leduc(None), small, at=[(0, state)]).states) == 1
    report = posterior_check("leduc_poker", _leduc(None), small, at=[(0, state)], opponent=never)
    assert report.skipped == 1 and report.states == () and report.opponent_model == "never raises"
