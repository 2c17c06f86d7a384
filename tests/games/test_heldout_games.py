"""What every held-out game of ``experiments/heldout/`` (Cairn, Kestrel) must pass, as the other own games do:
OpenSpiel's simulation test, cwm's oracle checks through the module spec, resampling that keeps a player's
information state, illegal actions refused with the state unchanged; each stays out of the registry, reads its
rulebook beside it, and that rulebook holds no specification. Each game's own rules are tested in its file."""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np
import pyspiel
import pytest

from cwm import checks, games
from cwm.games import oracle, trajectories

ROOT = Path(__file__).resolve().parents[2]
if str(ROOT) not in sys.path:  # the experiments folder is not installed
    sys.path.append(str(ROOT))
from experiments.heldout import cairn, kestrel  # noqa: E402
from tests.games.test_prose_rules import offences  # noqa: E402

# module, game class, action count, and the fewest resampled states and illegal tries each test must reach
GAMES = {"cairn": (cairn, cairn.CairnGame, cairn.NUM_ACTIONS, 50, 1000),
         "kestrel": (kestrel, kestrel.KestrelGame, kestrel.NUM_ACTIONS, 40, 500)}


def module_spec(name: str) -> str:
    return f"{ROOT / 'experiments' / 'heldout' / name}.py:{name}"


def random_games(name: str, n: int, seed: int):
    """Yields (states along the game, final state) of ``n`` uniformly random games of ``name``."""
    game = GAMES[name][1]()
    rng = np.random.default_rng(seed)
    for _ in range(n):
        state, path = game.new_initial_state(), []
        while not state.is_terminal():
            path.append(state.clone())
            legal = [a for a, _ in state.chance_outcomes()] if state.is_chance_node() else state.legal_actions()
            state.apply_action(legal[rng.integers(len(legal))])
        yield path, state


@pytest.mark.parametrize("name", GAMES)
def test_openspiel_random_sim_test(name):
    pyspiel.random_sim_test(GAMES[name][1](), num_sims=10, serialize=True, verbose=False)


@pytest.mark.parametrize("name", GAMES)
def test_oracle_passes_every_check_through_the_module_spec(name):
    spec = games.resolve(module_spec(name))
    assert (spec.players, spec.information, spec.stochastic) == (2, "imperfect", True)
    report = checks.run_checks(oracle.oracle_model(module_spec(name)), trajectories.collect(module_spec(name), 5, seed=0))
    assert report.all_passed and report.transitions_total > 100, report.summary()
    play_report = checks.random_play_checks(oracle.oracle_model(module_spec(name)), num_games=3, seed=0)
    assert play_report.all_passed, play_report.summary()


@pytest.mark.parametrize("name", GAMES)
def test_it_stays_out_of_the_registry_and_reads_its_rulebook_beside_it(name):
    assert name not in {s.name for s in games.registered()}
    rulebook = ROOT / "experiments" / "heldout" / f"{name}.md"
    assert games.rules_text(games.resolve(module_spec(name))) == rulebook.read_text(encoding="utf-8")


@pytest.mark.parametrize("name", GAMES)
def test_the_rulebook_holds_no_specification(name):
    """None of the specification tier's markers, no observation key of its own, no action ids."""
    text = (ROOT / "experiments" / "heldout" / f"{name}.md").read_text(encoding="utf-8")
    assert offences(text) == []
    keys = [k for k in GAMES[name][1]().new_initial_state().observation_dict(0) if "_" in k]
    assert len(keys) >= 3 and [k for k in keys if k in text] == []
    assert "action id" not in text.lower() and "json" not in text.lower()


@pytest.mark.parametrize("name", GAMES)
@pytest.mark.parametrize("seed", [0, 1])
def test_resample_keeps_the_information_state(name, seed):
    """Every resampled state gives the player the same information state, and resampling does vary."""
    sampler = pyspiel.UniformProbabilitySampler(seed, 0.0, 1.0)
    changed = checked = 0
    for path, final in random_games(name, 4, seed=seed):
        for state in [*path[::3], final]:
            for p in (0, 1):
                other = state.resample_from_infostate(p, sampler)
                assert other.information_state_string(p) == state.information_state_string(p), state.history()
                if not state.is_terminal() and state.current_player() == p:
                    assert other.legal_actions() == state.legal_actions()
                changed += other.history() != state.history()
                checked += 1
    assert checked > GAMES[name][3] and changed > checked // 4


@pytest.mark.parametrize("name", GAMES)
def test_illegal_actions_raise_and_leave_the_state_unchanged(name):
    ids = [a for a in range(-2, GAMES[name][2] + 1) if a != -1]  # -1 (kInvalidAction): OpenSpiel's own
    tried = 0
    for path, final in random_games(name, 2, seed=3):
        for state in [*path, final]:
            legal = set() if state.is_terminal() else (
                {a for a, _ in state.chance_outcomes()} if state.is_chance_node() else set(state.legal_actions()))
            before = (str(state), state.history())
            for action in [a for a in ids if a not in legal]:
                with pytest.raises(ValueError, match=f"{name}: action {action} is not legal"):
                    state.apply_action(action)
                assert (str(state), state.history()) == before
                tried += 1
    assert tried > GAMES[name][4]
