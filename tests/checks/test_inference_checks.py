"""The inference checks on data: a correct inference function passes every reconstruction, broken ones fail
at a named step with the sampled history, and the sandbox gives the same report as in-process."""

from __future__ import annotations

import pytest

from cwm.checks.inference import decision_points, run_inference_checks
from cwm.games import trajectories
from cwm.model import WorldModel
from cwm.sandbox import Sandbox

from .conftest import model_search_inference


def _views(games):  # noqa: ANN001, ANN202
    return [trajectories.closed_view(t, p) for t in games for p in range(t.num_players)]


def test_a_correct_inference_passes_every_reconstruction(leduc_games, leduc_module):
    views = _views(leduc_games)
    report = run_inference_checks(WorldModel(leduc_module), model_search_inference(leduc_module), views)
    assert report.all_passed, report.summary()
    assert report.by_type["inference"].total == sum(len(decision_points(v, terminal=False)) for v in views) > 8
    ended = run_inference_checks(WorldModel(leduc_module), model_search_inference(leduc_module), views,
                                 terminal=True)
    assert ended.all_passed and ended.by_type["inference_terminal"].total == len(views)


def test_the_true_history_is_not_what_the_other_player_saw(leduc_games, leduc_module):
    """Returning the recorded game itself passes for... nobody else: the checks compare the player's own view."""
    def replay_the_recording(events, player_id, seed):  # noqa: ANN001, ANN202
        return list(leduc_games[0].action_strings)[: len(events) - 1]

    report = run_inference_checks(WorldModel(leduc_module), replay_the_recording, _views(leduc_games[:1]))
    assert report.all_passed, report.summary()  # it is the real history: consistent by construction
    other = run_inference_checks(WorldModel(leduc_module), replay_the_recording, _views(leduc_games[1:2]))
    assert not other.all_passed


@pytest.mark.parametrize("broken,fragment", [
    (lambda real: lambda e, p, s: real(e, p, s)[:-1], "needs exactly"),
    (lambda real: lambda e, p, s: real(e, p, s) + ["Call"], "needs exactly"),
    (lambda real: lambda e, p, s: ["Chance outcome:0"] * (len(e) - 1), "observation differs"),
    (lambda real: lambda e, p, s: 7, "must return a list of action strings"),
    (lambda real: lambda e, p, s: 1 / 0, "raised an exception"),
], ids=["too-short", "too-long", "deals-a-card-twice", "not-a-list", "raises"])
def test_broken_inference_fails_with_the_step_and_the_reason(broken, fragment, leduc_games, leduc_module):
    real = model_search_inference(leduc_module)
    report = run_inference_checks(WorldModel(leduc_module), broken(real), _views(leduc_games))
    assert not report.all_passed and report.pass_rate < 1.0
    first = report.failures[0]
    text = first.render()
    assert f"step {first.step}" in text and "resample_history" in text and fragment in text, text


def test_ignoring_the_observed_card_is_caught(leduc_games, leduc_module):
    """An inference that deals the player any card (not its own) gives histories whose replay shows the player
    another card: a mismatch at the state of the deal."""
    real = model_search_inference(leduc_module)

    def ignores_own_card(events, player, seed):  # noqa: ANN001, ANN202
        blind = [dict(e, observation=events[0]["observation"]) if i else e for i, e in enumerate(events)]
        try:
            return real(blind, player, seed)
        except ValueError:
            return real(events[:1], player, seed) + ["Call"] * (len(events) - 1)

    report = run_inference_checks(WorldModel(leduc_module), ignores_own_card, _views(leduc_games))
    assert not report.all_passed
    assert any("observation differs" in f.diff or "not legal" in f.diff for f in report.failures)


def test_the_sandbox_gives_the_same_report(leduc_games, leduc_source):
    views = _views(leduc_games[:2])
    joint_source = leduc_source + "\n\n" + SEARCH_INFERENCE_SOURCE
    with Sandbox() as box:  # an inference module beside a world model, and one module that is both
        boxed = box.check_inference(joint_source, views, model_source=leduc_source, terminal=True)
        joint = box.check_inference(joint_source, views, terminal=True, random_games=3)
        hostile = box.check_inference("import os\n", views, model_source=leduc_source)
    assert boxed.all_passed and boxed.executed > 0, boxed.summary()
    assert joint.all_passed and joint.by_type["random_play"].total == 3, joint.summary()
    assert hostile.error.startswith("static:") and not hostile.all_passed


# The same search as source for the sandbox, appended to the reference model: it searches that module's own
# game tree (observations compared as the model writes them).
SEARCH_INFERENCE_SOURCE = '''
import random


def resample_history(events, player_id, seed):
    """HAND-WRITTEN TEST FIXTURE: a depth-first search of this module's own game tree."""
    rng = random.Random(seed)
    wanted = [e["observation"] for e in events]

    def walk(state, depth):
        if get_observations(state)[player_id] != wanted[depth]:
            return None
        if depth == len(events) - 1:
            return []
        own = events[depth]["action"]
        if (get_current_player(state) == player_id) != (own is not None):
            return None
        options = [own] if own is not None else list(get_legal_actions(state))
        rng.shuffle(options)
        for action in options:
            rest = walk(apply_action(state, action), depth + 1)
            if rest is not None:
                return [action] + rest
        return None

    found = walk(get_initial_state(), 0)
    if found is None:
        raise ValueError("no consistent history")
    return found
'''
