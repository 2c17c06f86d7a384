"""The planning worker collects the youngest generation less often during a move (a search's tree holds no
cycle, yet the collector walked it again and again as it grew) and restores the collector's thresholds after
the move, whether the move was planned, refused, or failed."""

from __future__ import annotations

import gc

import pytest

from cwm.sandbox.jobs import plan
from cwm.types import ModelContractError

MESSAGE = {"op": "plan", "player": 0, "legal": ["x(0,0)"], "moves_from": 0, "moves": [], "events_from": 0,
           "events": [{"observation": 1, "action": None}]}


class _Planner:
    """A planner stub: records the collector's thresholds while it plans, then answers, refuses or fails."""

    def __init__(self, outcome: BaseException | None = None):
        self.outcome = outcome
        self.seen: list[tuple[int, ...]] = []

    def plan(self, player, legal, *, moves, events):
        self.seen.append(gc.get_threshold())
        if self.outcome is not None:
            raise self.outcome
        return legal[0]

    def stats(self):
        return {}


@pytest.mark.parametrize("outcome", [None, ModelContractError("ttt: step 0: a breach"), RuntimeError("a bug")],
                         ids=["planned", "refused", "failed"])
def test_a_move_raises_the_youngest_threshold_and_restores_every_threshold(outcome):
    before = gc.get_threshold()
    gc.set_threshold(700, 7, 9)
    try:
        planner = _Planner(outcome)
        server = plan._Server(planner)  # type: ignore[arg-type]
        if type(outcome) is RuntimeError:  # (a ModelContractError is a RuntimeError too: refused)
            with pytest.raises(RuntimeError):
                server.answer(dict(MESSAGE))
        else:
            answer = server.answer(dict(MESSAGE))
            assert ("refused" in answer) == (outcome is not None)
        assert planner.seen == [(plan._SEARCH_GC_THRESHOLD, 7, 9)]
        assert gc.get_threshold() == (700, 7, 9)
    finally:
        gc.set_threshold(*before)


def test_a_higher_threshold_set_before_the_move_is_kept_during_it():
    before = gc.get_threshold()
    gc.set_threshold(plan._SEARCH_GC_THRESHOLD * 2, 10, 10)
    try:
        planner = _Planner()
        plan._Server(planner).answer(dict(MESSAGE))  # type: ignore[arg-type]
        assert planner.seen == [(plan._SEARCH_GC_THRESHOLD * 2, 10, 10)]
    finally:
        gc.set_threshold(*before)
