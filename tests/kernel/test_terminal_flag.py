"""The end of the game in a player's events (cwm.events): the end-of-game checks flag the last event
``terminal`` with the player's return, and only there; the agents' views of a game do the same; an
inference function that reads the flag passes Quadranto's catches, which its observations alone do not show."""

from __future__ import annotations

from pathlib import Path

import pytest

from cwm import events, games, model, value_rules
from cwm.agents.cwm import HistoryTracker
from cwm.checks.inference import run_inference_checks
from cwm.contract import INFERENCE_API
from cwm.games import trajectories
from cwm.sandbox import load_source
from cwm.sandbox.jobs.plan import _Server
from cwm.types import ModelLoadError

DATA = Path(__file__).resolve().parent.parent / "data"


def _quadranto():
    inference = load_source((DATA / "reference" / "quadranto_inference.py").read_text(encoding="utf-8"),
                                  name="quadranto_inference", api=INFERENCE_API)
    source = (DATA / "games" / "quadranto_cwm.py").read_text(encoding="utf-8")
    wm = model.WorldModel(load_source(source, name="quadranto_model"),
                          codec=model.ActionCodec.from_game(games.load_game("quadranto")), name="quadranto_model")
    return inference, wm


def _caught(ct):
    """Whether the player's game ended in a catch (someone won) where the player could not see it."""
    return ct.player_return != 0


def test_the_quadranto_reference_passes_every_end_of_game_check_catches_included():
    inference, wm = _quadranto()
    closed = [trajectories.closed_view(t, p) for t in trajectories.collect("quadranto", 60, seed=3) for p in (0, 1)]
    caught = [ct for ct in closed if _caught(ct)]
    # a catch by the opponent: the caught player's last observation shows the opponent's quadrant only
    assert any(ct.player_return < 0 for ct in caught) and len(caught) < len(closed)
    report = run_inference_checks(wm, inference.resample_history, closed, terminal=True)
    assert report.by_type["inference_terminal"].passed == report.by_type["inference_terminal"].total == len(closed)
    assert report.failures == ()


def test_the_flag_and_return_are_on_the_last_event_at_the_end_only():
    _, wm = _quadranto()
    ct = trajectories.closed_view(trajectories.collect("quadranto", 1, seed=5)[0], 1)
    seen = []

    def spy(given, player, seed):
        seen.append(given)
        raise ValueError("spy")

    run_inference_checks(wm, spy, [ct], terminal=True)
    *during, end = seen
    assert during and all("terminal" not in e and "return" not in e for s in during for e in s)
    assert end[-1] == {"observation": value_rules.thaw(ct.events[-1].observation), "action": None, "terminal": True,
                       "return": ct.player_return}
    assert all(events.validate(s) is None for s in seen) and events.is_over(end) and not events.is_over(during[-1])


def test_an_agents_view_flags_the_real_games_end():
    spec = games.resolve("quadranto")
    state = games.load_game(spec).new_initial_state()
    while not state.is_terminal():
        options = [a for a, _ in state.chance_outcomes()] if state.is_chance_node() else state.legal_actions()
        state.apply_action(options[0])
    tracker = HistoryTracker(spec, 0)
    tracker.sync(state)
    assert tracker.events[-1]["terminal"] is True and tracker.events[-1]["return"] == state.returns()[0]
    assert all("terminal" not in e for e in tracker.events[:-1])


@pytest.mark.parametrize("bad, why", [
    ([{"observation": 1, "action": None, "terminal": True, "return": 0.0}, {"observation": 2, "action": None}],
     "only the last event"),
    ([{"observation": 1, "action": None, "terminal": 1, "return": 0.0}], "only the last event"),
    ([{"observation": 1, "action": None, "terminal": True}], "only the last event"),
    ([{"observation": 1, "action": "x", "terminal": True, "return": 1.0}], "only the last event"),
    ([{"observation": 1, "action": None, "terminal": True, "return": float("nan")}], "only the last event"),
    ([{"observation": 1, "action": None, "over": True}], "unknown key"),
    ([{"action": None}], "is not"),
    ({"observation": 1}, "must be a list"),
])
def test_malformed_events_are_named(bad, why):
    assert why in events.validate(bad)


class _Planner:
    def plan(self, player, legal, *, moves, events):
        return legal[0]

    def stats(self):
        return {}


def test_the_planning_worker_refuses_to_plan_at_the_end_of_a_game():
    server = _Server(_Planner())
    message = {"op": "plan", "player": 0, "legal": ["a"], "moves_from": 0, "moves": [], "events_from": 0,
               "events": [{"observation": 1, "action": None, "terminal": True, "return": 1.0}]}
    with pytest.raises(ModelLoadError, match="the game is over"):
        server.answer(message)
    assert _Server(_Planner()).answer(message | {"events": [{"observation": 1, "action": None}]})["action"] == "a"
