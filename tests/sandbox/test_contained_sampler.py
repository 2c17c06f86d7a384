"""cwm.sandbox.sampling.ContainedSampler: an untrusted inference function's draws made in a hardened worker,
as the posterior check of the experiments makes them. The draws equal the function's own; each failure is one
draw's named error; a worker that keeps overrunning is given up on, not restarted per draw."""

from __future__ import annotations

from pathlib import Path

import pytest

from cwm.checks.posterior import PosteriorSettings, posterior_check
from cwm.contract import INFERENCE_API
from cwm.games import trajectories
from cwm.sandbox import load_source
from cwm.sandbox.sampling import ContainedSampler, SamplerFailure
from cwm.sandbox.watch import tree_cpu

REFERENCE = (Path(__file__).resolve().parents[1] / "data" / "reference" / "leduc_poker_inference.py").read_text()


@pytest.fixture(scope="module")
def events() -> list[dict]:
    game = trajectories.collect("leduc_poker", 1, seed=3)[0]
    view = trajectories.closed_view(game, 0)
    return [{"observation": e.observation, "action": e.action} for e in view.events[:3]]


def test_draws_equal_the_functions_own(events):
    own = load_source(REFERENCE, name="reference", api=INFERENCE_API).resample_history
    with ContainedSampler(REFERENCE) as sampler:
        assert [sampler(events, 0, seed) for seed in range(5)] == [own(events, 0, seed) for seed in range(5)]


def test_a_raising_draw_is_one_failure_and_the_worker_goes_on(events):
    source = REFERENCE + "\n_own = resample_history\n\n" + (
        "def resample_history(events, player_id, seed):\n"
        "    if seed % 2:\n"
        "        raise ValueError('odd seed')\n"
        "    return _own(events, player_id, seed)\n")
    with ContainedSampler(source) as sampler:
        with pytest.raises(SamplerFailure, match="resample_history raised ValueError: odd seed"):
            sampler(events, 0, 1)
        assert sampler(events, 0, 2) and sampler.restarts == 0


@pytest.mark.parametrize("source, message", [
    ("import os\ndef resample_history(e, p, s):\n    return []\n", "could not start (static): line 1: import of 'os'"),
    ("def resample_state(e, p, s):\n    return {}\n", "defines no resample_history"),
    ("def resample_history(e, p, s):\n    return 7\n", "returned 7, not a list of action strings"),
], ids=["gated-import", "state-sampler", "not-a-list"])
def test_bad_functions_fail_each_draw_with_the_reason(events, source, message):
    with ContainedSampler(source) as sampler:
        for seed in range(2):
            with pytest.raises(SamplerFailure, match=message.replace("(", r"\(").replace(")", r"\)")):
                sampler(events, 0, seed)


def test_an_endless_function_is_given_up_on_after_its_restarts(events):
    source = "def resample_history(e, p, s):\n    while True:\n        pass\n"
    with ContainedSampler(source, cpu_s=0.2, max_restarts=1) as sampler:
        for _ in range(2):
            with pytest.raises(SamplerFailure, match="failed \\(timeout\\)"):
                sampler(events, 0, 0)
        start = tree_cpu()
        with pytest.raises(SamplerFailure, match="given up after 1 restarts"):
            sampler(events, 0, 0)
        assert tree_cpu() - start < 0.1  # no third budget (0.2 s of a worker's CPU) spent


def test_the_posterior_check_through_the_worker_matches_in_process():
    own = load_source(REFERENCE, name="reference", api=INFERENCE_API).resample_history
    settings = {"games_played": 3, "states": 4, "draws": 60, "seed": 1}
    with ContainedSampler(REFERENCE) as sampler:
        contained = posterior_check("leduc_poker", sampler, PosteriorSettings(**settings))
    assert contained.to_json() == posterior_check("leduc_poker", own, PosteriorSettings(**settings)).to_json()
