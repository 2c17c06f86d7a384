"""One contract in planning (issue 14, cases 1, 3, 4, 9 and 10): what the checks accept, the planners accept
(ISMCTS keys of a model with float observations match), what a model's helper functions return is held to
the same rules (value functions: finite, never modifying their state), samplers cannot forfeit a match or
swallow its timer, and rollouts end on a model that never does.

Models are the known-good ones in tests/data with small patches, or tiny inline modules.
"""

from __future__ import annotations

import os
import time
from pathlib import Path

import numpy as np
import pyspiel
import pytest

from cwm import games, model
from cwm.agents import CWMAgent, RandomAgent, inference_sampler
from cwm.agents.cwm import HistoryTracker, PlayerView
from cwm.agents.specs import Settings, make_agent
from cwm.arena import play_match
from cwm.bundle import export_bundle
from cwm.games import trajectories
from cwm.sandbox import load_source
from cwm.sandbox.budget import call_budget
from planners import ISMCTS, MCTS
from planners.config import SearchConfig

DATA = Path(__file__).resolve().parent.parent / "data"
LEDUC = pyspiel.load_game("leduc_poker")


def _model(game, path, *patch, guard=model.direct_guard):
    source = (DATA / path).read_text(encoding="utf-8")
    if patch:
        assert source.count(patch[0]) == 1
        source = source.replace(*patch)
    return model.WorldModel(load_source(source, name=Path(path).stem),
                            codec=model.ActionCodec.from_game(games.load_game(game)), name=Path(path).stem, guard=guard)


class _Watched:
    """An agent whose last real state is kept in ``real["state"]`` (for samplers that cheat, exactly)."""

    def __init__(self, agent, real):
        self.agent, self.real = agent, real

    def step(self, state):
        self.real["state"] = state
        return self.agent.step(state)


def _real_world(real, player, rng):
    return real["state"].resample_from_infostate(player, pyspiel.UniformProbabilitySampler(
        int(rng.integers(2**31)), 0.0, 1.0))


def _exact_sampler(wm, real):
    """Draws a world from the real state's information set and replays its ids into the model."""

    def sample(view, player, rng):
        state = wm.new_initial_state()
        for a in _real_world(real, player, rng).history():
            state = state.child(a)
        return state

    return sample


def _strings(world):
    """The action strings of a real state's history."""
    replay = world.get_game().new_initial_state()
    out = []
    for a in world.history():
        out.append(replay.action_to_string(replay.current_player(), a))
        replay.apply_action(a)
    return out


# -- case 1: observations with ints written as floats ------------------------------------------------------


@pytest.mark.parametrize("game,path,patch", [
    ("leduc_poker", "reference/leduc_poker_model.py", ('"round": state["round"],', '"round": float(state["round"]),')),
    ("quadranto", "games/quadranto_cwm.py", ('"moves_made": state["moves"]', '"moves_made": float(state["moves"])')),
])
def test_case1_cwm_agent_on_float_observations_accepts_every_exact_draw(game, path, patch):
    wm = _model(game, path, *patch)
    real: dict = {}
    agent = CWMAgent(wm, game, SearchConfig(num_simulations=20, rollouts=1), sampler=_exact_sampler(wm, real), seed=0)
    for i in range(3):
        seats = [_Watched(agent, real), RandomAgent(seed=i)]
        seats = seats if i % 2 == 0 else seats[::-1]
        returns, forfeit, kind, reason, _ = play_match(games.load_game(game), seats, seed=i)
        assert forfeit is None, reason
    search = agent.ismcts
    assert search is not None and search.failed_draws == 0, f"{search.failed_draws} draws rejected"
    assert search.draws >= 20 * 3 and search.fallbacks == 0


# -- cases 3 and 4: value functions are held to the contract --------------------------------------------


@pytest.mark.parametrize("body,reason", [
    ('    state["board"][0] = "x"\n    return 0.0\n', "read-only"),
    ('    return float("nan")\n', "get_value must be finite, got nan"),
], ids=["modifies-its-state", "nan"])
def test_case3_case4_a_bundle_value_function_that_modifies_its_state_or_returns_nan_fails(body, reason, tmp_path):
    source = (DATA / "planners" / "ttt_model.py").read_text()
    bundle = export_bundle(tmp_path / "ttt", game="tic_tac_toe", model_source=source,
                           train=trajectories.collect("tic_tac_toe", 3, seed=0),
                           extra_sources={"value.py": f"def get_value(state, player_id):\n{body}"})
    ttt = pyspiel.load_game("tic_tac_toe")
    for trust in (True, False):  # in this process, and contained in a planning worker
        agent = make_agent(f"cwm:{bundle}", "tic_tac_toe", seed=0,
                           settings=Settings(search=SearchConfig(num_simulations=30, rollouts=1), trust_models=trust))
        if trust:
            assert agent.mcts is not None and agent.mcts.value_fn is not None  # with the bundle's value
        returns, forfeit, kind, got_reason, _ = play_match(ttt, [agent, RandomAgent(seed=0)], seed=0)
        getattr(agent, "close", lambda: None)()
        assert forfeit == 0 and reason in got_reason, got_reason


# -- case 9: samplers --------------------------------------------------------------------------------------


def _leduc_after_deal():
    state = LEDUC.new_initial_state()
    state.apply_action(0)
    state.apply_action(3)
    return state


def _raises_key_error(view, player, rng):
    raise KeyError("no such card")


def test_case9_sampler_raising_key_error_is_a_failed_draw_not_a_forfeit():
    search = ISMCTS(SearchConfig(num_simulations=30), sampler=_raises_key_error, seed=0)
    state = _leduc_after_deal()
    result = search.search(state)
    assert result.fallback and result.action in state.legal_actions() and search.failed_draws == 10
    agent = CWMAgent(_model("leduc_poker", "reference/leduc_poker_model.py"), "leduc_poker",
                     SearchConfig(num_simulations=30, rollouts=1), sampler=_raises_key_error, seed=0)
    for i in range(4):
        returns, forfeit, kind, reason, moves = play_match(LEDUC, [agent, RandomAgent(seed=i)], seed=i)
        assert forfeit is None, reason
    assert agent.stats()["fallback_moves"] == agent.stats()["rejected_draws"] // 10 > 0


def test_case9_the_arena_move_timeout_is_never_swallowed_by_a_sampler():
    entered = []

    def spins_until_interrupted(view, player, rng):
        entered.append(time.process_time())
        if len(entered) > 1:
            raise ValueError("called again after the move's time was up")
        while time.process_time() - entered[0] < 5.0:  # a real sampler stuck in a loop; 5 s of CPU caps the test
            pass
        raise ValueError("never interrupted")

    agent = CWMAgent(_model("leduc_poker", "reference/leduc_poker_model.py"), "leduc_poker",
                     SearchConfig(num_simulations=30, rollouts=1), sampler=spins_until_interrupted, seed=0)
    start = _cpu_with_children()
    returns, forfeit, kind, reason, moves = play_match(LEDUC, [agent, RandomAgent(seed=0)], seed=0, move_time_limit=0.3)
    assert (forfeit, kind) == (0, "timeout"), reason
    assert "the move used more than its limit of 0.3 s of CPU time" in reason
    assert len(entered) == 1, f"the sampler ran {len(entered)} times: the timer's interrupt was caught as a failed draw"
    # CPU time, not wall time: the interrupt came at the move's 0.3 s of CPU however busy the machine is
    assert _cpu_with_children() - start < 2.0


def _cpu_with_children() -> float:
    """CPU seconds this process and its reaped children have used (user and system)."""
    t = os.times()
    return t.user + t.system + t.children_user + t.children_system


def test_case9_sampler_gets_a_deep_copy_of_the_agents_history():
    wm = _model("leduc_poker", "reference/leduc_poker_model.py")
    real: dict = {}
    mutated = []

    def resample_history(events, player, seed):
        for event in events:  # an inference function that scribbles on what it was given
            event["observation"]["private"] = "scribbled"
            event["observation"].setdefault("mine", []).append(seed)
        mutated.append(len(events))
        return _strings(_real_world(real, player, np.random.default_rng(seed)))

    agent = CWMAgent(wm, "leduc_poker", SearchConfig(num_simulations=20, rollouts=1),
                     sampler=inference_sampler(wm, resample_history), seed=0)
    spec = games.resolve("leduc_poker")
    for i in range(3):
        returns, forfeit, kind, reason, _ = play_match(LEDUC, [_Watched(agent, real), RandomAgent(seed=i)], seed=i)
        assert forfeit is None, reason
        fresh = HistoryTracker(spec, 0)
        fresh.sync(real["state"])
        assert agent._tracker.events == fresh.events  # the agent's own record is untouched
    assert mutated and agent.ismcts.failed_draws == 0  # so every later root key was right


def _leduc_view(wm):
    state = _leduc_after_deal()
    tracker = HistoryTracker(games.resolve("leduc_poker"), 0)
    tracker.sync(state)
    return PlayerView(wm, tracker.events, 0, [state.action_to_string(0, a) for a in state.legal_actions()])


def _spin(seconds):
    """Spins for ``seconds`` of this thread's CPU time (what a per-call budget counts)."""
    start = time.thread_time()
    while time.thread_time() - start < seconds:
        pass


@pytest.mark.parametrize("returns", ["generator", "list"])
def test_case9_resample_history_runs_inside_the_time_budget(returns):
    """A stuck inference function is stopped by the per-call budget (0.1 s) whether it spins before returning
    a list or inside a generator it returns: a generator is refused (the contract asks for a list) before
    its body runs, so nothing it does escapes the budget."""
    wm = _model("leduc_poker", "reference/leduc_poker_model.py", guard=call_budget(0.1))
    runs = []

    def as_generator(events, player, seed):
        runs.append(seed)
        _spin(1.5)
        yield "Chance outcome:0"

    def as_list(events, player, seed):
        runs.append(seed)
        _spin(1.5)
        return ["Chance outcome:0"]

    search = ISMCTS(SearchConfig(num_simulations=5, max_sample_tries=2), seed=0,
                    sampler=inference_sampler(wm, as_generator if returns == "generator" else as_list))
    start = time.thread_time()
    result = search.search(_leduc_view(wm))
    assert result.fallback and search.failed_draws == 2
    assert time.thread_time() - start < 1.0, "the inference function ran past its budget"  # CPU, not wall
    assert len(runs) == (0 if returns == "generator" else 2)


# -- case 10: rollouts have a step cap ---------------------------------------------------------------------

NEVER_ENDS = '''
SQUARES = [f"({r},{c})" for r in range(3) for c in range(3)]
def get_initial_state():
    return {"moves": 0}
def get_current_player(state):
    return state["moves"] % 2
def get_legal_actions(state):
    return [("x" if state["moves"] % 2 == 0 else "o") + s for s in SQUARES]
def get_chance_outcomes(state):
    return []
def apply_action(state, action):
    return {"moves": state["moves"] + 1}
def get_observations(state):
    return [state, state]
def get_rewards(state):
    return [0.0, 0.0]
'''


class _CountingApply:
    def __init__(self):
        self.applied = 0

    def __call__(self, fn, *args):
        self.applied += fn.__name__ == "apply_action"
        return fn(*args)


def _never_ends(guard):
    return model.WorldModel(load_source(NEVER_ENDS, name="never_ends"), name="never_ends", guard=guard,
                            codec=model.ActionCodec.from_game(pyspiel.load_game("tic_tac_toe")))


@pytest.mark.timeout(30)
def test_case10_cwm_agent_on_a_model_that_never_ends_finishes_its_simulations_within_the_game_length():
    counting = _CountingApply()
    agent = CWMAgent(_never_ends(counting), "tic_tac_toe", SearchConfig(num_simulations=1, rollouts=3), seed=0)
    real = pyspiel.load_game("tic_tac_toe").new_initial_state()
    assert agent.step(real) in real.legal_actions()
    # one expansion, then three rollouts of the game's maximum length (9 moves) each
    assert counting.applied == 1 + 3 * 9


@pytest.mark.timeout(30)
@pytest.mark.parametrize("cap", [1, 5, None])
def test_case10_max_rollout_steps_caps_every_rollout(cap):
    counting = _CountingApply()
    state = _never_ends(counting).new_initial_state()
    search = MCTS(SearchConfig(num_simulations=1, rollouts=3, max_rollout_steps=cap), seed=0)
    assert search.search(state).simulations == 1
    assert counting.applied == 1 + 3 * (cap or 10_000)  # without a cap or a game length: 10,000 moves
