"""A model that raises SystemExit, KeyboardInterrupt or GeneratorExit from a contract function fails that call
like any other bug: the checks score it and the wrapper names it, instead of the program exiting silently."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from cwm import checks, games, model
from cwm.games import trajectories
from cwm.sandbox import load_source
from cwm.types import ModelContractError

REFERENCE = Path(__file__).resolve().parent.parent / "data" / "reference"
SOURCE = (REFERENCE / "tic_tac_toe_model.py").read_text(encoding="utf-8")
EXITS = {"SystemExit": SystemExit(0), "KeyboardInterrupt": KeyboardInterrupt(), "GeneratorExit": GeneratorExit()}


class _ExitsInRewards:
    """The reference tic-tac-toe model whose get_rewards raises ``exc`` (a trusted object: no static gate)."""

    def __init__(self, exc: BaseException):
        self._module = load_source(SOURCE, name="ttt_exits", gate=False)
        self._exc = exc

    def __getattr__(self, name: str) -> Any:
        return getattr(self._module, name)

    def get_rewards(self, state: dict) -> list[float]:
        raise self._exc


@pytest.mark.parametrize("kind", sorted(EXITS))
def test_checks_score_an_exiting_model_as_failing(kind: str) -> None:
    trajs = trajectories.collect("tic_tac_toe", 1, seed=0)
    report = checks.run_checks(_ExitsInRewards(EXITS[kind]), trajs)
    assert not report.all_passed
    assert report.by_type["rewards"].passed == 0 and report.by_type["rewards"].total == len(trajs[0].steps)
    assert kind in report.failed_by_type()["rewards"][0].traceback


@pytest.mark.parametrize("kind", sorted(EXITS))
def test_wrapper_names_the_call_that_exited(kind: str) -> None:
    wm = model.WorldModel(_ExitsInRewards(EXITS[kind]), codec=model.ActionCodec.from_game(
        games.load_game("tic_tac_toe")), name="ttt_exits")
    state = wm.new_initial_state()
    with pytest.raises(ModelContractError, match=rf"ttt_exits: step 0: get_rewards\(\.\.\.\) raised {kind}"):
        state.child(state.legal_actions()[0])
