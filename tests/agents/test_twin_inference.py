"""A bundle with an inference that draws action histories plans on its twin: the histories are replayed on the
twin as on the model, so a seeded ISMCTS move (and its sampling record) is the same on either. An inference
that draws states, or a value function, keeps the model (they read or build its own states).

The twin is a hand-written fixture (tests/data/twins/leduc_fast.py), equivalent to the reference Leduc model
by the differential check."""

from __future__ import annotations

import numpy as np
import pyspiel
import pytest

from cwm import games
from cwm.agents.base import AgentError
from cwm.agents.worker import WorkerAgent, planned_on
from cwm.sandbox import Limits
from cwm.sandbox.equivalence import EquivalenceSettings, check_equivalence
from planners.config import SearchConfig

from .conftest import DATA, LEDUC, LEDUC_INFERENCE

TWIN = (DATA / "twins" / "leduc_fast.py").read_text()
SOURCES = {"model.py": LEDUC, "inference.py": LEDUC_INFERENCE, "twin.py": TWIN}
STATE_INFERENCE = "def resample_state(events, player_id, seed):\n    return {}\n"


def _decisions(count: int) -> list[pyspiel.State]:
    """Decision states of seeded random Leduc games, both seats, both rounds."""
    game, rng, out = games.load_game("leduc_poker"), np.random.default_rng(1), []
    while len(out) < count:
        state = game.new_initial_state()
        while not state.is_terminal() and len(out) < count:
            if state.is_chance_node():
                outcomes = state.chance_outcomes()
                state.apply_action(outcomes[int(rng.integers(len(outcomes)))][0])
                continue
            if rng.random() < 0.5:
                out.append(state.clone())
            state.apply_action(int(rng.choice(state.legal_actions())))
    return out


def test_the_fixture_is_a_twin_of_the_reference_model() -> None:
    settings = EquivalenceSettings(p=0.2, delta=0.05, limits=Limits(wall_s=120.0, cpu_s=60.0, memory_mb=1024,
                                                                     per_call_s=1.0))
    evidence = check_equivalence(LEDUC, TWIN, settings=settings)
    assert evidence["verdict"] == "equivalent", evidence["reason"]


def test_an_ismcts_move_on_the_twin_is_the_move_on_the_model_for_the_same_seed() -> None:
    config = SearchConfig(num_simulations=60, rollouts=2)
    twin = WorkerAgent(SOURCES, "leduc_poker", config, name="twin", seed=7)
    model = WorkerAgent(SOURCES, "leduc_poker", config, name="model", seed=7, use_twin=False)
    assert (twin.planned_on, model.planned_on) == ("twin.py", "model.py")
    records = {"twin": [], "model": []}
    try:
        for state in _decisions(8):
            for name, agent in (("twin", twin), ("model", model)):
                agent.reset()
                action = agent.step(state.clone())
                assert action in state.legal_actions()
                kept = {k: v for k, v in agent.log[-1].items() if k not in ("move_wall_s", "move_cpu_s")}
                records[name].append((action, kept))
    finally:
        twin.close()
        model.close()
    assert records["twin"] == records["model"]
    assert all(r["draws"] > 0 and r["rejected_draws"] == 0 for _, r in records["twin"])
    assert len({a for a, _ in records["twin"]}) > 1  # not one answer everywhere


@pytest.mark.parametrize("sources, file", [
    (SOURCES, "twin.py"),
    ({"model.py": LEDUC, "twin.py": TWIN}, "twin.py"),
    (SOURCES | {"inference.py": STATE_INFERENCE}, "model.py"),
    (SOURCES | {"inference.py": "def resample_history(:\n"}, "model.py"),  # does not parse: the model
    (SOURCES | {"value.py": "def get_value(state, player):\n    return 0.0\n"}, "model.py"),
    ({"model.py": LEDUC, "inference.py": LEDUC_INFERENCE}, "model.py"),
])
def test_which_file_a_worker_plans_on(sources: dict[str, str], file: str) -> None:
    assert planned_on(sources) == file
    assert planned_on(sources, use_twin=False) == "model.py"


def test_an_inference_that_turns_out_to_draw_states_is_refused_beside_a_twin() -> None:
    # a top-level def of resample_history, rebound when the module runs: its kind is then "state"
    rebinding = "def resample_history(events, player_id, seed):\n    return []\n\n\n" + STATE_INFERENCE + (
        "\n\nresample_history = None\n")
    agent = WorkerAgent(SOURCES | {"inference.py": rebinding}, "leduc_poker", SearchConfig(num_simulations=5),
                        seed=0)
    assert agent.planned_on == "twin.py"
    state = _decisions(1)[0]
    try:
        with pytest.raises(AgentError, match="could not start.*the twin cannot plan with them") as caught:
            agent.step(state)
    finally:
        agent.close()
    assert "\n" not in str(caught.value)
