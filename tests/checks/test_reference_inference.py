"""The hand-written reference inference functions (Leduc poker, Quadranto): every history they sample replays,
in their world model, in the oracle model and in the ground truth, to the player's observations and own
actions; they are seeded; their belief is the true posterior (the posterior check, cwm.checks.posterior); the
Leduc inference mutants break reconstruction with the bug they are named after, or (the posterior mutant)
pass it and are caught by the posterior check alone.
"""

from __future__ import annotations

import importlib.util
from pathlib import Path

import numpy as np
import pytest

from cwm import games, model, value_rules
from cwm.agents.cwm import HistoryTracker
from cwm.checks.posterior import PosteriorSettings, posterior_check
from cwm.contract import INFERENCE_API
from cwm.games.hidden import replay
from cwm.games.oracle import oracle_model
from cwm.sandbox import load_source
from cwm.types import CwmError

DATA = Path(__file__).resolve().parent.parent / "data"
CASES = {  # game -> (its reference inference, the world model written for it)
    "leduc_poker": ("reference/leduc_poker_inference.py", "reference/leduc_poker_model.py"),
    "quadranto": ("reference/quadranto_inference.py", "games/quadranto_cwm.py"),
}


def _inference(source, name="inference"):
    """An inference module through the sandbox's static gate, as a bundle's inference.py is loaded."""
    return load_source(source, name=name, api=INFERENCE_API)


def _reference(game):
    return _inference((DATA / CASES[game][0]).read_text(encoding="utf-8"), name=f"{game}_inference")


def _world_model(game):
    source = (DATA / CASES[game][1]).read_text(encoding="utf-8")
    return model.WorldModel(load_source(source, name=f"{game}_model"),
                            codec=model.ActionCodec.from_game(games.load_game(game)), name=f"{game}_model")


def _mutants():
    spec = importlib.util.spec_from_file_location("leduc_mutants", DATA / "reference" / "leduc_poker_inference_mutants.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def model_mismatch(wm, history, player, events):
    """Where replaying ``history`` in world model ``wm`` stops giving ``player``'s events ("" when it never
    does): the first step whose observation or own action differs, or whose move the model refuses."""
    if len(history) != len(events) - 1:
        return f"{len(history)} moves for {len(events)} states"
    state = wm.new_initial_state()
    for k, action in enumerate(history):
        if state.observation(player) != value_rules.canonical(events[k]["observation"]):
            return f"step {k}: observation differs"
        if (state.current_player() == player) != (events[k]["action"] is not None) or (
                events[k]["action"] is not None and events[k]["action"] != action):
            return f"step {k}: own action differs"
        try:
            state = state.child_from_string(action)
        except CwmError as e:
            return f"step {k}: the model refuses {action!r}: {e}"
    return "" if state.observation(player) == value_rules.canonical(events[-1]["observation"]) else \
        f"step {len(history)}: observation differs"


def _views(game, n_games, seed):
    """(player, events, real state) at every decision of ``n_games`` random games, and at every end."""
    spec = games.resolve(game)
    gt = games.load_game(spec)
    rng = np.random.default_rng(seed)
    out = []
    for _ in range(n_games):
        state = gt.new_initial_state()
        while True:
            if not state.is_chance_node():
                players = range(gt.num_players()) if state.is_terminal() else [state.current_player()]
                for p in players:
                    tracker = HistoryTracker(spec, p)
                    tracker.sync(state)
                    out.append((p, tracker.events, state.clone()))
            if state.is_terminal():
                break
            actions = [a for a, _ in state.chance_outcomes()] if state.is_chance_node() else state.legal_actions()
            state.apply_action(actions[rng.integers(len(actions))])
    return out


@pytest.mark.parametrize("game", list(CASES))
def test_every_sampled_history_replays_to_the_players_information(game):
    inference, spec = _reference(game), games.resolve(game)
    models = [_world_model(game), oracle_model(game)]
    views = _views(game, 25, seed=0)
    for player, events, _ in views:
        for seed in range(3):
            history = inference.resample_history(value_rules.thaw(events), player, seed)
            assert replay(spec, history, player, events)[1] == ""
            for wm in models:
                assert model_mismatch(wm, history, player, events) == "", (wm.name, seed, events[-1])
    assert len(views) > 100


@pytest.mark.parametrize("game", list(CASES))
def test_sampling_is_seeded_and_varies_with_the_seed(game):
    inference = _reference(game)
    player, events, _ = next(v for v in _views(game, 3, seed=1) if len(v[1]) > 4 and v[1][-1]["action"] is None)
    assert inference.resample_history(value_rules.thaw(events), player, 7) == inference.resample_history(
        value_rules.thaw(events), player, 7)
    assert len({tuple(inference.resample_history(value_rules.thaw(events), player, s)) for s in range(30)}) > 1


@pytest.mark.parametrize("game", list(CASES))
def test_the_reference_belief_is_the_true_posterior(game):
    report = posterior_check(game, _reference(game).resample_history, PosteriorSettings(games_played=6, states=12, draws=300, seed=0))
    assert report.accuracy == 1.0 and report.skipped == 0 and len(report.states) == 12
    assert all(s.truth == "exact" for s in report.states)
    # the interval includes 0: the draws give no evidence of a wrong belief at 95%
    assert report.lo == 0.0 and report.tv < 0.1, report.summary()


def test_quadranto_point_mass_belief_passes_reconstruction_but_not_the_posterior_check():
    source = (DATA / CASES["quadranto"][0]).read_text(encoding="utf-8")
    old = "_pick(sorted(layers[-1].items()), rng)"
    assert source.count(old) == 1
    mutant = _inference(source.replace(old, "sorted(layers[-1])[0]"))  # always the lowest consistent square
    report = posterior_check("quadranto", mutant.resample_history, PosteriorSettings(games_played=6, states=12, draws=300, seed=0))
    assert report.accuracy == 1.0
    assert report.lo > 0.3, report.summary()


MUTANTS = _mutants().MUTANTS


@pytest.mark.parametrize("name", [n for n, m in MUTANTS.items() if m[2] == "reconstruction"])
def test_leduc_reconstruction_mutants_sample_invalid_histories(name):
    """Each mutant's histories break the player's information where its bug bites, named by step (a mutant may
    also raise, where its bug leaves no card to draw: a failure too)."""
    mutant = _inference(_mutants().source(name), name=name)
    spec, oracle, fragment = games.resolve("leduc_poker"), oracle_model("leduc_poker"), MUTANTS[name][3]
    broken = raised = 0
    for player, events, _ in _views("leduc_poker", 12, seed=0):
        for seed in range(3):
            try:
                history = mutant.resample_history(value_rules.thaw(events), player, seed)
            except IndexError:
                raised += 1
                continue
            why = replay(spec, history, player, events)[1]
            assert (why == "") == (model_mismatch(oracle, history, player, events) == "")
            if why:
                broken += 1
                assert why.startswith("step ") and fragment in why, why
    assert broken >= 10 and raised <= broken, f"{name}: {broken} invalid histories, {raised} raised"


def test_the_posterior_mutant_passes_reconstruction_and_fails_the_posterior_check():
    mutant = _inference(_mutants().source("always_same_deal"), name="always_same_deal")
    spec = games.resolve("leduc_poker")
    for player, events, _ in _views("leduc_poker", 12, seed=0):
        history = mutant.resample_history(value_rules.thaw(events), player, 0)
        assert replay(spec, history, player, events)[1] == ""
    report = posterior_check("leduc_poker", mutant.resample_history, PosteriorSettings(games_played=6, states=12, draws=300, seed=0))
    assert report.accuracy == 1.0
    assert report.lo > 0.3, report.summary()


def test_the_python_example_in_the_beliefs_docs_runs(monkeypatch, capsys):
    import re

    root = Path(__file__).resolve().parents[2]  # the checkout (tests run on an installed cwm)
    blocks = re.findall(r"```python\n(.*?)```", (root / "docs" / "beliefs.md").read_text(encoding="utf-8"), re.S)
    assert len(blocks) == 1
    monkeypatch.chdir(root)
    scope: dict = {}
    exec(compile(blocks[0], "docs/beliefs.md", "exec"), scope)
    assert scope["report"].lo == 0.0 and "leduc_poker (off-policy): posterior TV" in capsys.readouterr().out
