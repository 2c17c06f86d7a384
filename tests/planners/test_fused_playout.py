"""A twin's own playout loop (cwm.contract.PLAYOUT) plays a planner's rollouts in one call: on the hand-written
tic-tac-toe twin (tests/data/twins/ttt_fused.py) its rollouts are those of cwm stepping the reference model with
the same draws, so a seeded MCTS move is the same move, in process and in a contained planning worker; its
answer is held to the contract (a hostile playout is refused, a spinning one stopped); without ``playout``
nothing changes."""

from __future__ import annotations

import math
import random
from pathlib import Path

import numpy as np
import pyspiel
import pytest

from cwm.agents.worker import WorkerAgent
from cwm.model import ActionCodec, WorldModel
from cwm.sandbox import load_source
from cwm.types import AgentError, ModelContractError
from planners import SearchConfig
from planners.mcts import MCTS
from planners.rollout import playout, rollout_returns
from planners.settings import MCTSSettings

DATA = Path(__file__).resolve().parents[1] / "data"
MODEL = (DATA / "reference" / "tic_tac_toe_model.py").read_text(encoding="utf-8")
FUSED = (DATA / "twins" / "ttt_fused.py").read_text(encoding="utf-8")


def _states(model: WorldModel, count: int, seed: int) -> list:
    """Seeded random positions of a model (the initial state among them), terminal ones included."""
    rng, out = random.Random(seed), []
    for _ in range(count):
        state = model.new_initial_state()
        for _ in range(rng.randrange(10)):
            if state.is_terminal():
                break
            state = state.child_from_string(rng.choice(state.legal_action_strings()))
        out.append(state)
    return out


def _pair(twin_source: str = FUSED) -> tuple[WorldModel, WorldModel]:
    """The reference model and the twin planning with its playout, both with the game's action ids."""
    codec = ActionCodec.from_game(pyspiel.load_game("tic_tac_toe"))
    return (WorldModel(load_source(MODEL, name="ref"), codec=codec),
            WorldModel(load_source(twin_source, name="twin"), codec=codec, playout=True))


def test_a_fused_rollout_is_the_stepped_rollout_of_the_model_draw_for_draw() -> None:
    model, twin = _pair()
    assert twin.fused and not model.fused
    compared = 0
    for ref in _states(model, 40, seed=1):
        state = twin.new_initial_state()
        for action in ref.history_strings():
            state = state.child_from_string(action)
        for seed, limit in ((seed, limit) for seed in range(3) for limit in (1, 2, 4, 100)):
            a, b = random.Random(seed), random.Random(seed)
            (got, end), (want, cut) = playout(state, a, limit), playout(ref, b, limit)
            assert got == want and a.random() == b.random()  # the same returns and the same draws consumed
            assert (end is None) == (cut is None)
            if end is not None:
                assert end.observations() == cut.observations() and end.returns() == cut.returns()
                assert end.legal_action_strings() == cut.legal_action_strings()
            compared += 1
    assert compared == 480


def test_a_seeded_mcts_move_on_the_fused_twin_is_the_move_on_the_model() -> None:
    model, twin = _pair()
    moves = []
    for ref in _states(model, 8, seed=2):
        if ref.is_terminal():
            continue
        state = twin.new_initial_state()
        for action in ref.history_strings():
            state = state.child_from_string(action)
        results = [MCTS(MCTSSettings(num_simulations=300, rollouts=1), seed=5).search(s) for s in (ref, state)]
        assert results[0].action == results[1].action
        assert results[0] == results[1]  # the same visits and values at the root
        moves.append(results[0].action)
    assert len(moves) >= 5 and len(set(moves)) > 1


@pytest.mark.parametrize("answer, said", [
    ("(returns,)", "must return a pair"),
    ("([0.0], None)", "a list of 2 finite numbers"),
    ("([float('nan'), 0.0], None)", "a list of 2 finite numbers"),
    ("([Sly(1.0), 0.0], None)", "a list of 2 finite numbers"),
    ("(['1', 0.0], None)", "a list of 2 finite numbers"),
    ("([True, 0.0], None)", "a list of 2 finite numbers"),
    ("([0.0, float('inf')], None)", "a list of 2 finite numbers"),
    ("([0.0, Sly(1.0)], None)", "a list of 2 finite numbers"),
    ("([1, True], None)", "a list of 2 finite numbers"),
    ("([1.0, 2 ** 2000], None)", "a list of 2 finite numbers"),
    ("(returns, {'board': float('inf')})", "in a rollout"),
])
def test_a_hostile_playout_answer_is_a_contract_breach(answer: str, said: str) -> None:
    hostile = FUSED + f"\n\nclass Sly(float):\n    pass\n\n\ndef playout(state, returns, rand, limit):\n    return {answer}\n"
    _, twin = _pair(hostile)
    with pytest.raises(ModelContractError, match=said) as e:
        rollout_returns(twin.new_initial_state(), 1, random.Random(0))
    assert "in a rollout" in str(e.value)


def test_exact_int_playout_returns_count_as_floats() -> None:
    ints = FUSED + "\n\ndef playout(state, returns, rand, limit):\n    return [1, -1], None\n"
    got = rollout_returns(_pair(ints)[1].new_initial_state(), 1, random.Random(0))
    assert got == [1.0, -1.0] and all(type(x) is float for x in got)


def test_without_playout_a_twin_is_stepped_as_before() -> None:
    model = WorldModel(load_source(FUSED, name="twin"))  # not asked to use it
    assert not model.fused and "playout" not in model.bound
    hostile = FUSED + "\n\ndef playout(state, returns, rand, limit):\n    return None\n"
    stepped = WorldModel(load_source(hostile, name="twin"))
    state = stepped.new_initial_state()
    assert all(math.isfinite(x) for x in rollout_returns(state, 5, random.Random(0)))


def _position(moves: int, seed: int) -> pyspiel.State:
    state, rng = pyspiel.load_game("tic_tac_toe").new_initial_state(), np.random.default_rng(seed)
    for _ in range(moves):
        state.apply_action(int(rng.choice(state.legal_actions())))
    return state


def test_a_contained_worker_plays_the_fused_twins_rollouts_and_its_moves_are_the_models() -> None:
    config = SearchConfig(num_simulations=200, rollouts=1)
    sources = {"model.py": MODEL, "twin.py": FUSED}
    twin = WorkerAgent(sources, "tic_tac_toe", config, name="twin", seed=3, use_twin="playout")
    model = WorkerAgent(sources, "tic_tac_toe", config, name="model", seed=3, use_twin=False)
    try:
        for moves in range(0, 6, 2):
            state = _position(moves, seed=moves)
            for agent in (twin, model):
                agent.reset()
            assert twin.step(state.clone()) == model.step(state.clone())
    finally:
        twin.close()
        model.close()
    # the worker calls the twin's playout: one that answers NaN stops the move with the breach named
    hostile = FUSED + "\n\ndef playout(state, returns, rand, limit):\n    return [float('nan'), 0.0], None\n"
    spins = FUSED + "\n\ndef playout(state, returns, rand, limit):\n    while True:\n        pass\n"
    for source, said in ((hostile, "2 finite numbers"), (spins, "more than its budget of 2 s of CPU time")):
        agent = WorkerAgent({"model.py": MODEL, "twin.py": source}, "tic_tac_toe", config, name="bad", seed=3,
                            move_cpu_s=2.0, use_twin="playout")
        try:
            with pytest.raises(AgentError, match=said):
                agent.step(_position(0, 0))
        finally:
            agent.close()


def test_a_worker_not_told_the_playout_was_checked_never_calls_it() -> None:
    """A twin's playout plays only where the trusted side read a passing check of it in the evidence
    (``use_twin="playout"``): otherwise the twin is stepped, whatever the module binds."""
    config = SearchConfig(num_simulations=100, rollouts=1)
    state = _position(0, 0)
    spins = FUSED + "\n\ndef playout(state, returns, rand, limit):\n    while True:\n        pass\n"
    matched = FUSED + "\n\ndef _p(state, returns, rand, limit):\n    while True:\n        pass\n\n\n" \
                      "match _p:\n    case playout:\n        pass\n"
    for source in (spins, matched):
        agent = WorkerAgent({"model.py": MODEL, "twin.py": source}, "tic_tac_toe", config, name="twin", seed=3,
                            move_cpu_s=2.0)
        try:
            assert agent.planned_on == "twin.py" and agent.step(state.clone()) in state.legal_actions()
        finally:
            agent.close()


@pytest.mark.parametrize("fused", [True, False])
def test_the_evaluators_model_path_is_rollout_returns_draw_for_draw(fused: bool) -> None:
    # RolloutEvaluator takes model_rollout for a model state with one rollout and no value function: the same
    # returns and the same draws consumed as the general rollout_returns, fused or stepped, at every cutoff
    from planners.evaluators import RolloutEvaluator

    model = _pair()[1] if fused else _pair()[0]
    for state in _states(model, 25, seed=7):
        for seed, limit in ((seed, limit) for seed in range(3) for limit in (1, 3, 100)):
            a, b = random.Random(seed), random.Random(seed)
            got, prior = RolloutEvaluator(1, limit).evaluate(state, a)
            assert prior is None and got == rollout_returns(state, 1, b, limit) and a.random() == b.random()
            assert type(got) is list and all(type(x) is float for x in got)


def test_the_evaluators_model_path_words_a_hostile_playout_as_the_general_path_does() -> None:
    from planners.evaluators import RolloutEvaluator

    hostile = FUSED + "\n\ndef playout(state, returns, rand, limit):\n    return [float('nan'), 0.0], None\n"
    state = _pair(hostile)[1].new_initial_state()
    with pytest.raises(ModelContractError, match="in a rollout") as fast:
        RolloutEvaluator(1).evaluate(state, random.Random(0))
    with pytest.raises(ModelContractError) as general:
        rollout_returns(state, 1, random.Random(0))
    assert str(fast.value) == str(general.value)
