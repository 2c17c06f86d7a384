"""The melding family of generated games: each rule a parameter switches on decides a scripted deal and play
as its rules sentence says, hands stay hidden, and resampling keeps a player's information state."""

from __future__ import annotations

import numpy as np
import pytest

from cwm.games.generated import melding
from cwm.games.generated.common import card_name
from cwm.games.generated.melding import MeldParams
from cwm.games.generated.melding_engine import TAKE
from tests.games.generated_helpers import build, legal_names, play, random_states

# 3 suits (S, H, D) of ranks 1-5: 15 cards
PLAIN = MeldParams(suits=3, ranks=5, hand=3, melds="both", take_discard=False, layoff=False, knock_limit=0,
                   out_bonus=0, deadwood=1, max_turns=20)
DEAL = "card S1, card H1, card S2, card D2, card S3, card D3, card S5"  # 0: S1 S2 S3; 1: H1 D2 D3; pile S5


def game(**changes):
    """A game of ``PLAIN`` with ``changes``, registered under a fresh test name."""
    return build(melding, PLAIN, **changes)


def test_the_deal_turns_a_card_up_and_the_drawn_card_is_seen_by_the_drawer_only():
    state = play(game(), DEAL)
    assert state.observation_for(0)["hand"] == ["S1", "S2", "S3"] and state.observation_for(0)["pile_top"] == "S5"
    assert legal_names(state) == {"draw"}, "no taking the discard when the rules do not allow it"
    drawn = play(game(), f"{DEAL}, draw, card H4")
    assert "H4" in drawn.observation_for(0)["hand"] and "H4" not in drawn.information_state_string(1)


def test_which_melds_count_sets_runs_or_both():
    run = f"{DEAL}, draw, card H4"
    assert "meld S1 S2 S3" in legal_names(play(game(), run))
    assert "meld S1 S2 S3" in legal_names(play(game(melds="runs"), run))
    assert not any(m.startswith("meld") for m in legal_names(play(game(melds="sets"), run)))
    sets = "card S1, card S2, card H1, card D2, card D1, card D3, card S5, draw, card H4"  # 0: S1 H1 D1 H4
    assert legal_names(play(game(melds="sets"), sets)) >= {"meld S1 H1 D1"}
    assert not any(m.startswith("meld") for m in legal_names(play(game(melds="runs"), sets)))


def test_taking_the_top_discard_when_allowed():
    state = play(game(take_discard=True), f"{DEAL}, take")
    assert state.observation_for(0)["hand"] == ["S1", "S2", "S3", "S5"] and state.observation_for(1)["pile"] == 0
    assert "take" in state.information_state_string(1), "the other player sees the card taken"


def test_laying_off_onto_a_meld_on_the_table_and_going_out_by_it():
    moves = f"{DEAL}, draw, card S4, meld S1 S2 S3"
    assert "lay off S4" not in legal_names(play(game(), moves))
    state = play(game(layoff=True), f"{moves}, lay off S4")
    assert state.is_terminal() and state.observation_for(1)["table"] == [[0, ["S1", "S2", "S3", "S4"]]]
    assert state.scores() == [1 + 2 + 3 + 4, -(1 + 2 + 3)], "went out by the lay-off: no discard"


def test_going_out_by_the_discard_with_the_bonus_and_deadwood_counted_twice():
    moves = f"{DEAL}, draw, card H4, meld S1 S2 S3, discard H4"
    plain = play(game(), moves)
    assert plain.is_terminal() and plain.returns() == [6 + 6, -(6 + 6)]
    rich = play(game(out_bonus=5, deadwood=2), moves)
    assert rich.scores() == [6 + 5, -12] and rich.returns() == [23.0, -23.0]


def test_knocking_with_a_small_hand_ends_the_game():
    moves = f"{DEAL}, draw, card D1, meld S1 S2 S3"  # left: D1 (1) <= 4
    assert "knock" not in legal_names(play(game(), moves))
    state = play(game(knock_limit=4), f"{moves}, knock")
    assert state.is_terminal() and state.scores() == [6 - 1, -6]
    high = play(game(knock_limit=4), f"{DEAL}, draw, card H5, meld S1 S2 S3")
    assert "knock" not in legal_names(high), "a hand of 5 is over the limit of 4"


def test_the_turn_limit_and_an_empty_stock_end_the_game():
    limited = play(game(max_turns=1), f"{DEAL}, draw, card H4, discard H4")
    assert limited.is_terminal() and limited.returns() == [0.0, 0.0], "both hands 6"
    cards = [card_name(c, 5) for c in range(15)]
    big = ", ".join(f"card {c}" for c in cards[:13])  # hands of 6, one up, two in the stock
    stock = play(game(hand=6, melds="sets"), f"{big}, draw, card {cards[13]}, discard {cards[13]}")
    assert not stock.is_terminal() and stock.observation_for(1)["stock"] == 1
    ended = play(game(hand=6, melds="sets"), f"{big}, draw, card {cards[13]}, discard {cards[13]}, draw, "
                                              f"card {cards[14]}, discard {cards[14]}")
    assert ended.is_terminal() and ended.ended == ["stock", None]


@pytest.mark.parametrize("take", [False, True])
def test_the_other_hand_stays_hidden_and_resampling_keeps_the_information_state(take):
    g = game(take_discard=take, layoff=True, knock_limit=6, hand=4)
    rng = np.random.default_rng(3)
    varied = 0
    for state in random_states(g, 20, seed=4):
        if state.is_chance_node():
            continue
        player = state.current_player()
        seen = state.observation_string(player) + state.information_state_string(player)
        shown = {c for _, m in state.table for c in m} | set(state.pile)
        secret = [card_name(c, 5) for c in state.hands[1 - player] if c not in shown]
        taken = [a for a in state.history() if a == TAKE]
        if not taken:
            assert not any(f'"{c}"' in seen or f" {c}\"" in seen for c in secret), "the other hand leaked"
        draw = state.resample_from_infostate(player, lambda: float(rng.random()))
        assert draw.information_state_string(player) == state.information_state_string(player)
        varied += sorted(draw.hands[1 - player]) != sorted(state.hands[1 - player])
    assert varied > 20, "the other hand is redrawn, not copied"
