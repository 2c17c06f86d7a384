"""The trick-taking family of generated games: each rule a parameter switches on decides a scripted deal and
play as its rules sentence says, hands stay hidden, and resampling keeps a player's information state."""

from __future__ import annotations

import numpy as np
import pytest

from cwm.games.generated import trick_taking
from cwm.games.generated.trick_taking import TrickParams
from tests.games.generated_helpers import build, legal_names, play, random_states

# 3 suits (S, H, D) of ranks 1-4, two hands of 3: six cards stay undealt
PLAIN = TrickParams(suits=3, ranks=4, hand=3, trump="none", trump_suit="", follow="free", scoring="tricks",
                    last_bonus=False)
DEAL = "deal S4, deal S1, deal H2, deal H3, deal D1, deal D2"  # player 0: S4 H2 D1; player 1: S1 H3 D2


def game(**changes):
    """A game of ``PLAIN`` with ``changes``, registered under a fresh test name."""
    return build(trick_taking, PLAIN, **changes)


def test_the_deal_alternates_uniformly_over_the_cards_left():
    state = play(game(), "deal S4")
    assert len(state.chance_outcomes()) == 11 and all(p == pytest.approx(1 / 11) for _, p in state.chance_outcomes())
    dealt = play(game(), DEAL)
    assert dealt.observation_for(0)["hand"] == ["S4", "H2", "D1"] and dealt.observation_for(1)["hand"] == ["S1", "H3", "D2"]
    assert dealt.current_player() == 0


def test_follow_rules_free_follow_and_head():
    lead = f"{DEAL}, play H2"
    assert legal_names(play(game(), lead)) == {"play S1", "play H3", "play D2"}
    assert legal_names(play(game(follow="follow"), lead)) == {"play H3"}
    assert legal_names(play(game(follow="follow"), f"{DEAL}, play S4")) == {"play S1"}
    assert legal_names(play(game(follow="head"), f"{DEAL}, play H2")) == {"play H3"}
    # head: no higher spade than S4 in hand, so any spade (S1) is still required
    assert legal_names(play(game(follow="head"), f"{DEAL}, play S4")) == {"play S1"}
    void = "deal S4, deal H1, deal H2, deal H3, deal D1, deal D2"  # player 1 has no spade
    assert legal_names(play(game(follow="follow"), f"{void}, play S4")) == {"play H1", "play H3", "play D2"}


def test_a_trick_goes_to_the_higher_card_of_the_led_suit_or_the_higher_trump():
    state = play(game(), f"{DEAL}, play H2, play H3")
    assert state.observation_for(0)["tricks"] == [0, 1] and state.current_player() == 1, "the winner leads"
    off_suit = play(game(), f"{DEAL}, play D1, play S1")
    assert off_suit.observation_for(0)["tricks"] == [1, 0], "a card of another suit never wins"
    trumped = play(game(trump="fixed", trump_suit="S"), f"{DEAL}, play D1, play S1")
    assert trumped.observation_for(0)["tricks"] == [0, 1], "the low spade trumps"


def test_a_turned_card_sets_trumps_after_the_deal_and_is_never_played():
    g = game(trump="turned")
    state = play(g, DEAL)
    assert state.is_chance_node() and len(state.chance_outcomes()) == 6
    state = play(g, f"{DEAL}, deal D4")
    assert state.observation_for(1)["trump"] == "D" and state.observation_for(1)["turned"] == "D4"
    after = play(g, f"{DEAL}, deal D4, play S4, play D2")
    assert after.observation_for(0)["tricks"] == [0, 1], "D2 trumps S4"


def test_scoring_by_tricks_by_ranks_or_avoiding_tricks_and_the_last_trick_bonus():
    # player 0 wins trick 1 (S4 S1), player 1 trick 2 (H3 over H2), player 0 trick 3? D1 vs D2: player 1 leads
    moves = f"{DEAL}, play S4, play S1, play H2, play H3, play D2, play D1"
    tricks = play(game(), moves)
    assert tricks.is_terminal() and tricks.observation_for(0)["tricks"] == [1, 2] and tricks.returns() == [-1.0, 1.0]
    ranks = play(game(scoring="ranks"), moves)  # 0: 4+1 = 5; 1: 2+3 + 2+1 = 8
    assert ranks.observation_for(0)["scores"] == [5, 8] and ranks.returns() == [-1.0, 1.0]
    avoid = play(game(scoring="avoid"), moves)
    assert avoid.returns() == [1.0, -1.0], "fewer tricks wins when avoiding them"
    two = "deal S3, deal S2, deal H2, deal H3, play S3, play S2, play H2, play H3"  # one trick each
    assert play(game(hand=2), two).returns() == [0.0, 0.0]
    assert play(game(hand=2, last_bonus=True), two).returns() == [-1.0, 1.0], "the last trick's bonus decides"
    tie = "deal S3, deal S2, deal H2, deal H3, deal D2, deal D1"  # 0 wins S, 1 wins H, 1 leads D1, 0 wins D
    base = play(game(), f"{tie}, play S3, play S2, play H2, play H3, play D1, play D2")
    assert base.observation_for(0)["tricks"] == [2, 1] and base.returns() == [1.0, -1.0]
    bonus = play(game(scoring="avoid", last_bonus=True), f"{tie}, play S3, play S2, play H2, play H3, play D1, play D2")
    assert bonus.observation_for(0)["scores"] == [3, 1] and bonus.returns() == [-1.0, 1.0]
    level = play(game(scoring="ranks", last_bonus=True), f"{tie}, play S3, play S2, play H2, play H3, play D1, play D2")
    assert level.observation_for(0)["scores"] == [5 + 3 + 1, 5] and level.returns() == [1.0, -1.0]


@pytest.mark.parametrize("follow", ["free", "follow", "head"])
def test_the_other_hand_stays_hidden_and_resampling_keeps_the_information_state(follow):
    g = game(follow=follow, trump="turned")
    rng = np.random.default_rng(1)
    varied = 0
    for state in random_states(g, 30, seed=2):
        if state.is_chance_node():
            continue
        player = state.current_player()
        other = {trick_taking.card_name(c, 4) for c in state.hands[1 - player]}
        seen = state.observation_string(player) + state.information_state_string(player)
        assert not any(f'"{card}"' in seen for card in other), "the other hand leaked"
        draw = state.resample_from_infostate(player, lambda: float(rng.random()))
        assert draw.information_state_string(player) == state.information_state_string(player)
        assert draw.observation_string(player) == state.observation_string(player)
        varied += sorted(draw.hands[1 - player]) != sorted(state.hands[1 - player])
    assert varied > 20, "the other hand is redrawn, not copied"
