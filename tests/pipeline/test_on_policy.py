"""On-policy accuracy: arena games replayed from their recorded actions, and a bundle's model (and
inference) checked on them in the sandbox. The models are hand-written reference fixtures and mutants."""

from __future__ import annotations

from pathlib import Path

import pytest

from cwm import arena, games
from cwm.agents.base import RandomAgent
from cwm.arena.types import MatchResult
from cwm.pipeline.on_policy import ReplayError, agent_games, on_policy_accuracy, replay, replay_states
from tests.checks.test_inference_checks import SEARCH_INFERENCE_SOURCE

REFERENCE = Path(__file__).resolve().parents[1] / "data" / "reference"
TTT = (REFERENCE / "tic_tac_toe_model.py").read_text()
LEDUC = (REFERENCE / "leduc_poker_model.py").read_text()
NO_DIAGONALS = TTT.replace("    (0, 4, 8), (2, 4, 6),\n", "")


def _matches(game: str, n: int, seats=("cwm", "random")) -> list[MatchResult]:
    results = []
    for i in range(n):
        actions: list[int] = []
        outcome = arena.play_match(games.load_game(game), [RandomAgent(seed=i), RandomAgent(seed=i + 100)],
                                   seed=i, actions=actions)
        results.append(MatchResult(f"m#{i}", seats if i % 2 == 0 else seats[::-1], i,
                                   tuple(outcome.returns), actions=tuple(actions)))
    return results


def test_a_match_replays_into_the_game_it_was():
    result = _matches("leduc_poker", 1)[0]
    played = replay("leduc_poker", result.actions)
    assert [s.action for s in played.steps] == list(result.actions)
    assert played.returns == result.returns



def test_the_replayed_states_are_those_the_match_passed_through():
    result = _matches("leduc_poker", 1)[0]
    seen = [(tuple(state.history()), action) for state, action in replay_states("leduc_poker", result.actions)]
    assert seen == [(result.actions[:k], a) for k, a in enumerate(result.actions)]

@pytest.mark.parametrize("damage,words", [
    (lambda a: a[:-1], lambda a: f"does not end after its {len(a) - 1} recorded"),
    (lambda a: [*a, a[-1]], lambda a: f"ends after {len(a)} of its {len(a) + 1} recorded"),
    (lambda a: [a[0], a[0], *a[2:]], lambda a: f"recorded action 1 ({a[0]}) is not legal")])  # a card dealt twice
def test_a_damaged_record_is_refused_naming_what_is_wrong(damage, words):
    actions = list(_matches("leduc_poker", 1)[0].actions)
    with pytest.raises(ReplayError) as caught:
        replay("leduc_poker", damage(actions))
    assert words(actions) in str(caught.value)


def test_forfeits_void_matches_and_other_agents_games_are_left_out():
    good = _matches("tic_tac_toe", 2)
    forfeit = MatchResult("f#0", ("cwm", "random"), 0, (-1.0, 1.0), forfeit_seat=0, forfeit_kind="illegal",
                          actions=good[0].actions[:2])
    void = MatchResult("v#0", ("random", "cwm"), 0, (0.0, 0.0), forfeit_kind="crash")
    others = _matches("tic_tac_toe", 1, seats=("random", "gt-mcts"))
    played, skipped = agent_games("tic_tac_toe", [*good, forfeit, void, *others], "cwm")
    assert skipped == 2 and [seats for _, seats in played] == [(0,), (1,)]


def test_a_model_wrong_where_its_games_went_is_caught_on_policy():
    results = _matches("tic_tac_toe", 30)
    right = on_policy_accuracy({"model.py": TTT}, "tic_tac_toe", results, "cwm")
    wrong = on_policy_accuracy({"model.py": NO_DIAGONALS}, "tic_tac_toe", results, "cwm")
    assert right["matches"] == 30 and right["transition_accuracy"] == 1.0
    assert wrong["matches"] == 30 and wrong["transition_accuracy"] < 1.0
    assert "inference_accuracy" not in right


def test_inference_is_checked_on_the_agents_own_seat():
    results = _matches("leduc_poker", 4)
    good = on_policy_accuracy({"model.py": LEDUC, "inference.py": LEDUC + SEARCH_INFERENCE_SOURCE},
                              "leduc_poker", results, "cwm")
    assert good["transition_accuracy"] == 1.0 and good["inference_accuracy"] == 1.0
    n_checks = int(str(good["inference_checks"]).split("/")[1])
    own_turns = sum(1 for r in results for k, s in enumerate(replay("leduc_poker", r.actions).steps)
                    if s.player == r.seats.index("cwm"))
    assert n_checks == own_turns  # one check per state where the agent acted, its seat only
    lazy = "def resample_history(events, player_id, seed):\n    return []\n"
    bad = on_policy_accuracy({"model.py": LEDUC, "inference.py": lazy}, "leduc_poker", results, "cwm")
    assert bad["inference_accuracy"] == 0.0


def test_no_finished_game_gives_no_rates():
    record = on_policy_accuracy({"model.py": TTT}, "tic_tac_toe", [], "cwm")
    assert record == {"matches": 0, "skipped": 0, "transition_accuracy": None, "pass_rate": None}
