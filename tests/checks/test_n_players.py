"""The contract and the checks hold one entry per player, whatever the number of players: the ground truth of
OpenSpiel's three- and four-player games passes the replay and random-play checks on recorded trajectories,
and models wrong only about the third (or fourth) player fail them."""

from __future__ import annotations

import pytest

from cwm import checks
from cwm.games import trajectories
from cwm.games.oracle import OracleFunctions, oracle_model
from cwm.model import ActionCodec, WorldModel

# three- and four-player games: hidden cards with chance (Kuhn, Leduc), perfect information with dice (Pig),
# and four-player Kuhn
GAMES = ["kuhn_poker(players=3)", "leduc_poker(players=3)", "pig(players=3,winscore=12)", "kuhn_poker(players=4)"]


def _recorded(game: str, n: int = 12) -> list[trajectories.Trajectory]:
    return trajectories.collect(game, n, seed=3)


@pytest.mark.parametrize("game", GAMES)
def test_recorded_trajectories_hold_every_players_entries(game, tmp_path):
    recorded = _recorded(game)
    players = oracle_model(game).num_players
    assert players >= 3
    movers = {s.player for t in recorded for s in t.steps if s.player >= 0}
    assert movers == set(range(players))  # every seat acted somewhere in the sample
    for t in recorded:
        assert len(t.returns) == players
        assert all(len(s.observations) == players for s in t.steps)
    path = trajectories.save(tmp_path / "n.jsonl", recorded)
    again = trajectories.load(path)
    assert [t.returns for t in again] == [t.returns for t in recorded]
    assert [len(t.steps) for t in again] == [len(t.steps) for t in recorded]


@pytest.mark.parametrize("game", GAMES)
def test_the_ground_truth_passes_every_check_on_n_player_trajectories(game):
    model = oracle_model(game)
    report = checks.run_checks(model, _recorded(game))
    assert report.transitions_total > 0 and report.transitions_passed == report.transitions_total, report.failures[:2]
    assert report.by_type["rewards"].total > 0 and report.by_type["observations"].total > 0
    played = checks.random_play_checks(model, num_games=6, seed=1)
    assert played.by_type["random_play"].passed == played.by_type["random_play"].total == 6


class _LastSeatRewardsWrong(OracleFunctions):
    """The ground truth, except that the last player's reward is 0 where it is not."""

    def get_rewards(self, state):
        rewards = super().get_rewards(state)
        return rewards[:-1] + [0.0]


class _LastSeatBlind(OracleFunctions):
    """The ground truth, except that the last player is shown the first player's observation."""

    def get_observations(self, state):
        seen = super().get_observations(state)
        return seen[:-1] + [seen[0]]


class _TwoPlayersOnly(OracleFunctions):
    """A model that knows only two of the players: two rewards and two observations."""

    def get_rewards(self, state):
        return super().get_rewards(state)[:2]

    def get_observations(self, state):
        return super().get_observations(state)[:2]


def _mutant(cls: type[OracleFunctions], game: str) -> WorldModel:
    functions = cls(game)
    return WorldModel(functions, codec=ActionCodec.from_game(functions.game), name="mutant")


@pytest.mark.parametrize("game, cls, kind", [
    ("kuhn_poker(players=3)", _LastSeatRewardsWrong, "rewards"),
    ("pig(players=3,winscore=12)", _LastSeatRewardsWrong, "rewards"),
    ("kuhn_poker(players=3)", _LastSeatBlind, "observations"),  # hidden cards: each seat sees its own
    ("leduc_poker(players=3)", _LastSeatBlind, "observations"),
])
def test_a_model_wrong_only_about_the_last_seat_fails(game, cls, kind):
    report = checks.run_checks(_mutant(cls, game), _recorded(game))
    assert report.by_type[kind].passed < report.by_type[kind].total
    assert any(f.test_type == kind for f in report.failures)


def test_a_model_that_knows_two_of_three_players_fails_the_checks_and_random_play():
    game = "kuhn_poker(players=3)"
    report = checks.run_checks(_mutant(_TwoPlayersOnly, game), _recorded(game))
    assert report.by_type["observations"].passed == 0
    played = checks.random_play_checks(_mutant(_TwoPlayersOnly, game), num_games=4, seed=1)
    assert played.by_type["random_play"].passed == 0
