"""What the world-model, inference and joint prompts say, and what their requests are tagged, asserted on the
requests a scripted session sent (the hand-written Quadranto replies of cwm/data/recordings/README.md) and on
the checks those sessions ran: a prompt describes exactly the checks its target runs."""

from __future__ import annotations

from pathlib import Path

import pytest

from cwm.llm import ScriptedClient
from cwm.sandbox.checkers import RANDOM_GAMES
from cwm.synthesis import SynthesisSettings, synthesize_world_model
from cwm.synthesis.inference import synthesize_inference

REPLIES = Path(__file__).resolve().parents[1] / "data" / "synthesis" / "quadranto"
EARLIER_VERSION = "even one that does not change"


def _replies(*names: str) -> list[str]:
    return [(REPLIES / f"{n}.md").read_text(encoding="utf-8") for n in names]


@pytest.fixture(scope="module")
def open_deck(tmp_path_factory: pytest.TempPathFactory) -> tuple[list, list, object]:
    """The world-model session's requests, the open-deck inference session's requests and its result."""
    run = tmp_path_factory.mktemp("open")
    llm = ScriptedClient(_replies("world_model_1_initial", "world_model_2_fixed"))
    world = synthesize_world_model("quadranto", llm, SynthesisSettings.of("world_model", num_test=0, isolate=False),
                                   run_dir=run / "wm")
    inf = ScriptedClient(_replies("inference_1_initial", "inference_2_fixed", "inference_3_caught"))
    result = synthesize_inference("quadranto", inf, SynthesisSettings.of("inference", num_test=0, isolate=False),
                                  run_dir=run / "inf", world_model=world.best_source)
    return llm.calls, inf.calls, result


@pytest.fixture(scope="module")
def joint(tmp_path_factory: pytest.TempPathFactory) -> tuple[list, object]:
    llm = ScriptedClient(_replies("joint_1_initial", "joint_2_refined"))
    result = synthesize_inference("quadranto", llm, SynthesisSettings.of("inference", deck="closed", num_test=0,
                                                                           isolate=False),
                                  run_dir=tmp_path_factory.mktemp("joint"))
    return llm.calls, result


def _text(request: object) -> str:
    return request.messages[-1].text  # type: ignore[attr-defined]


def _flat(request: object) -> str:
    """The request's last message with its lines joined (the templates wrap sentences)."""
    return " ".join(_text(request).split())


def test_only_a_refinement_asks_to_keep_the_functions_of_an_earlier_version(open_deck, joint) -> None:
    world, inference, _ = open_deck
    for calls in (world, inference, joint[0]):
        first, *refinements = calls
        assert EARLIER_VERSION not in _flat(first)
        assert refinements and all(EARLIER_VERSION in _flat(r) for r in refinements)


def test_each_target_tags_its_requests_with_its_own_name(open_deck, joint) -> None:
    world, inference, _ = open_deck
    assert [r.tag for r in world] == ["synthesis/initial", "synthesis/refine"]
    assert [r.tag for r in inference] == ["inference/initial", "inference/refine", "inference/refine"]
    assert [r.tag for r in joint[0]] == ["joint/initial", "joint/refine"]


def test_the_value_rules_are_shown_only_where_the_candidate_writes_a_world_model(open_deck, joint) -> None:
    world, inference, _ = open_deck
    assert "### The value rules" in _text(world[0]) and "### The value rules" in _text(joint[0][0])
    assert all("### The value rules" not in _text(r) for r in inference)
    # the inference API is still shown, and the world model the histories are replayed in
    assert "def resample_history(" in _text(inference[0]) and "def get_observations(" in _text(inference[0])


def test_the_closed_deck_prompt_says_how_unseen_actions_are_spelt(joint, open_deck) -> None:
    first = _text(joint[0][0])
    # the player's view shows no chance outcome: the prompt must not point at examples that do not exist
    assert "as the example games show them" not in first
    assert "Chance outcomes and the other players' actions are yours to spell" in first
    assert "Spelling what the player never sees" not in _text(open_deck[1][0])


def test_open_deck_inference_is_checked_at_each_games_end_and_its_prompt_says_so(open_deck) -> None:
    _, inference, result = open_deck
    # the end of each game is checked (one check per view), and the prompt says so with its examples
    assert result.solved and result.train_by_type.keys() == {"inference", "inference_terminal"}
    assert "and at the end of each game" in _text(inference[0]) and "where the tests say so" not in _text(inference[0])
    assert "the same game at its end" in _text(inference[0])
    # the second reply passed every check at a state where a player acted and failed only at games' ends,
    # which the old checks never looked at: the third, which reads the last event's flag, passes
    second = _text(inference[2])
    failing = second.split("## Failing tests", 1)[1]
    assert "[inference_terminal]" in failing and "[inference]" not in failing


def test_the_joint_prompt_lists_random_play_which_its_checks_run(joint) -> None:
    calls, result = joint
    assert f"{RANDOM_GAMES} games from `get_initial_state()`" in _text(calls[0])
    assert set(result.train_by_type) == {"inference", "inference_terminal", "random_play"}
