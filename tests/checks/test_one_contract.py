"""One contract (issue 14, cases 1-8): the checks (``cwm.checks``) and the planning wrapper
(``cwm.model.ModelState``) refuse the same values and accept the same values.

Each test is named after its case and runs on trajectories recorded from the ground truth, with models that
are small patches of the known-good ones in tests/data (``CONTRACT_MUTANTS`` in conftest.py).
"""

from __future__ import annotations

import collections

import pytest

from cwm import checks, games, model
from cwm.agents.cwm import HistoryTracker, PlayerView
from cwm.games import trajectories
from cwm.sandbox import load_source
from cwm.types import CHANCE, ModelContractError


def _breaches_of(report, test_type):
    return [f for f in report.failures if f.test_type == test_type and f.breach]


def _play_to_failure(state, actions):
    """Plays ``actions`` (strings) from ``state`` and returns the state reached."""
    for a in actions:
        state = state.child_from_string(a)
    return state


# -- case 1: exact types; 1 and 1.0 are the same observation ---------------------------------------------


def test_case1_bool_current_player_is_a_breach_in_the_checks_and_in_play(mutant, recorded):
    wm = mutant("tic_tac_toe", "bool_current_player")
    report = checks.run_checks(wm, recorded("tic_tac_toe"))
    player = report.by_type["current_player"]
    # every non-terminal state answers False or True; only the terminal states (-4) pass
    assert not report.all_passed and player.passed == len(recorded("tic_tac_toe")), report.summary()
    first = _breaches_of(report, "current_player")[0]
    assert first.step == 0 and "a bool is not an int" in first.diff
    assert report.breaches == player.total - player.passed
    with pytest.raises(ModelContractError, match="step 0: get_current_player returned a bool False"):
        wm.new_initial_state().current_player()


@pytest.mark.parametrize("game", ["leduc_poker", "quadranto"])
def test_case1_observation_ints_written_as_floats_pass_the_checks_and_key_like_ints(game, mutant, known_good,
                                                                                     recorded):
    floats, ints = mutant(game, "float_observations"), known_good(game)
    report = checks.run_checks(floats, recorded(game))
    assert report.all_passed, report.summary()
    assert checks.random_play_checks(floats, num_games=10, seed=0).all_passed
    # the information-state keys ISMCTS matches draws by: a float model's equal an int model's, byte for byte
    for traj in recorded(game)[:5]:
        a, b = floats.new_initial_state(), ints.new_initial_state()
        for step in traj.steps:
            a, b = a.child_from_string(step.action_string), b.child_from_string(step.action_string)
            for p in range(traj.num_players):
                assert a.information_state_string(p) == b.information_state_string(p)
                assert a.observation_string(p) == b.observation_string(p)
    assert report.breaches == 0


# -- case 2: chance outcomes are unique --------------------------------------------------------------------


def test_case2_duplicated_chance_outcome_is_a_breach_in_the_checks_and_in_play(mutant, recorded):
    wm = mutant("leduc_poker", "duplicate_chance_outcome")
    report = checks.run_checks(wm, recorded("leduc_poker"))
    chance = report.by_type["chance_outcomes"]
    assert chance.passed == 0 and chance.total > 0, report.summary()
    first = _breaches_of(report, "chance_outcomes")[0]
    assert "lists an outcome twice" in first.diff and "Chance outcome:0" in first.diff
    with pytest.raises(ModelContractError, match="step 0: get_chance_outcomes lists an outcome twice"):
        wm.new_initial_state().chance_outcomes()


# -- case 3: NaN is refused everywhere -----------------------------------------------------------------


NAN_CHANCE = '''
def get_initial_state():
    return {"dealt": None}
def get_current_player(state):
    return -1 if state["dealt"] is None else -4
def get_legal_actions(state):
    return ["a", "b"] if state["dealt"] is None else []
def get_chance_outcomes(state):
    return [("a", float("nan")), ("b", 0.5)] if state["dealt"] is None else []
def apply_action(state, action):
    return {"dealt": action}
def get_observations(state):
    return [state["dealt"]]
def get_rewards(state):
    return [0.0]
'''


def test_case3_nan_probability_is_refused_by_modelstate():
    wm = model.WorldModel(load_source(NAN_CHANCE, name="nan_chance"), name="nan_chance")
    state = wm.new_initial_state()
    assert state.is_chance_node()
    with pytest.raises(ModelContractError, match="step 0: a chance probability must be finite, got nan"):
        state.chance_outcome_strings()


def test_case3_nan_probability_is_a_breach_in_the_checks(mutant, recorded):
    report = checks.run_checks(mutant("leduc_poker", "nan_chance_probability"), recorded("leduc_poker"))
    assert report.by_type["chance_outcomes"].passed == 0, report.summary()
    first = next(f for f in report.failures if f.test_type == "chance_outcomes")
    assert first.diff == "a chance probability must be finite, got nan" and first.breach


def test_case3_nan_reward_is_a_breach_in_play_and_in_the_checks(mutant, recorded):
    wm = mutant("tic_tac_toe", "nan_reward")
    trajs = recorded("tic_tac_toe")
    x_wins = next(t for t in trajs if t.returns[0] == 1.0)
    with pytest.raises(ModelContractError, match=r"get_rewards \(after '.*'\) must return .*must be finite, got nan"):
        _play_to_failure(wm.new_initial_state(), x_wins.action_strings)
    report = checks.run_checks(wm, trajs)
    rewards = [f for f in report.failures if f.test_type == "rewards"]
    assert rewards and all("must be finite, got nan" in f.diff and f.breach for f in rewards), report.summary()


# -- case 4: no function modifies its input state ------------------------------------------------------


def test_case4_get_legal_actions_writing_into_its_state_fails_the_checks_and_play(mutant, recorded):
    wm = mutant("tic_tac_toe", "legal_actions_write_their_state")
    report = checks.run_checks(wm, recorded("tic_tac_toe"))
    legal = _breaches_of(report, "legal_actions")
    assert legal and report.by_type["legal_actions"].passed == 0, report.summary()
    assert "tried to modify its input state" in legal[0].diff and legal[0].step == 0
    with pytest.raises(ModelContractError, match="step 0: get_legal_actions.* tried to modify its input state"):
        wm.new_initial_state().legal_actions()


# -- case 5: state keys of mixed types ------------------------------------------------------------------


def test_case5_state_with_keys_of_mixed_types_is_valid_json_and_scored(mutant, recorded):
    """Keys of mixed types that JSON writes apart ({"board", "player", 7, None}) are a valid state: the
    checks score it (in-process, no crash) and it passes, as it passes in play."""
    wm = mutant("tic_tac_toe", "mixed_key_types")
    report = checks.run_checks(wm, recorded("tic_tac_toe"))
    assert report.all_passed and report.breaches == 0, report.summary()
    assert checks.random_play_checks(wm, num_games=5, seed=0).all_passed


def test_case5_state_keys_json_writes_alike_are_a_breach_at_a_named_step(mutant, recorded):
    """Keys that JSON writes alike (1 and "1") are not a JSON object: a breach named at the first step
    whose transition makes one, in the checks and in play."""
    wm = mutant("tic_tac_toe", "keys_json_writes_alike")
    trajs = recorded("tic_tac_toe")
    report = checks.run_checks(wm, trajs)
    first = _breaches_of(report, "transition")[0]
    assert first.step == 0 and first.call == f"apply_action(state, {trajs[0].steps[0].action_string!r})"
    assert "two dict keys that JSON writes alike ('1')" in first.diff
    with pytest.raises(ModelContractError, match="step 0: a state has two dict keys that JSON writes alike"):
        wm.new_initial_state().child_from_string(trajs[0].steps[0].action_string)


# -- case 6: all_passed from the counts ------------------------------------------------------------------


def test_case6_all_passed_comes_from_the_counts_not_from_the_failures_kept(patched_model, recorded):
    wm = patched_model("tic_tac_toe", 'if winner == "x":\n        return [1.0, -1.0]',
                       'if winner == "x":\n        return [-1.0, 1.0]')
    shown = checks.run_checks(wm, recorded("tic_tac_toe"))
    hidden = checks.run_checks(wm, recorded("tic_tac_toe"), max_failures_per_type=0)
    assert hidden.failures == () and shown.failures
    assert not hidden.all_passed and hidden.by_type == shown.by_type
    wrong = hidden.by_type["rewards"]
    assert 0 < wrong.total - wrong.passed == len([f for f in shown.failures if f.test_type == "rewards"])
    assert hidden.pass_rate == shown.pass_rate == hidden.passed / hidden.executed < 1.0
    assert hidden.transition_accuracy == shown.transition_accuracy < 1.0


# -- case 7: the codec decodes only ids valid for the game ---------------------------------------------


def test_case7_id_prefixed_string_is_refused_on_tic_tac_toe(mutant):
    codec = model.ActionCodec.from_game(games.load_game("tic_tac_toe"))
    for player, text in [(0, "99 - anything"), (0, "4 - x(1,1)"), (CHANCE, "chance outcome 3")]:
        with pytest.raises(ModelContractError, match="is not an action of this game"):
            codec.to_id(player, text)
    assert codec.to_id(0, "x(1,1)") == 4
    with pytest.raises(ModelContractError, match="step 0: action '99 - anything' of player 0 is not an action"):
        mutant("tic_tac_toe", "id_prefixed_action").new_initial_state().legal_actions()


def test_case7_backgammon_id_prefixed_strings_decode_and_out_of_range_ids_are_refused():
    game = games.load_game("backgammon")
    codec = model.ActionCodec.from_game(game)
    traj = trajectories.record("backgammon", seed=3)
    recorded_ids = [(s.player, text, aid) for s in traj.steps
                    for aid, text in zip(s.legal_actions, s.legal_action_strings)]
    assert all(codec.to_id(p, text) == aid for p, text, aid in recorded_ids)
    # strings that depend on the state (and so are not all in the codec's table) carry their id
    prefixed = [(p, text) for p, text, aid in recorded_ids if text.startswith((f"{aid} - ", f"chance outcome {aid}"))]
    assert len({text for _, text in prefixed}) > 50
    player_text = next(text for p, text in prefixed if p >= 0)
    move = player_text.split(" - ", 1)[1]
    too_many_digits = "9" * 5000  # int() refuses strings this long
    for player, text in [(0, f"{game.num_distinct_actions()} - {move}"), (0, f"{10**6} - {move}"),
                         (0, f"{too_many_digits} - {move}"),
                         (CHANCE, f"chance outcome {game.max_chance_outcomes()} (roll: 66)")]:
        with pytest.raises(ModelContractError, match="is not an action of this game"):
            codec.to_id(player, text)


# -- case 8: one information-state encoding, built incrementally --------------------------------------


@pytest.mark.parametrize("game", ["leduc_poker", "quadranto"])
def test_case8_model_state_and_player_view_keys_agree_byte_for_byte(game, known_good, recorded):
    wm = known_good(game)
    spec = games.resolve(game)
    seen = set()
    for traj in recorded(game)[:8]:
        real = games.load_game(spec).new_initial_state()
        trackers = [HistoryTracker(spec, p) for p in range(traj.num_players)]
        state = wm.new_initial_state()
        for step in traj.steps:
            for p, tracker in enumerate(trackers):
                tracker.sync(real)
                view = PlayerView(wm, tracker.events, p, [])
                key = state.information_state_string(p)
                assert view.information_state_string(p) == key, (game, traj.seed, len(tracker.ids), p)
                seen.add(key)
            real.apply_action(step.action)
            state = state.child_from_string(step.action_string)
    assert len(seen) > 8 * len(traj.steps)  # the keys tell information states apart


class _Counting:
    """A guard that counts model calls by function name."""

    def __init__(self):
        self.calls = collections.Counter()

    def __call__(self, fn, *args):
        self.calls[fn.__name__] += 1
        return fn(*args)


@pytest.mark.parametrize("game", ["leduc_poker", "quadranto"])
def test_case8_keys_along_a_path_cost_one_observation_call_per_state(game, known_good, recorded):
    counting = _Counting()
    wm = known_good(game, guard=counting)
    for traj in recorded(game)[:5]:
        state = wm.new_initial_state()
        counting.calls.clear()
        for step in traj.steps:
            for p in range(traj.num_players):
                state.information_state_string(p)
            state = state.child_from_string(step.action_string)
        depth = len(traj.steps)
        assert depth >= 6
        # every state on the path is observed once: O(depth), where a replay from the root costs O(depth^2)
        assert counting.calls["get_observations"] == depth, (depth, counting.calls)
