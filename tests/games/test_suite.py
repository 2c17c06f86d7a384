"""The suite of games beyond the first thirteen: `cwm games` lists at least 24 with the stated mix, and each
suite game's rules say what its engine does, on positions played through the engine."""

from __future__ import annotations

import json

import numpy as np
import pyspiel
import pytest

from cwm import games
from cwm.agents.base import ISMCTSAgent, MCTSAgent, RandomAgent
from cwm.cli import main
from cwm.games.suite import SUITE
from planners.config import SearchConfig

SUITE_NAMES = [spec.name for spec in SUITE]


def _play(name: str, actions: list[str]):
    """The ground-truth state after ``actions`` (action strings, chance outcomes included), each legal."""
    state = games.load_game(name).new_initial_state()
    for text in actions:
        player = state.current_player()
        ids = [a for a, _ in state.chance_outcomes()] if state.is_chance_node() else state.legal_actions()
        by_text = {state.action_to_string(player, a): a for a in ids}
        assert text in by_text, f"{text!r} is not legal here; legal: {sorted(by_text)}"
        state.apply_action(by_text[text])
    return state


def test_cwm_games_lists_at_least_24_with_the_mix(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["games", "--json"]) == 0
    facts = json.loads(capsys.readouterr().out)
    assert len(facts) >= 24
    assert sum(f["players"] >= 3 for f in facts) >= 4
    assert sum(f["asymmetric"] is True for f in facts) >= 2
    assert {f["name"] for f in facts} >= set(SUITE_NAMES)
    assert all(f["rules"] == ["spec", "prose"] for f in facts if f["name"] in SUITE_NAMES)
    assert main(["games"]) == 0
    header, _, *rows = capsys.readouterr().out.splitlines()
    column = header.index(" asym ") + 1
    flagged = {row.split()[0] for row in rows if row[column:column + 4].strip() == "yes"}
    assert flagged == {f["name"] for f in facts if f["asymmetric"]}


@pytest.mark.parametrize("name, player, quoted", [
    ("breakthrough", 0, {74: "a5a4", 76: "a5b4", 293: "a2b1*"}),
    ("fox_and_hounds", 0, {4: "b1-a2", 5: "b1-c2", 130: "c6-b5", 131: "c6-d5"}),
    ("dots_and_boxes", 1, {13: "P2(v,0,1)", 23: "P2(v,2,3)", 11: "P2(h,3,2)"}),
    ("hearts", pyspiel.PlayerId.CHANCE, {52: "No Pass", 55: "Right", 0: "2C", 51: "AS"}),
    ("crazy_eights_3p", 0, {0: "Play C2", 51: "Play SA", 52: "Draw", 53: "Pass", 57: "Nominate suit S"}),
])
def test_the_action_ids_the_spec_states_are_the_engines(name: str, player: int, quoted: dict[int, str]) -> None:
    state = games.load_game(name).new_initial_state()
    text = games.rules_text(name)
    for action, string in quoted.items():
        assert state.action_to_string(player, action) == string
        assert f"`{string}`" in text or f" {action}" in text


@pytest.mark.parametrize("name", SUITE_NAMES)
def test_the_spec_quotes_the_engines_action_strings(name: str) -> None:
    """Every action string the spec tier puts in backticks as an action of a random game's first moves is one
    the engine produces (a sample: the first legal strings met along a seeded random game)."""
    text = games.rules_text(name)
    state = games.load_game(name).new_initial_state()
    seen: set[str] = set()
    for step in range(60):
        if state.is_terminal():
            break
        player = state.current_player()
        ids = [a for a, _ in state.chance_outcomes()] if state.is_chance_node() else state.legal_actions()
        seen |= {state.action_to_string(player, a) for a in ids}
        state.apply_action(ids[(7 * step + 3) % len(ids)])
    quoted = [s for s in seen if f"`{s}`" in text]
    assert quoted, f"{name}: the spec quotes none of the engine's action strings {sorted(seen)[:8]}"


# --- kuhn_poker_3p


def test_kuhn_3p_a_late_bet_reopens_the_first_player_and_the_best_caller_wins() -> None:
    state = _play("kuhn_poker_3p", ["Deal:1", "Deal:3", "Deal:2", "Pass", "Bet", "Bet"])
    assert not state.is_terminal() and state.current_player() == 0  # player 0 passed, must answer the bet
    assert state.observation_string(2) == "2122"
    state.apply_action(0)  # player 0 folds
    assert state.is_terminal() and state.returns() == [-1.0, 3.0, -2.0]


def test_kuhn_3p_nobody_bets_highest_card_takes_the_antes() -> None:
    state = _play("kuhn_poker_3p", ["Deal:0", "Deal:1", "Deal:3", "Pass", "Pass", "Pass"])
    assert state.is_terminal() and state.returns() == [-1.0, -1.0, 2.0]
    assert _play("kuhn_poker_3p", ["Deal:2", "Deal:1"]).observation_string(2) == ""


# --- pig_3p


def test_pig_3p_a_one_loses_the_turn_total_and_twenty_forces_a_stop() -> None:
    state = _play("pig_3p", ["roll", "Roll 6", "roll", "Roll 1"])
    assert state.observation_string(0) == "Scores: 0 0 0, Turn total: 0\nCurrent player: 1\n"
    state = _play("pig_3p", ["stop", "roll", "Roll 6", "roll", "Roll 6", "roll", "Roll 5", "roll", "Roll 3"])
    assert state.current_player() == 1 and [state.action_to_string(1, a) for a in state.legal_actions()] == ["stop"]
    state.apply_action(1)
    assert state.is_terminal() and state.returns() == [-0.5, 1.0, -0.5]
    assert state.observation_string(0).endswith("Current player: 2\n")


# --- goofspiel_3p


def test_goofspiel_3p_a_tied_top_bid_discards_the_card_and_the_last_turn_plays_itself() -> None:
    state = _play("goofspiel_3p", ["Deal 3", "[P0]Bid: 4", "[P1]Bid: 4"])
    assert state.observation_string(1).startswith("Current player: 2\nObserver's action this turn: 3\n")
    assert "Observer's action" not in state.observation_string(2)
    state = _play("goofspiel_3p", ["Deal 3", "[P0]Bid: 4", "[P1]Bid: 4", "[P2]Bid: 1"])
    assert "Win sequence: -3 \nPoints: 0 0 0 \n" in state.observation_string(0)
    state = _play("goofspiel_3p", [
        "Deal 5", "[P0]Bid: 5", "[P1]Bid: 1", "[P2]Bid: 2",
        "Deal 4", "[P0]Bid: 1", "[P1]Bid: 5", "[P2]Bid: 3",
        "Deal 3", "[P0]Bid: 2", "[P1]Bid: 2", "[P2]Bid: 4",
        "Deal 2", "[P0]Bid: 3", "[P1]Bid: 3", "[P2]Bid: 1"])  # the fifth turn (card 1, bids 4 4 5) is automatic
    assert state.is_terminal()
    assert state.observation_string(0).endswith("Win sequence: 0 1 2 -3 2 \nPoints: 5 4 4 \n")
    assert state.returns() == [1.0, -0.5, -0.5]


# --- dots_and_boxes


def test_dots_and_boxes_closing_a_box_claims_it_and_moves_again() -> None:
    state = _play("dots_and_boxes", ["P1(h,0,0)", "P2(v,0,0)", "P1(h,1,0)"])
    assert state.current_player() == 1
    state.apply_action(13)  # v,0,1 closes box (0,0)
    assert state.current_player() == 1 and state.observation_string(0).split("\n")[1] == "│ 2 │        "
    state.apply_action(1)  # h,0,1 closes nothing: the turn passes
    assert state.current_player() == 0


# --- fox_and_hounds (cwm's own engine, game_rules/fox_and_hounds.py)


def test_fox_and_hounds_passes_openspiels_simulation_test() -> None:
    pyspiel.random_sim_test(games.load_game("fox_and_hounds"), num_sims=10, serialize=True, verbose=False)


def test_fox_and_hounds_hounds_step_forward_only_and_the_fox_any_diagonal() -> None:
    state = _play("fox_and_hounds", [])
    assert [state.action_to_string(0, a) for a in state.legal_actions()] == ["b1-a2", "b1-c2", "d1-c2", "d1-e2",
                                                                              "f1-e2"]
    state = _play("fox_and_hounds", ["b1-c2", "c6-d5", "c2-d3", "d5-c4"])
    assert "d3-c2" not in [state.action_to_string(0, a) for a in state.legal_actions()]  # no step back
    assert {"c4-b5", "c4-d5", "c4-b3"} == {state.action_to_string(1, a) for a in _play(
        "fox_and_hounds", ["b1-c2", "c6-d5", "c2-d3", "d5-c4", "f1-e2"]).legal_actions()}  # d3 is taken


def test_fox_and_hounds_the_fox_wins_on_rank_1_and_the_hounds_by_cornering_it() -> None:
    run = ["d1-e2", "c6-b5", "e2-f3", "b5-a4", "f1-e2", "a4-b3", "b1-c2", "b3-a2", "c2-d3", "a2-b1"]
    state = _play("fox_and_hounds", run)
    assert state.is_terminal() and state.returns() == [-1.0, 1.0]
    state = _play("fox_and_hounds", ["b1-a2", "c6-b5", "a2-b3", "b5-a6", "b3-c4", "a6-b5", "d1-c2", "b5-a6",
                                     "c4-b5"])
    assert state.is_terminal() and state.returns() == [1.0, -1.0]  # the fox on a6 has no empty square


# --- contraband (cwm's own engine, game_rules/contraband.py)


def test_hearts_wrapper_passes_openspiels_simulation_test() -> None:
    pyspiel.random_sim_test(games.load_game("hearts"), num_sims=2, serialize=True, verbose=False)


def test_contraband_passes_openspiels_simulation_test() -> None:
    pyspiel.random_sim_test(games.load_game("contraband"), num_sims=10, serialize=True, verbose=False)


def test_contraband_scores_deliveries_seizures_and_empty_searches() -> None:
    state = _play("contraband", ["pack 2", "pass", "pack 2", "inspect", "pack 0", "inspect", "pack 1"])
    assert [state.action_to_string(1, a) for a in state.legal_actions()] == ["pass"]  # no inspection left
    state.apply_action(state.legal_actions()[0])
    assert state.is_terminal() and state.returns() == [2 - 2 + 1 + 1, -2.0]
    stock_out = _play("contraband", ["pack 2", "pass", "pack 2", "pass"])
    assert [stock_out.action_to_string(0, a) for a in stock_out.legal_actions()] == ["pack 0", "pack 1"]


def test_contraband_the_inspector_never_sees_what_passed() -> None:
    seen = {_play("contraband", [f"pack {n}", "pass", "pack 1"]).observation_string(1) for n in range(3)}
    assert seen == {'{"round":2,"inspections_left":2,"log":[{"inspected":false,"found":null}]}'}
    smuggler = {_play("contraband", [f"pack {n}", "pass", "pack 1"]).observation_string(0) for n in range(3)}
    assert len(smuggler) == 3


# --- crazy_eights_3p

C8_DEAL = ["Decide Player 0 to be the dealer"] + [f"Deal {c}" for c in [
    "SA", "S2", "S3", "HA", "H2", "H3", "DA", "D2", "D3", "CA", "C2", "C3", "SK", "HK", "DK"]]


def test_crazy_eights_an_eight_is_turned_back_and_five_draws_allow_a_pass() -> None:
    state = _play("crazy_eights_3p", C8_DEAL + ["Deal C8"])
    assert state.is_chance_node() and len(state.chance_outcomes()) == 52 - 15  # the eight went back
    state = _play("crazy_eights_3p", C8_DEAL + ["Deal C8", "Deal D9"])
    assert state.current_player() == 1  # the player after the dealer
    assert state.observation_string(1).split("\n")[4] == "Suit S:            KA"
    drawn = C8_DEAL + ["Deal D9"] + [x for c in ["C4", "C5", "C6", "C7", "S4"] for x in ("Draw", f"Deal {c}")]
    state = _play("crazy_eights_3p", drawn[:-1])
    assert state.observation_string(0) == ""  # nobody sees anything while a drawn card is dealt
    state = _play("crazy_eights_3p", drawn)
    assert [state.action_to_string(1, a) for a in state.legal_actions()] == ["Play DA", "Pass"]


def _penalty(card: str) -> int:
    """The spec's penalty of a card left in hand, from its stated examples and rules."""
    rank, suit = "23456789TJQKA".index(card[1]), "CDHS".index(card[0])
    return 50 if card[1] == "8" else 10 if card[1] in "JQKA" else 4 * rank + suit + 2


def test_crazy_eights_penalties_are_the_cards_left_in_hand() -> None:
    assert [_penalty(c) for c in ["C2", "S2", "H5", "D9", "ST"]] == [2, 5, 16, 31, 37]  # the spec's examples
    game, rng = games.load_game("crazy_eights_3p"), np.random.default_rng(1)
    for _ in range(4):
        state = game.new_initial_state()
        while not state.is_terminal():
            if state.is_chance_node():
                actions, probs = zip(*state.chance_outcomes())
                state.apply_action(int(rng.choice(actions, p=probs)))
            else:
                state.apply_action(int(rng.choice(state.legal_actions())))
        for player in range(3):
            suits = state.observation_string(player).split("\n")[1:5]
            held = [line[5] + rank for line in suits for rank in line[8:] if rank != " "]
            assert state.returns()[player] == -sum(_penalty(c) for c in held)



# --- breakthrough


def test_breakthrough_captures_only_diagonally_and_the_far_row_wins() -> None:
    state = _play("breakthrough", ["e5e4", "e2e3"])
    moves = [state.action_to_string(0, a) for a in state.legal_actions()]
    assert "e4e3" not in moves and "e4e3*" not in moves  # straight ahead is blocked, never a capture
    state = _play("breakthrough", ["e5e4", "d2d3", "e4d3*"])
    assert state.observation_string(1).split("\n")[3] == "3...b.."
    state = _play("breakthrough", ["a5a4", "b2b3", "a4a3", "b3b4", "a3b2", "b4c5*"])
    assert not state.is_terminal() and state.observation_string(0).split("\n")[1] == "5.bwbbb"
    state = _play("breakthrough", ["a5a4", "b2b3", "a4a3", "b3b4", "a3b2", "b4c5*", "b2a1*"])
    assert state.is_terminal() and state.returns() == [1.0, -1.0]


# --- mancala


def test_mancala_extra_move_from_the_store_and_capture_opposite() -> None:
    state = _play("mancala", ["3"])
    assert state.current_player() == 0  # the last seed fell into the store
    state = _play("mancala", ["5", "8"])  # pit 5 is empty, pit 9 opposite holds 6
    assert state.observation_string(0).split("\n")[:3] == ["-5-5-5-5-6-0-", "0-----------1", "-4-4-4-4-0-5-"]
    state.apply_action(1)  # 4 seeds into 2..5: the last lands in empty pit 5 and takes pit 9's six
    assert state.observation_string(0).split("\n") == ["-5-5-5-5-0-0-", "0-----------8", "-0-5-5-5-0-5-",
                                                       "Current player: 1", "Move number: 3"]


# --- hearts

SUIT_DEAL = ["No Pass"] + ["23456789TJQKA"[n // 4] + "CDHS"[n % 4] for n in range(52)]  # card n to player n mod 4


def test_hearts_first_trick_rules_and_a_moon_shot() -> None:
    state = _play("hearts", SUIT_DEAL)  # player 0 holds every club, 1 diamonds, 2 hearts, 3 spades
    assert [state.action_to_string(0, a) for a in state.legal_actions()] == ["2C"]
    state = _play("hearts", SUIT_DEAL + ["2C"])
    assert len(state.legal_actions()) == 13  # no club to follow: any diamond
    state = _play("hearts", SUIT_DEAL + ["2C", "2D"])
    assert len(state.legal_actions()) == 13  # nothing but hearts: a heart is allowed on the first trick
    state = _play("hearts", SUIT_DEAL + ["2C", "2D", "2H"])
    assert "QS" not in [state.action_to_string(3, a) for a in state.legal_actions()] and len(state.legal_actions()) == 12
    while not state.is_terminal():  # player 0 wins every trick with clubs and takes all 26 points
        state.apply_action(state.legal_actions()[0])
    assert state.returns() == [26.0, 0.0, 0.0, 0.0]


def test_hearts_passed_cards_travel_in_the_drawn_direction() -> None:
    deal = ["Across"] + SUIT_DEAL[1:]
    state = _play("hearts", deal + ["2C", "3C", "4C", "2D", "3D", "4D", "2H", "3H", "4H", "2S", "3S"])
    view = games.observe(games.resolve("hearts"), state, 2)
    assert view["received_cards"][2] == ["2C", "3C", "4C"] and view["passed_cards"][3] == ["XX", "XX"]
    state.apply_action(state.legal_actions()[0])
    view = games.observe(games.resolve("hearts"), state, 2)
    assert view["phase"] == "Play" and {"2C", "3C", "4C"} <= set(view["hands"][2])
    assert view["current_player"] == "Player_2"  # the 2C went across to player 2, who leads it


# --- oware


def test_oware_captures_a_two_or_three_and_stops_at_the_first_house_that_is_not() -> None:
    state = _play("oware", ["A", "c", "E", "b"])
    assert state.observation_string(0) == "0 | 0 2 | 0 5 5 5 0 5 5 0 2 7 6 6"
    state.apply_action(3)  # D: five seeds into houses 4..8; house 8 now holds 3, house 7 holds 1
    assert state.observation_string(0) == "1 | 3 2 | 0 5 5 0 1 6 6 1 0 7 6 6"
    assert [state.action_to_string(1, a) for a in state.legal_actions()] == ["a", "b", "d", "e", "f"]


# --- ground-truth search on cwm's own engines


def _search_score(name: str, agent: type, seat: int, games_played: int, seed: int) -> float:
    """The mean return of ``agent`` (100 simulations, one rollout) in ``seat`` against random play (seeded; the
    games it is used on have no chance nodes)."""
    total = 0.0
    for i in range(games_played):
        agents = [RandomAgent(seed=seed + 1000 + i), RandomAgent(seed=seed + 2000 + i)]
        agents[seat] = agent(SearchConfig(num_simulations=100, rollouts=1), seed=seed + i)
        state = games.load_game(name).new_initial_state()
        while not state.is_terminal():
            state.apply_action(agents[state.current_player()].step(state.clone()))
        total += state.returns()[seat]
    return total / games_played


@pytest.mark.parametrize("seat, bar", [(0, 0.2), (1, 1.0)], ids=["hounds", "fox"])
def test_fox_and_hounds_search_beats_random_play_in_either_seat(seat: int, bar: float) -> None:
    """Random hounds win 17% of games against a random fox (3,000 games): a mean return of -0.66 for the
    hounds, +0.66 for the fox. MCTS scored 0.6 as the hounds (4 wins in 5) and 1.0 as the fox (5 in 5) for
    match seeds 7, 8 and 9: both above what random play gets in that seat."""
    assert _search_score("fox_and_hounds", MCTSAgent, seat, 5, seed=7) >= bar


def test_contraband_search_smuggles_more_than_random_packing() -> None:
    """A random smuggler against a random inspector averages +1.14 (4,000 games); ISMCTS as the smuggler
    averaged 2.5 over 20 games for match seeds 7 and 8. (As the inspector ISMCTS does no better than random:
    it plans against a smuggler that adapts, which a random one does not.)"""
    assert _search_score("contraband", ISMCTSAgent, 0, 20, seed=7) > 1.8
