"""The posterior check on gin rummy, whose hidden hand has too many values to estimate: it measures the lowest
card of the opponent's hand (``cwm.games.hidden.HIDDEN``), so the real session's inference function (shipped in
``cwm/data/recordings/real/gin_rummy.jsonl``, run contained) shows no evidence of a wrong belief while a
mutant that deals the opponent the lowest unseen cards, and passes every reconstruction, is caught; and a
report keeps a bounded number of short values per state whatever the feature (the generic one takes a new,
long value at nearly every draw)."""

from __future__ import annotations

import dataclasses
import importlib.resources
import json
from pathlib import Path

import pytest

from cwm import games
from cwm.checks.posterior import SHOWN_CHARS, SHOWN_VALUES, PosteriorSettings, posterior_check, shown
from cwm.games.hidden import GENERIC, HIDDEN, hidden_info, opponent_lowest_card
from cwm.sandbox.sampling import ContainedSampler
from cwm.synthesis.extract import extract_code

REAL = Path(str(importlib.resources.files("cwm").joinpath("data", "recordings", "real", "gin_rummy.jsonl")))
SHUFFLE = "        picks = rng.sample(pool, min(len(free), len(pool)))\n"  # the real inference's draw of the unseen
# cards it deals to the free slots


def _real_inference() -> str:
    """The real session's inference module: the reply to its second request (the first is the world model)."""
    reply = json.loads(REAL.read_text(encoding="utf-8").splitlines()[1])["response"]["texts"][0]
    return extract_code(reply, ["resample_history"]).candidates[0]


def _check(source: str):
    with ContainedSampler(source) as sampler:
        return posterior_check("gin_rummy", sampler, PosteriorSettings(games_played=3, states=4, draws=150, truth_draws=1000, seed=0))


def test_gin_rummy_measures_the_lowest_card_of_the_opponents_hand():
    """Dealt from the top of the deck down: player 0 holds 4h-Kh, player 1 holds 7d-Kd with Ah, 2h, 3h. The
    lowest card is by OpenSpiel's order, suit first (spades, clubs, diamonds, hearts): 7d, not the ace."""
    assert hidden_info("gin_rummy") is HIDDEN["gin_rummy"] and not HIDDEN["gin_rummy"].exact
    spec = games.resolve("gin_rummy")
    state = games.load_game(spec).new_initial_state()
    card = 51
    while state.is_chance_node():
        state.apply_action(card)
        card -= 1
    assert state.current_player() == 0
    assert games.observe(spec, state, 1)["hands"][1] == ["7d", "8d", "9d", "Td", "Jd", "Qd", "Kd", "Ah", "2h", "3h"]
    assert opponent_lowest_card(spec, state, 0) == "7d"  # player 0 asks about player 1's hand
    assert opponent_lowest_card(spec, state, 1) == "4h"


@pytest.mark.slow
def test_no_gap_is_detected_between_the_real_gin_rummy_inference_and_the_posterior_and_a_sorted_deal_is_caught():
    source = _real_inference()
    assert source.count(SHUFFLE) == 1
    real = _check(source)
    assert real.accuracy == 1.0 and len(real.states) == 4 and {s.truth for s in real.states} == {"engine"}
    assert real.lo == 0.0 and real.tv < 0.15, real.summary()
    sorted_deal = _check(source.replace(SHUFFLE, "        picks = sorted(pool)[:min(len(free), len(pool))]\n"))  # lowest
    assert sorted_deal.accuracy == 1.0  # every history still replays: only the belief is wrong
    assert sorted_deal.lo > 0.3, sorted_deal.summary()


def test_a_report_keeps_few_short_values_per_state():
    long_values = {("x" * 5000 + str(i),): 1 / 500 for i in range(500)}
    kept = shown(long_values)
    assert len(kept) == SHOWN_VALUES + 1 and kept["<480 other values>"] == pytest.approx(480 / 500)
    assert all(len(v) < SHOWN_CHARS + 80 for v in kept)
    assert len(set(kept)) == len(kept)  # clipped texts stay distinct (length and hash)
    assert sum(kept.values()) == pytest.approx(1.0)
    few = {"As": 0.25, "Ac": 0.5, "2s": 0.25}
    assert list(shown(few).items()) == [("Ac", 0.5), ("2s", 0.25), ("As", 0.25)]  # likeliest first, ties by text
    twins = {("x",): 0.5, "('x',)": 0.25, "y": 0.25}  # two values with the same text: one entry, summed
    assert shown(twins) == {"('x',)": 0.75, "y": 0.25}
    assert "<1 other value>" in shown({str(i): 1 / 21 for i in range(21)})


def test_the_generic_feature_on_gin_rummy_gives_a_small_report():
    """The generic feature (the opponent's whole information state, tens of thousands of characters) takes a
    new value at nearly every draw of the sampler: each state's p and q still keep at most SHOWN_VALUES
    entries of clipped text, with the rest summed."""
    generic = dataclasses.replace(GENERIC, exact=False)  # the deal cannot be enumerated: straight to the engine
    with ContainedSampler(_real_inference()) as sampler:
        report = posterior_check("gin_rummy", sampler, PosteriorSettings(games_played=1, states=2, draws=40, truth_draws=60, seed=0), hidden=generic)
    assert len(report.states) == 2 and report.accuracy == 1.0
    for check in report.states:
        assert check.q[f"<{40 - SHOWN_VALUES} other values>"] > 0  # every draw a new value: 20 kept, 20 summed
        assert len(check.p) <= SHOWN_VALUES + 1 and len(check.q) <= SHOWN_VALUES + 1
        assert all(len(v) < SHOWN_CHARS + 80 for v in [*check.p, *check.q])
        assert sum(check.p.values()) == pytest.approx(1.0) and sum(check.q.values()) == pytest.approx(1.0)
    assert len(json.dumps(report.to_json())) < 100_000
