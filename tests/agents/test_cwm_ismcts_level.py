"""No difference is detected between the CWM-ISMCTS agent and GT-ISMCTS at Leduc poker when its model and
inference are right: the oracle model with the reference inference in this process, and the reference model
with the same inference as a bundle, planned on in a hardened worker. 200 hands each, both seats; the 95%
interval of the mean payoff must include 0 (Leduc payoffs have sd ~4 chips, so the interval is about +-0.6
chips). This catches an agent that loses or wins by more than about that; it does not show parity, which
would take an equivalence test with a stated margin (``cwm.stats.paired``).
"""

from __future__ import annotations

from pathlib import Path

import pyspiel
import pytest

from cwm.agents import CWMAgent, ISMCTSAgent, inference_sampler
from cwm.agents.specs import Settings, make_agent
from cwm.agents.worker import WorkerAgent
from cwm.arena import play_match
from cwm.bundle import export_bundle
from cwm.contract import INFERENCE_API
from cwm.games import trajectories
from cwm.games.oracle import oracle_model
from cwm.sandbox import load_source
from planners.config import SearchConfig

REFERENCE = Path(__file__).resolve().parent.parent / "data" / "reference"
CONFIG = SearchConfig(num_simulations=40, rollouts=2)
HANDS = 200


def _scores(make_cwm):
    game = pyspiel.load_game("leduc_poker")
    scores, stats = [], []
    for i in range(HANDS):
        cwm, gt = make_cwm(i), ISMCTSAgent(CONFIG, seed=10_000 + i)
        try:
            returns, forfeit, _, reason, _ = play_match(game, [cwm, gt] if i % 2 == 0 else [gt, cwm], seed=i)
            stats.append(cwm.stats())
        finally:
            getattr(cwm, "close", lambda: None)()
        assert forfeit is None, reason
        scores.append(returns[i % 2])
    return scores, stats


def _assert_no_gap_detected(scores, stats, mean_ci):
    mean, lo, hi = mean_ci(scores)
    assert lo <= 0 <= hi, f"CWM-ISMCTS vs GT-ISMCTS: mean payoff {mean:+.2f} [{lo:+.2f}, {hi:+.2f}]"
    assert sum(s["fallback_moves"] for s in stats) == 0 and sum(s["rejected_draws"] for s in stats) == 0


@pytest.mark.slow
def test_no_gap_is_detected_between_the_oracle_model_with_reference_inference_and_gt_ismcts(mean_ci):
    inference = load_source((REFERENCE / "leduc_poker_inference.py").read_text(), name="leduc_inference",
                                  api=INFERENCE_API)
    oracle = oracle_model("leduc_poker")
    sampler = inference_sampler(oracle, inference.resample_history)
    _assert_no_gap_detected(*_scores(lambda i: CWMAgent(oracle, "leduc_poker", CONFIG, sampler=sampler, seed=i)), mean_ci)


@pytest.mark.slow
def test_no_gap_is_detected_between_a_contained_bundle_with_reference_inference_and_gt_ismcts(mean_ci, tmp_path):
    bundle = export_bundle(tmp_path / "leduc", game="leduc_poker",
                           model_source=(REFERENCE / "leduc_poker_model.py").read_text(),
                           train=trajectories.collect("leduc_poker", 3, seed=0),
                           extra_sources={"inference.py": (REFERENCE / "leduc_poker_inference.py").read_text()})
    settings = Settings(search=CONFIG)

    def contained(i):
        agent = make_agent(f"cwm:{bundle}", "leduc_poker", settings=settings, seed=i)
        assert isinstance(agent, WorkerAgent)
        return agent

    _assert_no_gap_detected(*_scores(contained), mean_ci)
