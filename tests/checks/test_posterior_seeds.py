"""The posterior check's inference seeds: each checked state draws from its own stream, so an exact sampler's
false alarms stay as rare as the stated confidence allows, check after check, and a wrong one is still caught.

Tiny Hanabi's hand-written exact resampler (tests/data/reference/tiny_hanabi_inference.py) draws the other
player's card with ``random.Random(seed).choice``, so its draws depend on the seeds alone: a stream shared by
every check at one seed once handed the same unlucky seeds to the same position of every check.
"""

from __future__ import annotations

from pathlib import Path

from cwm.checks.posterior import PosteriorSettings, information_states, posterior_check
from cwm.contract import INFERENCE_API
from cwm.pipeline.beliefs import run_settings
from cwm.sandbox import load_source

REFERENCE = Path(__file__).resolve().parents[1] / "data" / "reference" / "tiny_hanabi_inference.py"
DRAW = "deal[other] = str(rng.choice(cards))"
# the other's card is 0 three times in four where both are possible: a belief off by 0.25 at every state
BIASED = "deal[other] = str(cards[0] if len(cards) > 1 and rng.random() < 0.5 else rng.choice(cards))"
SMALL = PosteriorSettings(games_played=10, states=4, draws=60, seed=0)


def _inference(patch: tuple[str, str] | None = None):
    source = REFERENCE.read_text(encoding="utf-8")
    if patch is not None:
        assert source.count(patch[0]) == 1
        source = source.replace(*patch)
    return load_source(source, name="tiny_hanabi_inference", api=INFERENCE_API).resample_history


def _spy(seeds: list[int]):
    resample = _inference()

    def draw(events, player, seed):
        seeds.append(seed)
        return resample(events, player, seed)
    return draw


def _seeds_by_state(settings, at=None) -> list[set[int]]:
    seeds: list[int] = []
    report = posterior_check("tiny_hanabi", _spy(seeds), settings, at=at)
    out, start = [], 0
    for state in report.states:
        out.append(set(seeds[start:start + state.draws]))
        start += state.draws
    assert start == len(seeds)
    return out


def test_every_state_of_every_check_gets_its_own_inference_seeds():
    states = information_states("tiny_hanabi", games_played=10, states=4, seed=0)
    others = information_states("tiny_hanabi", games_played=10, states=4, seed=5)
    off = _seeds_by_state(SMALL)
    on_same = _seeds_by_state(SMALL, at=states)
    on_other = _seeds_by_state(SMALL, at=others)
    assert len(off) == len(on_same) == len(on_other) == 4
    everything = off + on_same + on_other
    assert all(len(s) == SMALL.draws for s in everything)  # no seed repeats within a state
    # no seed is handed out twice: not to two states of a check, not to the same position of the off-policy
    # check and an on-policy check of the same states, nor of other states, all at the same seed
    assert len(set().union(*everything)) == sum(len(s) for s in everything)


def test_the_seeds_are_a_function_of_the_check_and_its_states():
    assert _seeds_by_state(SMALL) == _seeds_by_state(SMALL)
    assert _seeds_by_state(SMALL) != _seeds_by_state(PosteriorSettings(games_played=10, states=4, draws=60, seed=1))


def test_the_exact_resampler_passes_cwm_runs_checks_at_seed_zero_off_and_on_policy():
    exact = _inference()
    for at in (None, information_states("tiny_hanabi", games_played=10, states=8, seed=7)):
        report = posterior_check("tiny_hanabi", exact, run_settings(0), at=at)
        assert report.accuracy == 1.0 and report.lo == 0.0, report.summary()


def test_the_exact_resampler_raises_no_more_false_alarms_than_the_confidence_allows():
    """At 95%, at most 5% of checks of an exact sampler may show a distance; over 40 seeds more than 6
    alarms would happen with probability below 0.3% at that rate (the bound is conservative: far fewer)."""
    exact = _inference()
    settings = [PosteriorSettings(games_played=10, states=4, draws=60, detect=0.3, max_draws=2000, seed=seed)
                for seed in range(40)]
    reports = [posterior_check("tiny_hanabi", exact, s) for s in settings]
    assert all(r.accuracy == 1.0 and len(r.states) == 4 for r in reports)
    alarms = [r.summary() for r in reports if r.lo > 0.0]
    assert len(alarms) <= 6, alarms


def test_a_belief_off_by_a_quarter_is_caught_at_every_seed():
    biased = _inference((DRAW, BIASED))
    for seed in range(4):
        report = posterior_check("tiny_hanabi", biased, PosteriorSettings(
            games_played=10, states=4, draws=60, detect=0.2, max_draws=2000, seed=seed))
        assert report.accuracy == 1.0 and report.lo > 0.0, report.summary()
        assert min(s.lo for s in report.states) > 0.0, report.summary()
