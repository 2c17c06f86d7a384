"""N-player inference on cooperative games: hand-written reference resamplers (tests/data/reference/) for tiny
Hanabi and for Hanabi with two to four players pass cwm's inference checks on the ground truth (every
history they draw replays, in the oracle model, to each player's observations and own moves, the end of
the game included), tiny Hanabi's is the true posterior, and wrong resamplers are refused."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from cwm import value_rules
from cwm.checks.inference import run_inference_checks
from cwm.checks.posterior import PosteriorSettings, posterior_check
from cwm.contract import INFERENCE_API
from cwm.games import trajectories
from cwm.games.oracle import oracle_model
from cwm.sandbox import load_source

REFERENCE = Path(__file__).resolve().parent.parent / "data" / "reference"


def _hanabi_module(source: str | None = None):
    """The Hanabi reference (or a variant of its source) through the sandbox's gate, as a bundle's is."""
    text = source if source is not None else (REFERENCE / "hanabi_inference.py").read_text(encoding="utf-8")
    return load_source(text, name="hanabi_inference", api=INFERENCE_API)


def _tiny(source: str | None = None):
    """The tiny Hanabi reference (or a variant of its source) through the sandbox's gate, as a bundle's is."""
    text = source if source is not None else (REFERENCE / "tiny_hanabi_inference.py").read_text(encoding="utf-8")
    return load_source(text, name="tiny_hanabi_inference", api=INFERENCE_API)


def _lives(state) -> str:
    return str(state).split("\n", 1)[0]


def _patient(state, rng) -> int:
    """A careful team (it sees the whole state): a card that fits its firework half the time, else a hint or
    a discard, so games reach the end of the deck with plays, misfire-free, and every kind of hint."""
    legal = state.legal_actions()
    names = {a: state.action_to_string(state.current_player(), a) for a in legal}
    safe = [a for a in legal if "Play" in names[a] and _lives(state.child(a)) == _lives(state)]
    quiet = [a for a in legal if "Play" not in names[a]]
    return int(rng.choice(safe if safe and (rng.random() < 0.5 or not quiet) else quiet or legal))


def _views(game: str, n: int, *, policy=trajectories.uniform_random):
    trajs = trajectories.collect(game, n, seed=0, policy=policy, policy_name="patient")
    return [trajectories.closed_view(t, p) for t in trajs for p in range(t.num_players)]


def _check(game: str, resample, views):
    return run_inference_checks(oracle_model(game), resample, views, terminal=True)


@pytest.mark.parametrize("game", ["hanabi", "hanabi(players=3)", "hanabi(players=4)", "hanabi(players=5)"])
def test_the_hanabi_reference_passes_the_inference_checks_for_every_player(game: str) -> None:
    views = _views(game, 2, policy=_patient) + _views(game, 2)  # played out to the deck's end, and random play
    assert {v.player for v in views} == set(range(int(game[-2]) if "=" in game else 2))
    assert any("Deck size: 0" in str(v.events[-1].observation) for v in views)  # a game played out to its end
    report = _check(game, _hanabi_module().resample_history, views)
    assert report.all_passed, report.summary() + "\n" + "\n".join(f.render() for f in report.failures[:2])
    assert report.by_type["inference"].total > 100 and report.by_type["inference_terminal"].total == len(views)


def test_a_hanabi_resampler_that_ignores_the_hints_is_refused() -> None:
    source = (REFERENCE / "hanabi_inference.py").read_text(encoding="utf-8")
    old = "allowed = [possible for _, _, possible in _blocks(_text(events[-1]))[0][0]]"
    assert source.count(old) == 1
    mutant = _hanabi_module(source.replace(old, 'allowed = ["RYGWB12345" for _ in hand]'))  # own cards: any
    report = _check("hanabi", mutant.resample_history, _views("hanabi", 2, policy=_patient))
    failed = report.by_type["inference"].total - report.by_type["inference"].passed
    assert failed > 10 and not report.all_passed
    # the hints the player's own cards were given cannot be replayed: no move of the hinting player fits
    assert all("no move of the player to act" in f.render() for f in report.failures), report.failures[0].render()


def test_the_tiny_hanabi_reference_passes_and_is_the_true_posterior() -> None:
    report = _check("tiny_hanabi", _tiny().resample_history, _views("tiny_hanabi", 20))
    assert report.all_passed and report.by_type["inference_terminal"].total == 40, report.summary()
    posterior = posterior_check("tiny_hanabi", _tiny().resample_history,
                                PosteriorSettings(games_played=10, states=12, draws=300, seed=0))
    assert posterior.accuracy == 1.0 and posterior.lo == 0.0, posterior.summary()


def test_a_tiny_hanabi_resampler_that_ignores_the_return_fails_at_the_end() -> None:
    source = (REFERENCE / "tiny_hanabi_inference.py").read_text(encoding="utf-8")
    old = 'if last.get("terminal") and len(actions) == 2:'
    assert source.count(old) == 1
    report = _check("tiny_hanabi", _tiny(source.replace(old, "if False:")).resample_history, _views("tiny_hanabi", 20))
    assert report.by_type["inference"].passed == report.by_type["inference"].total  # fine while the game goes on
    assert report.by_type["inference_terminal"].passed < report.by_type["inference_terminal"].total


def test_a_tiny_hanabi_belief_that_always_deals_the_same_card_fails_the_posterior_check() -> None:
    source = (REFERENCE / "tiny_hanabi_inference.py").read_text(encoding="utf-8")
    old = "deal[other] = str(rng.choice(cards))"
    assert source.count(old) == 1
    mutant = _tiny(source.replace(old, "deal[other] = str(cards[0])"))
    assert _check("tiny_hanabi", mutant.resample_history, _views("tiny_hanabi", 20)).all_passed  # consistent...
    posterior = posterior_check("tiny_hanabi", mutant.resample_history,
                                PosteriorSettings(games_played=10, states=12, draws=300, seed=0))
    assert posterior.lo > 0.3, posterior.summary()  # ...but not the posterior


def test_sampling_is_seeded() -> None:
    module = _hanabi_module()
    view = next(v for v in _views("hanabi(players=3)", 1, policy=_patient) if v.player == 2)
    events = value_rules.thaw([{"observation": e.observation, "action": e.action} for e in view.events[:30]])
    events[-1]["action"] = None
    draws = [tuple(module.resample_history(events, 2, s)) for s in range(20)]
    assert draws[0] == tuple(module.resample_history(events, 2, 0)) and len(set(draws)) > 1
    assert np.all([len(d) == 29 for d in draws])
