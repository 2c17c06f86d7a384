"""Conformance of the novel-game engines: OpenSpiel's own simulation test, our oracle checks, resampling,
and the facts each rules file states, checked against random games."""

from __future__ import annotations

import json
import re

import numpy as np
import pyspiel
import pytest

from cwm import checks, games
from cwm.games import oracle, trajectories
from game_rules import gen_chess, hand_of_war, quadranto

NOVEL = ["quadranto", "hand_of_war", "gen_chess", "gen_tic_tac_toe"]
IMPERFECT = ["quadranto", "hand_of_war"]


def facts(name: str) -> dict:
    """The JSON block under the ``## Facts`` heading of a game's rules file."""
    text = games.rules_text(name)
    match = re.search(r"## Facts\s+```json\n(.*?)\n```", text, re.S)
    assert match, f"{name}: rules file has no ## Facts json block"
    return json.loads(match.group(1))


def random_games(name: str, n: int, seed: int = 0):
    """Yields (states along the game, final state) of ``n`` uniformly random games."""
    game = games.load_game(name)
    rng = np.random.default_rng(seed)
    for _ in range(n):
        state, path = game.new_initial_state(), []
        while not state.is_terminal():
            path.append(state.clone())
            if state.is_chance_node():
                outcomes = state.chance_outcomes()
                action = outcomes[rng.choice(len(outcomes), p=[p for _, p in outcomes])][0]
            else:
                legal = state.legal_actions()
                action = legal[rng.integers(len(legal))]
            state.apply_action(action)
        yield path, state


@pytest.mark.parametrize("name", NOVEL)
def test_registered_and_described(name):
    spec = games.resolve(name)
    assert spec.novel and spec.rules == f"{name}.md"
    assert spec.information == ("imperfect" if name in IMPERFECT else "perfect")
    assert "## Outcome statistics" in games.rules_text(name)


@pytest.mark.parametrize("name", NOVEL)
def test_openspiel_random_sim_test(name):
    pyspiel.random_sim_test(games.load_game(name), num_sims=10, serialize=True, verbose=False)


@pytest.mark.parametrize("name", NOVEL)
def test_oracle_passes_every_check(name):
    report = checks.run_checks(oracle.oracle_model(name), trajectories.collect(name, 5, seed=0))
    assert report.all_passed, report.summary()
    assert report.transitions_total > 0
    play = checks.random_play_checks(oracle.oracle_model(name), num_games=3, seed=0)
    assert play.all_passed, play.summary()


@pytest.mark.parametrize("name", ["quadranto", "hand_of_war", "gen_chess"])
def test_observations_are_json_and_symmetric_in_keys(name):
    keys = facts(name)["observation_keys"]
    for path, final in random_games(name, 5, seed=1):
        for state in [*path, final]:
            for p in (0, 1):
                assert list(json.loads(state.observation_string(p))) == keys
                info = json.loads(state.information_state_string(p))
                assert isinstance(info, dict)


@pytest.mark.parametrize("name", IMPERFECT)
@pytest.mark.parametrize("seed", [0, 1])
def test_resample_keeps_the_information_state(name, seed):
    """Every resampled state gives the player the same information state, and resampling does vary."""
    sampler = pyspiel.UniformProbabilitySampler(seed, 0.0, 1.0)
    changed = checked = 0
    for path, final in random_games(name, 8, seed=seed):
        for state in [*path, final]:
            for p in (0, 1):
                other = state.resample_from_infostate(p, sampler)
                assert other.information_state_string(p) == state.information_state_string(p), state.history()
                assert other.observation_string(p) == state.observation_string(p)
                if not state.is_terminal() and state.current_player() == p:
                    assert other.legal_actions() == state.legal_actions()
                changed += other.history() != state.history()
                checked += 1
    assert checked > 100 and changed > checked // 10


@pytest.mark.parametrize("name", NOVEL)
def test_rules_file_facts_hold_in_random_play(name):
    f = facts(name)
    game = games.load_game(name)
    assert game.num_players() == f["num_players"]
    assert game.num_distinct_actions() == f["num_distinct_actions"]
    assert game.max_game_length() == f["max_game_length"]
    seen_returns = set()
    for path, final in random_games(name, 30, seed=2):
        first = next(s for s in path if not s.is_chance_node())
        assert first.current_player() == f["first_player"]
        assert len(final.history()) <= f["max_game_length"]
        seen_returns.add(tuple(final.returns()))
        _check_board_facts(name, f, path, final)
    assert seen_returns <= {tuple(r) for r in f["returns"]}


def test_quadranto_board_size_fact_matches_the_squares_played_on():
    """board_rows x board_cols: every square a token stands on lies inside, and random play reaches them all."""
    f = facts("quadranto")
    seen = set()
    for path, final in random_games("quadranto", 30, seed=5):
        for state in [*path, final]:
            seen.update(tuple(json.loads(state.observation_string(p))["my_square"] or ()) for p in (0, 1))
    seen.discard(())  # before placement
    assert seen == {(r, c) for r in range(f["board_rows"]) for c in range(f["board_cols"])}


def test_hand_of_war_card_and_pile_facts_match_the_engine():
    """ranks (highest first) and suits name every card played; each draw pile starts with draw_pile_size."""
    f = facts("hand_of_war")
    game = games.load_game("hand_of_war")
    assert game.max_chance_outcomes() == f["max_chance_outcomes"] == f["num_cards"]
    assert f["num_cards"] == len(f["ranks"]) * len(f["suits"]) == 2 * f["draw_pile_size"]
    played, results = set(), set()
    for path, final in random_games("hand_of_war", 30, seed=6):
        dealt = path[f["num_cards"]]  # the first pick: the deal is done and both hands are drawn
        for p in (0, 1):
            view = json.loads(dealt.observation_string(p))
            assert len(view["my_hand"]) + view["my_draw_pile"] == f["draw_pile_size"]
            assert view["opponent_hand_size"] + view["opponent_draw_pile"] == f["draw_pile_size"]
        for state in [*path[f["num_cards"]:], final]:
            if not state.is_terminal():
                played.update(state.action_to_string(state.current_player(), a) for a in state.legal_actions())
            battle = json.loads(state.observation_string(0))["last_battle"]
            if battle:
                mine, theirs = (f["ranks"].index(battle[k][0]) for k in ("my_card", "opponent_card"))
                expected = "tie" if mine == theirs else "won" if mine < theirs else "lost"
                assert battle["result"] == expected, battle
                results.add(expected)
    assert played == {f"play {r}{s}" for r in f["ranks"] for s in f["suits"]}
    assert results == {"won", "lost", "tie"}


def _check_board_facts(name: str, f: dict, path: list, final) -> None:
    state = path[-1]
    if name == "quadranto":
        moves = json.loads(final.observation_string(0))["moves_made"]
        assert moves <= f["max_moves"]
        assert sum(not s.is_chance_node() for s in path) == moves
        for s in path:
            if not s.is_chance_node():
                names = [s.action_to_string(s.current_player(), a) for a in s.legal_actions()]
                assert set(names) <= set(f["action_strings"]) and "Stay" in names
        assert sum(s.is_chance_node() for s in path) == 2
        assert all(len(s.chance_outcomes()) == f["chance_outcomes_per_placement"] for s in path if s.is_chance_node())
    elif name == "hand_of_war":
        assert sum(s.is_chance_node() for s in path) == f["num_cards"]
        battles = sum(not s.is_chance_node() for s in path) // 2
        assert battles <= f["max_battles"]
        hand = json.loads(path[f["num_cards"]].observation_string(0))["my_hand"]
        assert len(hand) == f["hand_size"]
        assert all(len(s.legal_actions()) <= f["hand_size"] for s in path if not s.is_chance_node())
    elif name == "gen_chess":
        start = json.loads(path[0].observation_string(0))["board"]
        assert start == f["start_board"] and len(start) == f["board_rows"]
        assert all(len(row) == f["board_cols"] for row in start)
        assert len(final.history()) <= f["max_plies"]
        assert sum(c != "." for row in start for c in row) == 2 * f["pieces_per_side"]
    else:  # gen_tic_tac_toe: the board is shown as rows of cells
        rows = state.observation_string(0).splitlines()
        assert len(rows) == f["board_rows"] and all(len(r) == f["board_cols"] for r in rows)
        params = game_params(name)
        assert (params["m"], params["n"], params["k"]) == (f["board_rows"], f["board_cols"], f["k"])


def game_params(name: str) -> dict:
    return games.load_game(name).get_parameters()


@pytest.mark.parametrize("name", ["quadranto", "hand_of_war", "gen_chess"])
def test_illegal_actions_raise_and_leave_the_state_unchanged(name):
    """Action ids outside the legal set (chance outcomes at chance nodes) are refused with ValueError.

    Quadranto and hand of war try every id at every state; gen_chess (626 ids) tries every id at the start
    and at the end, and 40 random illegal ids at the other states.
    """
    game = games.load_game(name)
    ids = [a for a in range(-2, max(game.num_distinct_actions(), game.max_chance_outcomes()) + 1)
           if a != -1]  # -1 (kInvalidAction) is refused by OpenSpiel itself
    rng = np.random.default_rng(4)
    tried = 0
    for path, final in random_games(name, 2, seed=3):
        for i, state in enumerate([*path, final]):
            legal = set() if state.is_terminal() else (
                {a for a, _ in state.chance_outcomes()} if state.is_chance_node() else set(state.legal_actions()))
            illegal = [a for a in ids if a not in legal]
            if len(ids) > 100 and 0 < i < len(path):
                illegal = list(rng.choice(illegal, 40, replace=False))
            before = (str(state), state.history())
            for action in illegal:
                with pytest.raises(ValueError, match=f"{name}: action {action} is not legal"):
                    state.apply_action(int(action))
                assert (str(state), state.history()) == before
                tried += 1
    assert tried > 100


@pytest.mark.parametrize("name, history, action", [
    # gen_chess: E5_to_E5 made the piece on E5 vanish before the check
    pytest.param("gen_chess", [], gen_chess.action_id("E5_to_E5"), id="gen_chess-E5_to_E5"),
    pytest.param("gen_chess", [], gen_chess.PASS, id="gen_chess-PASS-while-moves-exist"),
    pytest.param("gen_chess", [], gen_chess.action_id("C5_to_C4"), id="gen_chess-opponents-piece"),
    pytest.param("gen_chess", [], gen_chess.action_id("C1_to_C3"), id="gen_chess-general-two-squares"),
    pytest.param("quadranto", [], 15, id="quadranto-player0-placed-on-(3,3)"),
    pytest.param("quadranto", [0], 1, id="quadranto-player1-placed-on-(0,1)"),
    pytest.param("quadranto", [0, 15], quadranto.ACTIONS.index("Up"), id="quadranto-off-the-board"),
    pytest.param("hand_of_war", [hand_of_war.card_id("AS")], hand_of_war.card_id("AS"), id="hand_of_war-AS-dealt-twice"),
])
def test_known_illegal_actions_raise(name, history, action):
    state = games.load_game(name).new_initial_state()
    for a in history:
        state.apply_action(a)
    with pytest.raises(ValueError, match="is not legal"):
        state.apply_action(action)
