"""The registry: every game resolves, its facts agree with its OpenSpiel ground truth, and each OpenSpiel
game has a rules file with the sections a reader needs."""

from __future__ import annotations

import pyspiel
import pytest

from cwm import games
from cwm.types import UnknownGameError

OPENSPIEL_GAMES = ["tic_tac_toe", "connect_four", "backgammon", "bargaining", "leduc_poker", "gin_rummy",
                   "rock_paper_scissors", "prisoners_dilemma", "iterated_prisoners_dilemma"]
SECTIONS = ["## Overview", "## Turn order", "## Actions", "## Chance", "## Observations", "## End and scoring"]


def test_paper_games_are_registered() -> None:
    names = {s.name for s in games.registered()}
    assert set(OPENSPIEL_GAMES) | {"gen_tic_tac_toe"} <= names
    assert games.resolve("gen_tic_tac_toe").openspiel == "mnk(m=6,n=6,k=4)"


@pytest.mark.parametrize("name", [s.name for s in games.registered()])
def test_facts_agree_with_the_ground_truth(name: str) -> None:
    spec = games.resolve(name)
    game = games.load_game(spec)
    gtype = game.get_type()
    assert spec.players == game.num_players()
    assert spec.stochastic == (gtype.chance_mode != pyspiel.GameType.ChanceMode.DETERMINISTIC)
    perfect = gtype.information == pyspiel.GameType.Information.PERFECT_INFORMATION and not spec.turn_based
    assert spec.perfect_information == perfect
    win_draw_loss = (gtype.utility == pyspiel.GameType.Utility.ZERO_SUM
                     and game.min_utility() == -1 and game.max_utility() == 1)
    assert (spec.outcome == "win/draw/loss") == win_draw_loss, f"{name}: outcome {spec.outcome!r}"
    assert gtype.dynamics == pyspiel.GameType.Dynamics.SEQUENTIAL  # simultaneous games come turn-based


@pytest.mark.parametrize("name", OPENSPIEL_GAMES)
def test_rules_files_have_every_section(name: str) -> None:
    text = games.rules_text(name)
    missing = [s for s in SECTIONS if s not in text]
    assert not missing, f"{name}: rules lack {missing}"
    assert len(text.split()) > 150


# game -> (actions leading to a state, an action string the rules file quotes that is legal there)
EXAMPLES = {
    "tic_tac_toe": ([], "x(1,1)"),
    "connect_four": ([], "x3"),
    "backgammon": ([0], "0 - 24/23 24/22"),
    "bargaining": ([5], "Offer: Book: 3, Hat: 0, Basketball: 0"),
    "leduc_poker": ([], "Chance outcome:3"),
    "gin_rummy": ([], "Chance outcome: 8s"),
    "rock_paper_scissors": ([], "Scissors"),
    "prisoners_dilemma": ([0], "Defect"),
    "iterated_prisoners_dilemma": ([0, 1], "Cooperate"),
}


@pytest.mark.parametrize("name", OPENSPIEL_GAMES)
def test_rules_quote_real_action_strings(name: str) -> None:
    history, example = EXAMPLES[name]
    state = games.load_game(name).new_initial_state()
    for action in history:
        state.apply_action(action)
    player = state.current_player()
    actions = [a for a, _ in state.chance_outcomes()] if state.is_chance_node() else state.legal_actions()
    assert example in [state.action_to_string(player, a) for a in actions]
    assert f"`{example}`" in games.rules_text(name)


def test_resolve_by_alias_openspiel_string_and_rules_override(tmp_path) -> None:
    assert games.resolve("leduc").name == "leduc_poker"
    spec = games.resolve("mnk(m=4,n=4,k=3)")
    assert spec.players == 2 and spec.perfect_information and not spec.stochastic
    rules = tmp_path / "my_rules.md"
    rules.write_text("# my game\n", encoding="utf-8")
    assert games.rules_text(games.resolve("mnk(m=4,n=4,k=3)", rules=rules)) == "# my game\n"


def test_unknown_game_error_suggests_close_names() -> None:
    with pytest.raises(UnknownGameError, match=r"unknown game 'tic_tac_to'.*did you mean tic_tac_toe"):
        games.resolve("tic_tac_to")


def test_missing_rules_file_and_game_module_are_named(tmp_path) -> None:
    with pytest.raises(UnknownGameError, match="rules file .*nope.md' does not exist"):
        games.resolve("tic_tac_toe", rules=tmp_path / "nope.md")
    with pytest.raises(UnknownGameError, match="game module .*missing.py' does not exist"):
        games.resolve(f"{tmp_path}/missing.py:my_game")


def test_leduc_observation_is_parsed_into_named_fields() -> None:
    state = games.load_game("leduc_poker").new_initial_state()
    for action in [3, 1]:
        state.apply_action(action)
    obs = [games.observe(games.resolve("leduc_poker"), state, p) for p in range(2)]
    assert obs[0] == {"observer": 0, "private": 3, "round": 1, "player": 0, "pot": 2, "money": [99, 99],
                      "ante": [1, 1]}
    assert obs[1]["private"] == 1 and obs[1]["observer"] == 1


@pytest.mark.parametrize(("game_string", "outcome"), [
    ("kuhn_poker", "payoff"), ("mnk(m=4,n=4,k=3)", "win/draw/loss"), ("leduc_poker(players=2)", "payoff")])
def test_outcome_of_a_users_openspiel_game(game_string: str, outcome: str) -> None:
    assert games.resolve(game_string).outcome == outcome
