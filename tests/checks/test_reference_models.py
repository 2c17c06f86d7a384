"""Hand-written reference models pass every check; deliberately broken variants (mutants) fail with a report
that names the step and shows the difference.

Mutants are small textual patches of the reference sources (tests/data/reference/), so each one differs
from a known-good model by exactly the bug it is named after.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from cwm import checks, games, model
from cwm.games import trajectories
from cwm.sandbox import load_source

REFERENCE = Path(__file__).resolve().parent.parent / "data" / "reference"
NUM_TRAJECTORIES = 20

# game -> mutant name -> (old text, new text, failing test type, fragment of the failure's diff or render)
MUTANTS: dict[str, dict[str, tuple[str, str, str, str]]] = {
    "tic_tac_toe": {
        "wrong_winner_check": (
            'board[a] == board[b] == board[c]', 'board[a] == board[b]',
            "current_player", "got -4"),
        "off_by_one_squares": (
            "for i in range(9) if", "for i in range(8) if",
            "legal_actions", "missing ['"),
        "wrong_reward_sign": (
            'if winner == "x":\n        return [1.0, -1.0]', 'if winner == "x":\n        return [-1.0, 1.0]',
            "rewards", "value[0]: expected 1.0, got -1.0"),
        "wrong_next_player": (
            'return {"board": board, "player": 1 - state["player"]}',
            'return {"board": board, "player": state["player"]}',
            "current_player", "expected 1, got 0"),
        "wrong_terminal_observation": (
            'current = "Terminal"', 'current = "terminal"',
            "observations", "expected 'Terminal', got 'terminal'"),
        "mutates_input": (
            'board = list(state["board"])', 'board = state["board"]',
            "transition", "tried to modify its input state"),
        "appends_unbound": (  # reaches list.append past the gate's literal-name rule; changes nothing, refused
            'board = list(state["board"])', 'L = type([])\n    L.append(state["board"], float("nan"))\n'
            '    board = list(state["board"])',
            "transition", "tried to modify its input state"),
        "returns_input_object": (
            'return {"board": board, "player": 1 - state["player"]}',
            'state["board"], state["player"] = board, 1 - state["player"]\n    return state',
            "transition", "tried to modify its input state"),
        "exception_on_draw": (
            "    return [0.0, 0.0]\n", '    if "." not in state["board"]:\n        raise ValueError("no draw rule")\n'
            "    return [0.0, 0.0]\n",
            "rewards", "ValueError: no draw rule"),
        "non_json_state": (
            'return {"board": board, "player": 1 - state["player"]}',
            'return {"board": board, "player": 1 - state["player"], "empty": set()}',
            "transition", "which is not a JSON value"),
        "legal_actions_after_win": (
            "    if _is_over(state):\n        return []\n    symbol", "    symbol",
            "termination", "get_legal_actions(terminal_state)"),
    },
    "leduc_poker": {
        "missing_chance_outcome": (
            "for c in range(6) if", "for c in range(5) if",
            "chance_outcomes", "missing ['Chance outcome:5']"),
        "wrong_chance_probability": (
            "1.0 / len(deck)", "1.0 / 6",
            "chance_outcomes", "chance probabilities must sum to 1"),
        "wrong_raise_size": (
            "RAISE_SIZE = {1: 2, 2: 4}", "RAISE_SIZE = {1: 2, 2: 2}",
            "observations", "['ante']"),
        "raise_limit_off_by_one": (
            'state["raises"] < MAX_RAISES', 'state["raises"] <= MAX_RAISES',
            "legal_actions", "not legal but returned ['Raise']"),
        "fold_without_bet": (
            'if state["ante"][1 - player] > state["ante"][player]:',
            'if state["ante"][1 - player] >= state["ante"][player]:',
            "legal_actions", "not legal but returned ['Fold']"),
        "ignores_pairs": (
            "if pairs[0] != pairs[1]:", "if False:",
            "rewards", "value[0]: expected -5.0, got 5.0"),
        "wrong_reward_sign": (
            "out[loser] = -float(ante[loser])\n    out[1 - loser] = float(ante[loser])",
            "out[loser] = float(ante[loser])\n    out[1 - loser] = -float(ante[loser])",
            "rewards", "value[0]: expected -5.0, got 5.0"),
        "wrong_next_player": (
            'new["player"] = 0', 'new["player"] = 1',
            "current_player", "expected 0, got 1"),
        "leaks_private_card": (
            '"private": cards[observer] if len(cards) > observer else NO_CARD',
            '"private": cards[0] if cards else NO_CARD',
            "observations", "value[1]['private']"),
        "mutates_input": (
            'new["ante"] = list(state["ante"])', 'new["ante"] = state["ante"]',
            "transition", "tried to modify its input state"),
        "updates_unbound": (  # dict.update reached through type({}): changes nothing, refused
            "    new = _copy(state)\n    player", "    type({}).update(state, raises=0)\n    new = _copy(state)\n"
            "    player",
            "transition", "tried to modify its input state"),
        "returns_input_object": (
            "    new = _copy(state)\n    player", "    new = state\n    player",
            "transition", "tried to modify its input state"),
        "exception_on_split_pot": (
            "        else:\n            return [0.0, 0.0]",
            '        else:\n            raise RuntimeError("split pot")',
            "rewards", "RuntimeError: split pot"),
        "non_json_state": (
            '"last": -1,', '"last": -1, "seen": set(),',
            "transition", "which is not a JSON value"),
    },
}

CASES = [(game, name) for game, table in MUTANTS.items() for name in table]


def _source(game: str) -> str:
    return (REFERENCE / f"{game}_model.py").read_text(encoding="utf-8")


def _world_model(game: str, source: str, name: str) -> model.WorldModel:
    module = load_source(source, name=name)  # the static gate must accept the fixtures too
    return model.WorldModel(module, codec=model.ActionCodec.from_game(games.load_game(game)), name=name)


@pytest.fixture(scope="module")
def recorded() -> dict[str, list]:
    return {game: trajectories.collect(game, NUM_TRAJECTORIES, seed=0) for game in MUTANTS}


@pytest.mark.parametrize("game", sorted(MUTANTS))
def test_reference_model_passes_every_check(game: str, recorded: dict[str, list]) -> None:
    wm = _world_model(game, _source(game), f"{game}_reference")
    report = checks.run_checks(wm, recorded[game])
    assert report.all_passed, report.summary() + "\n" + "\n".join(f.render() for f in report.failures[:3])
    assert report.pass_rate == 1.0 and report.transition_accuracy == 1.0
    assert report.executed > 20 * NUM_TRAJECTORIES
    assert checks.random_play_checks(wm, num_games=10, seed=1).all_passed


@pytest.mark.parametrize("game", sorted(MUTANTS))
def test_reference_source_is_labelled_hand_written(game: str) -> None:
    assert "HAND-WRITTEN TEST FIXTURE" in _source(game).splitlines()[0]


def test_at_least_ten_mutants_per_game() -> None:
    assert all(len(table) >= 10 for table in MUTANTS.values())


@pytest.mark.parametrize(("game", "mutant"), CASES, ids=[f"{g}-{m}" for g, m in CASES])
def test_mutant_fails_with_step_and_difference(game: str, mutant: str, recorded: dict[str, list]) -> None:
    old, new, test_type, fragment = MUTANTS[game][mutant]
    source = _source(game)
    assert source.count(old) == 1, f"patch target of {mutant} must occur exactly once in the reference"
    wm = _world_model(game, source.replace(old, new), f"{game}_{mutant}")
    report = checks.run_checks(wm, recorded[game])
    assert not report.all_passed and report.pass_rate < 1.0
    failures = report.failed_by_type().get(test_type)
    assert failures, f"{mutant}: expected a {test_type} failure, got {report.summary()}"
    first = failures[0]
    text = first.render()
    assert f"step {first.step}" in text and first.call in text
    assert fragment in first.diff + "\n" + first.traceback + "\n" + text, text
