"""The hidden-state variant (``resample_state``): its checks on data, its contract, its synthesis target and
planning with it. The inference functions are hand-written test fixtures (a state reached by the
search-based history fixture, and broken variants), not LLM output."""

from __future__ import annotations

import pytest

from cwm import games
from cwm.agents.base import RandomAgent
from cwm.agents.cwm import CWMAgent, inference_sampler
from cwm.arena import play_match
from cwm.checks.inference import run_inference_checks
from cwm.contract import INFERENCE_API, resampler
from cwm.games import trajectories
from cwm.llm import ScriptedClient
from cwm.model import WorldModel
from cwm.sandbox import Sandbox, load_source
from cwm.synthesis import SynthesisSettings
from cwm.synthesis.inference import synthesize_inference
from cwm.types import ModelLoadError, UsageError
from planners.config import SearchConfig

from .conftest import model_search_inference
from .test_inference_checks import SEARCH_INFERENCE_SOURCE

# a module defining only resample_state: the state the history search reaches, as a model state
STATE_SOURCE = SEARCH_INFERENCE_SOURCE.replace("def resample_history(", "def _history(") + '''

def resample_state(events, player_id, seed):
    """HAND-WRITTEN TEST FIXTURE: the state at the end of a consistent history."""
    state = get_initial_state()
    for action in _history(events, player_id, seed):
        state = apply_action(state, action)
    return state
'''


def _views(games_):  # noqa: ANN001, ANN202
    return [trajectories.closed_view(t, p) for t in games_ for p in range(t.num_players)]


def _state_of(module):  # noqa: ANN001, ANN202
    history = model_search_inference(module)

    def resample_state(events, player_id, seed):  # noqa: ANN001, ANN202
        state = module.get_initial_state()
        for action in history(events, player_id, seed):
            state = module.apply_action(state, action)
        return state

    return resample_state


def test_a_consistent_state_passes_every_check(leduc_games, leduc_module):
    report = run_inference_checks(WorldModel(leduc_module), _state_of(leduc_module), _views(leduc_games),
                                  kind="state")
    assert report.all_passed and report.by_type["inference"].total > 8, report.summary()


def _earlier(module):  # noqa: ANN001, ANN202
    """A state one event too early: the player's previous state (or the initial one)."""
    real = _state_of(module)
    return lambda events, p, seed: real(events[:-1] or events, p, seed)


@pytest.mark.parametrize("broken,fragment", [
    (_earlier, "observation differs"),
    (lambda m: lambda e, p, s: m.get_initial_state(), "observation differs"),
    (lambda m: lambda e, p, s: ["not", "a", "state"], "resample_state: "),
    (lambda m: lambda e, p, s: {"x": float("nan")}, "resample_state: "),
    (lambda m: lambda e, p, s: 1 / 0, "resample_state raised an exception"),
], ids=["one-state-early", "initial-state", "not-a-dict", "nan", "raises"])
def test_a_wrong_state_fails_with_the_step_and_the_reason(broken, fragment, leduc_games, leduc_module):
    report = run_inference_checks(WorldModel(leduc_module), broken(leduc_module), _views(leduc_games), kind="state")
    assert not report.all_passed
    text = report.failures[0].render()
    assert "resample_state(events[:" in text and fragment in text, text


def test_the_other_players_turn_is_caught(leduc_games, leduc_module):
    real = _state_of(leduc_module)

    def opponent_to_move(events, player, seed):  # noqa: ANN001, ANN202
        state = real(events, player, seed)
        return leduc_module.apply_action(state, leduc_module.get_legal_actions(state)[0])

    report = run_inference_checks(WorldModel(leduc_module), opponent_to_move, _views(leduc_games), kind="state")
    assert not report.all_passed
    assert any("turn, not the player's" in f.diff or "observation differs" in f.diff for f in report.failures)


def test_a_state_module_meets_the_inference_contract_and_neither_is_refused(leduc_source):
    module = load_source(leduc_source + STATE_SOURCE, name="state_inf", api=INFERENCE_API)
    assert resampler(module)[0] == "state"
    with pytest.raises(ModelLoadError, match=r"resample_history \(or resample_state, the hidden-state variant\)"):
        load_source("X = 1\n", name="neither", api=INFERENCE_API)


def test_the_sandbox_checks_the_state_variant(leduc_games, leduc_source):
    with Sandbox() as box:
        alone = box.check_inference(leduc_source + STATE_SOURCE, _views(leduc_games[:2]), model_source=leduc_source)
        # a module with both functions is checked as what the target asks for
        both = leduc_source + SEARCH_INFERENCE_SOURCE + STATE_SOURCE.replace("return state\n", "return {}\n")
        as_state = box.check_inference(both, _views(leduc_games[:2]), model_source=leduc_source, kind="state")
        as_history = box.check_inference(both, _views(leduc_games[:2]), model_source=leduc_source)
    assert alone.all_passed and alone.executed > 0, alone.summary()
    assert not as_state.all_passed and as_history.all_passed


def test_state_inference_is_synthesized_from_its_own_prompts(tmp_path, leduc_source):
    lazy = "def resample_state(events, player_id, seed):\n    return get_initial_state()\n"
    replies = [f"```python\n{leduc_source}\n{lazy}\n```", f"```python\n{leduc_source}\n{STATE_SOURCE}\n```"]
    llm = ScriptedClient(replies, model="scripted-state-inference")
    result = synthesize_inference("leduc_poker", llm, SynthesisSettings.of("inference", budget=3, num_train=2, num_test=2, hidden="state"), run_dir=tmp_path / "run", world_model=leduc_source)
    assert result.solved and result.llm_calls == 2 and result.test_accuracy == 1.0
    prompt = sorted((tmp_path / "run" / "calls").glob("*.prompt.md"))[0].read_text()
    assert "resample_state(events: list[dict], player_id: int, seed: int) -> dict" in prompt
    assert "Return one state of the world model below" in prompt
    assert "Return every action from the initial state" not in prompt  # the history target's duties
    with pytest.raises(UsageError, match="open deck only"):
        synthesize_inference("leduc_poker", llm, SynthesisSettings.of("inference", deck="closed", hidden="state"), run_dir=tmp_path / "joint")


def test_planning_on_sampled_states_plays_without_falling_back(leduc_source):
    module = load_source(leduc_source + STATE_SOURCE, name="state_planner")
    world = WorldModel(module, name="leduc_state")
    game = games.load_game("leduc_poker")
    config = SearchConfig(num_simulations=30, rollouts=1, seed=0)
    for i in range(4):
        agent = CWMAgent(world, "leduc_poker", config,
                         sampler=inference_sampler(world, module.resample_state, "state"), seed=i)
        seats = [agent, RandomAgent(seed=i)] if i % 2 == 0 else [RandomAgent(seed=i), agent]
        returns, forfeit, kind, reason, moves = play_match(game, seats, seed=i)
        assert forfeit is None, reason
        stats = agent.stats()
        assert stats["fallback_moves"] == 0 and stats["draws"] > 0 and stats["rejected_draws"] == 0, stats
