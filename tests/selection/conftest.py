"""Fixtures for the sample-rejection tests: bundles exported from the reference models (tic-tac-toe, and Leduc
with a hand-written inference function) and deliberately weakened or broken variants of them; for the value
tournament, hand-written value functions of tic-tac-toe (a sound one and its sign-flipped twin)."""

from __future__ import annotations

from pathlib import Path

import pytest

from cwm.agents.specs import Settings
from cwm.bundle import export_bundle
from cwm.games import trajectories
from cwm.selection import SelectionSettings
from planners.config import SearchConfig

DATA = Path(__file__).resolve().parents[1] / "data"
TTT = (DATA / "reference" / "tic_tac_toe_model.py").read_text()
LEDUC = (DATA / "reference" / "leduc_poker_model.py").read_text()
LEDUC_INFERENCE = (DATA / "selection" / "leduc_inference.py").read_text()
MISLEADING_VALUE = (DATA / "selection" / "tic_tac_toe_misleading_value.py").read_text()
GOOD = (DATA / "values" / "tic_tac_toe_value.py").read_text()
FLIPPED = (DATA / "values" / "tic_tac_toe_value_flipped.py").read_text()

# The reference tic-tac-toe with one bug: applying the third move raises when x opened in a corner or the
# centre. Random play at load (first moves on edges) and the stored games never get there; MCTS agents,
# which open in a corner or the centre, nearly always do.
BREAKS_MID_GAME = TTT.replace(
    "def apply_action(state, action):\n",
    "def apply_action(state, action):\n"
    "    if state['board'].count('.') == 7 and 'x' in [state['board'][i] for i in (0, 2, 4, 6, 8)]:\n"
    "        raise RuntimeError('the host model breaks on the third move')\n")
assert BREAKS_MID_GAME != TTT

# Strong enough that two good agents mostly draw, cheap enough for a fast suite.
FAST = Settings(search=SearchConfig(num_simulations=100, rollouts=2))
FAST_ISMCTS = Settings(search=SearchConfig(num_simulations=20, rollouts=1))


@pytest.fixture(scope="session")
def ttt_train() -> list:
    # seeds whose games open on an edge, as the bug above needs of the stored games
    return [trajectories.record("tic_tac_toe", seed=s) for s in (0, 2)]


@pytest.fixture(scope="session")
def bundles(tmp_path_factory: pytest.TempPathFactory, ttt_train: list) -> dict[str, Path]:
    """Tic-tac-toe bundles: two good ones, one whose agent values leaves the wrong way round (its rules are
    right, so it hosts as well as the good ones), and one whose model breaks mid-game."""
    root = tmp_path_factory.mktemp("bundles")
    made = {
        "good": export_bundle(root / "good", game="tic_tac_toe", model_source=TTT, train=ttt_train),
        "good2": export_bundle(root / "good2", game="tic_tac_toe", model_source=TTT, train=ttt_train),
        "weak": export_bundle(root / "weak", game="tic_tac_toe", model_source=TTT, train=ttt_train,
                              extra_sources={"value.py": MISLEADING_VALUE}),
        "breaks": export_bundle(root / "breaks", game="tic_tac_toe", model_source=BREAKS_MID_GAME, train=ttt_train),
    }
    return made


@pytest.fixture(scope="session")
def leduc_bundles(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    """Leduc bundles with the reference model and inference, and one without inference."""
    root = tmp_path_factory.mktemp("leduc")
    train = trajectories.collect("leduc_poker", 3, seed=0)
    extra = {"inference.py": LEDUC_INFERENCE}
    return {
        "p": export_bundle(root / "p", game="leduc_poker", model_source=LEDUC, train=train, extra_sources=extra),
        "q": export_bundle(root / "q", game="leduc_poker", model_source=LEDUC, train=train, extra_sources=extra),
        "blind": export_bundle(root / "blind", game="leduc_poker", model_source=LEDUC, train=train),
    }


class CountingExecutor:
    """Runs jobs in this process, one after another, and remembers which it was given."""

    name = "counting"

    def __init__(self) -> None:
        self.keys: list[str] = []

    def imap_unordered(self, fn, items):  # noqa: ANN001, ANN201
        for item in items:
            self.keys.append(item.key)
            yield fn(item)

    def close(self) -> None:
        pass


@pytest.fixture(scope="session")
def ttt_selection(tmp_path_factory: pytest.TempPathFactory, bundles: dict[str, Path]):  # noqa: ANN201
    """Two good agents and the weak one, both hosts drawn from the three, two games per pairing: 36 games."""
    from cwm.selection import select_models

    out = tmp_path_factory.mktemp("selection") / "out"
    played = CountingExecutor()
    found = select_models("tic_tac_toe", [bundles["good"], bundles["good2"], bundles["weak"]], out, SelectionSettings(hosts=2, games_per_pairing=2, agents=FAST, executor=played, progress=False))
    return found, played
