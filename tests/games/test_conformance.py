"""Conformance of the novel-game engines: OpenSpiel's own simulation test, our oracle checks, resampling,
and the facts each rules file states, checked against random games."""

from __future__ import annotations

import json
import re

import numpy as np
import pyspiel
import pytest

from cwm import checks, games, oracle, trajectories

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
