"""Hand of war rules, pinned on rigged deals and readable action strings."""

from __future__ import annotations

import json

import numpy as np
import pyspiel
import pytest

from cwm import games
from game_rules.hand_of_war import card_name

GAME = games.load_game("hand_of_war")


def deal(p0: str, p1: str) -> list[str]:
    """Deal actions giving player 0 the pile ``p0`` and player 1 the pile ``p1`` (top card first)."""
    out = []
    for a, b in zip(p0.split(), p1.split()):
        out += [f"deal {a}", f"deal {b}"]
    return out


def play(actions: list[str]):
    state = GAME.new_initial_state()
    for name in actions:
        state.apply_action(state.string_to_action(name))
    return state


def battles(*pairs: str) -> list[str]:
    """``"AS KD"`` -> player 0 plays AS, then player 1 plays KD."""
    out = []
    for pair in pairs:
        a, b = pair.split()
        out += [f"play {a}", f"play {b}"]
    return out


def obs(state, player: int) -> dict:
    return json.loads(state.observation_string(player))


def legal(state) -> list[str]:
    return [state.action_to_string(state.current_player(), a) for a in state.legal_actions()]


ORDERED = deal("AS KS QS JS AH KH QH JH", "AD KD QD JD AC KC QC JC")
DECISIVE_THEN_TIE = deal("AS AH AD JS JH KS QS QH", "KH KC QD AC QC KD JD JC")
CHAIN = deal("KS QS AS JS AH JH KH QH", "KD QD JD AD KC AC QC JC")


def test_deal_is_uniform_over_the_cards_left():
    state = GAME.new_initial_state()
    outcomes = state.chance_outcomes()
    assert len(outcomes) == 16 and all(p == pytest.approx(1 / 16) for _, p in outcomes)
    state = play(["deal QH", "deal AS"])
    names = [state.action_to_string(-1, a) for a, _ in state.chance_outcomes()]
    assert len(names) == 14 and "deal QH" not in names and "deal AS" not in names


def test_after_the_deal_each_hand_is_the_top_three_of_its_pile():
    state = play(ORDERED)
    assert state.current_player() == 0
    assert obs(state, 0) == {
        "my_hand": ["AS", "KS", "QS"], "my_pick": None, "opponent_picked": False, "opponent_hand_size": 3,
        "my_draw_pile": 5, "opponent_draw_pile": 5, "my_win_pile": 0, "opponent_win_pile": 0,
        "pot_face_up": [], "pot_face_down": 0, "last_battle": None}
    assert obs(state, 1)["my_hand"] == ["AD", "KD", "QD"]
    assert legal(state) == ["play AS", "play KS", "play QS"]


def test_cards_of_the_same_rank_are_distinct_actions():
    state = play(deal("AS AH AD AC KS KH KD KC", "QS QH QD QC JS JH JD JC"))
    assert legal(state) == ["play AS", "play AH", "play AD"]


def test_higher_rank_takes_both_cards_and_hands_refill():
    state = play(ORDERED + battles("AS KD"))
    me, them = obs(state, 0), obs(state, 1)
    assert me["my_win_pile"] == 2 and them["opponent_win_pile"] == 2 and them["my_win_pile"] == 0
    assert me["my_hand"] == ["KS", "QS", "JS"] and them["my_hand"] == ["AD", "QD", "JD"]
    assert me["my_draw_pile"] == 4 and me["pot_face_up"] == [] and me["pot_face_down"] == 0
    assert me["last_battle"] == {"my_card": "AS", "opponent_card": "KD", "result": "won"}
    assert them["last_battle"] == {"my_card": "KD", "opponent_card": "AS", "result": "lost"}


def test_tie_starts_a_showdown_burning_one_draw_card_each():
    state = play(ORDERED + battles("KS KD"))
    me = obs(state, 0)
    assert me["pot_face_up"] == ["KS", "KD"] and me["pot_face_down"] == 2
    assert me["last_battle"]["result"] == "tie" and me["my_win_pile"] == 0
    # JS and JD were burned (top of the draw piles); the refill then drew AH and AC.
    assert me["my_hand"] == ["AS", "AH", "QS"] and obs(state, 1)["my_hand"] == ["AD", "AC", "QD"]
    assert me["my_draw_pile"] == 3
    state.apply_action(state.string_to_action("play AS"))
    state.apply_action(state.string_to_action("play QD"))
    assert obs(state, 0)["my_win_pile"] == 6 and obs(state, 0)["pot_face_up"] == []
    assert sorted(json.loads(str(state))["win_piles"][0]) == sorted(["KS", "KD", "JS", "JD", "AS", "QD"])


def test_showdown_chain_winner_takes_all_ten_cards():
    state = play(CHAIN + battles("KS KD", "QS QD"))
    assert obs(state, 1)["pot_face_up"] == ["KS", "KD", "QS", "QD"] and obs(state, 1)["pot_face_down"] == 4
    state = play(CHAIN + battles("KS KD", "QS QD", "AS JD"))
    me = obs(state, 0)
    assert me["my_win_pile"] == 10 and me["opponent_win_pile"] == 0 and me["pot_face_down"] == 0
    assert me["my_hand"] == ["AH", "KH", "QH"] and me["my_draw_pile"] == 0 and not state.is_terminal()


def test_burned_cards_are_never_seen():
    state = play(CHAIN + battles("KS KD", "QS QD", "AS JD"))
    for p in (0, 1):
        seen = state.information_state_string(p)
        for burned in ("JS", "AD", "JH", "AC"):
            assert f'"{burned}"' not in seen and f"play {burned}" not in seen


def test_a_tie_with_empty_draw_piles_ends_the_game_and_the_pot_is_lost():
    state = play(DECISIVE_THEN_TIE + battles("AS KH", "AH KC", "AD QD", "JS AC", "JH QC"))
    assert not state.is_terminal() and obs(state, 0)["my_draw_pile"] == 0
    state = play(DECISIVE_THEN_TIE + battles("AS KH", "AH KC", "AD QD", "JS AC", "JH QC", "KS KD"))
    assert state.is_terminal() and state.returns() == [1.0, -1.0]
    me = obs(state, 0)
    assert (me["my_win_pile"], me["opponent_win_pile"]) == (6, 4) and me["my_hand"] == ["QS", "QH"]


def test_player_with_all_sixteen_cards_wins():
    state = play(deal("AS AH AD AC KS KH KD KC", "QS QH QD QC JS JH JD JC")
                 + battles("AS QS", "AH QH", "AD QD", "AC QC", "KS JS", "KH JH", "KD JD", "KC JC"))
    assert state.is_terminal() and state.returns() == [1.0, -1.0]
    assert obs(state, 0)["my_win_pile"] == 16 and obs(state, 1)["my_hand"] == []


def test_equal_win_piles_are_a_draw():
    state = play(deal("AS AH JS JH KS QS KH QH", "KD KC QD QC JD AD JC AC")
                 + battles("AS KD", "AH KC", "JS QD", "JH QC", "KS JD", "QS AD", "KH JC", "QH AC"))
    assert state.is_terminal() and state.returns() == [0.0, 0.0]
    assert obs(state, 0)["my_win_pile"] == obs(state, 0)["opponent_win_pile"] == 8


def test_only_hand_cards_can_be_played():
    state = play(ORDERED)  # AH is in player 0's draw pile, AD in player 1's hand
    assert "play AH" not in legal(state) and "play AD" not in legal(state)
    state = play(ORDERED + ["play AS"])
    assert legal(state) == ["play AD", "play KD", "play QD"]


# -- information hygiene -----------------------------------------------------------------------------


def test_player0_pick_is_hidden_from_player1():
    views = set()
    for pick in ("play AS", "play KS", "play QS"):
        state = play(ORDERED + [pick])
        assert state.current_player() == 1
        assert obs(state, 0)["my_pick"] == pick.split()[1] and obs(state, 1)["opponent_picked"]
        assert obs(state, 1)["my_pick"] is None
        views.add((state.observation_string(1), state.information_state_string(1),
                   tuple(state.observation_tensor(1)), tuple(state.information_state_tensor(1))))
    assert len(views) == 1


def test_hidden_cards_never_reach_a_players_view():
    """In random games, no card in the opponent's hand, a pending pick, a draw pile or the burned pile
    appears in a player's observation or information state."""
    rng = np.random.default_rng(5)
    for _ in range(20):
        state = GAME.new_initial_state()
        while not state.is_terminal():
            for p in (0, 1):
                hidden = list(state.hand[1 - p]) + state.draw[0] + state.draw[1] + state.pot_down
                if state.pick[1 - p] is not None:
                    hidden.append(state.pick[1 - p])
                for text in (state.observation_string(p), state.information_state_string(p)):
                    assert not any(f'"{card_name(c)}"' in text or f"play {card_name(c)}" in text for c in hidden)
            actions = [a for a, _ in state.chance_outcomes()] if state.is_chance_node() else state.legal_actions()
            state.apply_action(actions[rng.integers(len(actions))])


def test_resampling_redraws_player0s_hidden_pick_from_its_hand():
    sampler = pyspiel.UniformProbabilitySampler(0, 0.0, 1.0)
    state = play(ORDERED + ["play KS"])
    picks = set()
    for _ in range(80):
        world = state.resample_from_infostate(1, sampler)
        assert world.information_state_string(1) == state.information_state_string(1)
        picks.add(json.loads(str(world))["picks"][0])
        assert json.loads(str(world))["hands"][1] == ["AD", "KD", "QD"]  # player 1's own cards stay put
    assert len(picks) >= 3 and "AD" not in picks


def test_resampling_keeps_revealed_cards_and_redeals_the_rest():
    sampler = pyspiel.UniformProbabilitySampler(1, 0.0, 1.0)
    state = play(CHAIN + battles("KS KD", "QS QD", "AS JD"))
    hands = set()
    for _ in range(40):
        world = json.loads(str(state.resample_from_infostate(0, sampler)))
        assert world["hands"][0] == ["AH", "KH", "QH"]
        assert {"KD", "QD", "JD"} <= set(world["win_piles"][0])
        hands.add(tuple(world["hands"][1]))
    assert len(hands) > 5
