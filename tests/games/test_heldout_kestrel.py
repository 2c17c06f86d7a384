"""Kestrel, the held-out trick-taking game of ``experiments/heldout/``: scripted games follow and score as its
rulebook says, and random play reaches its rare rule branches only sometimes. What every held-out game must
pass (simulation, oracle, resampling, illegal actions, no specification in the rulebook) is in
test_heldout_games.py."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pyspiel

ROOT = Path(__file__).resolve().parents[2]
if str(ROOT) not in sys.path:  # the experiments folder is not installed
    sys.path.append(str(ROOT))
from experiments.heldout import kestrel  # noqa: E402
from tests.games.test_heldout_games import random_games  # noqa: E402


def card(name: str) -> int:
    return kestrel.SUITS.index(name[0]) * kestrel.RANKS + int(name[1]) - 1


def play(deal: str, moves: str) -> kestrel.KestrelState:
    """A hand from its deal (fifteen cards: alternately to player 0 and player 1, then the trump card) and the
    moves written as the rulebook writes them (``"bid 2; bid 4; play W5; ..."``)."""
    state = kestrel.KestrelGame().new_initial_state()
    for name in deal.split():
        state.apply_action(card(name))
    for move in [m.strip() for m in moves.split(";") if m.strip()]:
        player = state.current_player()
        (action,) = [a for a in state.legal_actions() if state.action_to_string(player, a) == move]
        state.apply_action(action)
    return state


def names(state: kestrel.KestrelState) -> list[str]:
    return [state.action_to_string(state.current_player(), a) for a in state.legal_actions()]


# Player 0: W1 W2 W3 R1 R2 F1 F7; player 1: W7 W6 R7 R6 R5 R4 F2; trump card F5 (fire is trump).
DEAL = "W1 W7 W2 W6 W3 R7 R1 R6 R2 R5 F1 R4 F7 F2 F5"


def test_resampling_respects_a_void_the_other_player_showed():
    """Player 1 does not follow a fire lead (fire is trump): it holds no fire in any resample, while its other
    cards do vary."""
    deal = "W1 W7 W2 W6 W3 R7 R1 R6 R2 R5 F1 R4 F7 R3 F5"  # player 1: W7 W6 R7 R6 R5 R4 R3, no fire
    state = play(deal, "bid 2; bid 3; play F1; play R3")
    sampler = pyspiel.UniformProbabilitySampler(5, 0.0, 1.0)
    hands = set()
    for _ in range(40):
        other = state.resample_from_infostate(0, sampler)
        assert other.information_state_string(0) == state.information_state_string(0)
        hands.add(tuple(sorted(kestrel.card_name(c) for c in other.hands[1])))
    assert len(hands) > 3 and all(len(hand) == 6 for hand in hands)
    assert not [c for hand in hands for c in hand if c.startswith("F")]  # F2 F3 F4 F6 are unseen, never drawn
    fresh = play(deal, "bid 2; bid 3")  # before the void showed, fire can be in the other hand
    assert any(c.startswith("F") for _ in range(40)
               for c in (kestrel.card_name(x) for x in fresh.resample_from_infostate(0, sampler).hands[1]))


def test_random_play_reaches_the_rare_branches_only_sometimes():
    """The 1-beats-7 exception decides a trick in some games, an exact bid happens, the last trick is taken."""
    one_beats_seven = exact = 0
    for path, final in random_games("kestrel", 200, seed=7):
        for state, action in zip(path, final.history()):
            if not state.is_chance_node() and action < kestrel.BID and state.trick:
                lead = state.trick[0][1]
                one_beats_seven += (kestrel.suit(action) == kestrel.suit(lead)
                                    and {kestrel.rank(action), kestrel.rank(lead)} == {1, kestrel.RANKS})
        exact += any(t == b for t, b in zip(final.tricks, final.bids))
        assert len(final.history()) == kestrel.MAX_GAME_LENGTH
    assert 10 < one_beats_seven < 100 and 20 < exact < 180


def test_the_second_bidder_may_not_bring_the_bids_to_seven():
    state = play(DEAL, "bid 3")
    assert names(state) == [f"bid {b}" for b in range(8) if b != 4]
    assert names(play(DEAL, "bid 0")) == [f"bid {b}" for b in range(7)]  # 7 is the forbidden one
    assert len(names(play(DEAL, ""))) == 8  # the first bidder has no restriction


def test_follow_suit_then_trump_then_anything():
    # player 0 leads W1: player 1 holds W7 W6, so it must play wind
    state = play(DEAL, "bid 2; bid 3; play W1")
    assert names(state) == ["play W6", "play W7"]
    # player 1 takes with W6? no: W1 beats only W7; W6 beats W1 (higher rank)
    state = play(DEAL, "bid 2; bid 3; play W1; play W6")
    assert json.loads(state.observation_string(0))["last_trick"]["won_by"] == "opponent"
    # player 1 leads R7; player 0 holds R1 R2: it must follow rain, and R1 takes the 7
    state = play(DEAL, "bid 2; bid 3; play W1; play W6; play R7")
    assert names(state) == ["play R1", "play R2"]
    state = play(DEAL, "bid 2; bid 3; play W1; play W6; play R7; play R1")
    obs = json.loads(state.observation_string(0))
    assert obs["last_trick"]["won_by"] == "me" and obs["tricks"] == {"me": 1, "opponent": 1}
    # player 0 leads W2: player 1 has W7 left, must play it, and W7 beats W2
    state = play(DEAL, "bid 2; bid 3; play W1; play W6; play R7; play R1; play W2; play W7")
    # player 1 leads R6; player 0 has R2 (must follow)
    state = play(DEAL, "bid 2; bid 3; play W1; play W6; play R7; play R1; play W2; play W7; play R6")
    assert names(state) == ["play R2"]
    # later, out of rain and wind, player 0 must trump: it holds W3 F1 F7 when R5 is led
    state = play(DEAL, "bid 2; bid 3; play W1; play W6; play R7; play R1; play W2; play W7; play R6; play R2; "
                       "play R5")
    assert names(state) == ["play F1", "play F7"]  # no rain: trump (fire), though W3 is in hand


def test_a_whole_hand_scores_tricks_the_exact_bid_and_the_last_trick():
    moves = ("bid 2; bid 3; play W1; play W6; play R7; play R1; play W2; play W7; play R6; play R2; "
             "play R5; play F7; play W3; play F2; play R4; play F1")
    # tricks: W6 (p1), R1 (p0), W7 (p1), R6 (p1), F7 (p0), F2 trumps W3 (p1), R4 led: p0 has F1 only: trump (p0)
    state = play(DEAL, moves)
    assert state.is_terminal() and state.tricks == [3, 4]
    # player 0: 3 tricks, bid 2, last trick +2 = 5; player 1: 4 tricks, bid 3: 4
    assert state.scores() == [5, 4] and state.returns() == [1.0, -1.0]
    assert json.loads(state.observation_string(1))["scores"] == {"me": 4, "opponent": 5}


def test_an_exact_bid_scores_ten_more():
    moves = ("bid 3; bid 3; play W1; play W6; play R7; play R1; play W2; play W7; play R6; play R2; "
             "play R5; play F7; play W3; play F2; play R4; play F1")
    state = play(DEAL, moves)
    assert state.scores() == [3 + 10 + 2, 4] and state.returns() == [11.0, -11.0]
