"""The oracle model (the ground truth replayed) passes every check on every registered game: this is what
proves the checks themselves right."""

from __future__ import annotations

import pytest

from cwm import checks, games
from cwm.games import oracle, trajectories

LONG_GAMES = {"backgammon", "gin_rummy"}  # hundreds of steps per game: two trajectories are plenty
GAMES = [spec.name for spec in games.registered()]


@pytest.fixture(scope="module", params=GAMES)
def game_and_trajectories(request: pytest.FixtureRequest) -> tuple[str, list]:
    name = request.param
    count = 2 if name in LONG_GAMES else 3
    return name, trajectories.collect(name, count, seed=0)


def test_oracle_passes_all_trajectory_checks(game_and_trajectories: tuple[str, list]) -> None:
    name, trajs = game_and_trajectories
    report = checks.run_checks(oracle.oracle_model(name), trajs)
    assert report.all_passed, report.summary() + "\n" + "\n".join(f.render() for f in report.failures[:3])
    assert report.pass_rate == 1.0
    assert report.transitions_total == trajectories.total_steps(trajs) == report.transitions_passed
    expected_types = {"current_player", "observations", "transition", "rewards", "termination"}
    assert expected_types <= set(report.by_type)
    if games.resolve(name).stochastic:
        assert report.by_type["chance_outcomes"].total > 0


def test_oracle_passes_random_play(game_and_trajectories: tuple[str, list]) -> None:
    name, _ = game_and_trajectories
    report = checks.random_play_checks(oracle.oracle_model(name), num_games=2, seed=0)
    assert report.all_passed and report.executed == 2, report.summary()


def test_oracle_train_and_test_reports(game_and_trajectories: tuple[str, list]) -> None:
    name, train = game_and_trajectories
    test = trajectories.collect(name, 1, seed=100)
    reports = checks.check_model(oracle.oracle_model(name), train=train, test=test)
    assert set(reports) == {"train", "test"}
    assert reports["test"].transition_accuracy == 1.0 == reports["train"].transition_accuracy


def test_zero_checks_executed_is_never_a_pass() -> None:
    report = checks.run_checks(oracle.oracle_model("tic_tac_toe"), [])
    assert report.executed == 0 and not report.all_passed
    assert report.pass_rate == 0.0 and report.transition_accuracy == 0.0
