"""An inference sampler keeps the model state each history reaches, and ISMCTS keeps each edge's child for one
search: a world drawn again is not replayed, its tree path not rebuilt, and no search result changes."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pyspiel

from cwm import games, model
from cwm.agents import HistoryTracker, PlayerView, inference_sampler
from cwm.contract import INFERENCE_API
from cwm.sandbox import load_source
from planners import ISMCTS
from planners.config import SearchConfig

REFERENCE = Path(__file__).resolve().parent.parent / "data" / "reference"


def _parts():
    wm = model.WorldModel(load_source((REFERENCE / "leduc_poker_model.py").read_text(), name="leduc_model"),
                          codec=model.ActionCodec.from_game(games.load_game("leduc_poker")), name="leduc_model")
    inference = load_source((REFERENCE / "leduc_poker_inference.py").read_text(), name="leduc_inference",
                                  api=INFERENCE_API)
    return wm, inference.resample_history


def _view(wm, history):
    state = pyspiel.load_game("leduc_poker").new_initial_state()
    for a in history:
        state.apply_action(a)
    tracker = HistoryTracker(games.resolve("leduc_poker"), state.current_player())
    tracker.sync(state)
    legal = [state.action_to_string(state.current_player(), a) for a in state.legal_actions()]
    return PlayerView(wm, tracker.events, state.current_player(), legal)


def test_a_history_drawn_again_is_the_same_state():
    wm, resample = _parts()
    sampler, view, rng = inference_sampler(wm, resample), _view(wm, [0, 3, 2, 1, 4]), np.random.default_rng(0)
    worlds = [sampler(view, 0, rng) for _ in range(200)]
    assert len({id(w) for w in worlds}) == len({tuple(w.history()) for w in worlds}) == 4  # 4 cards unseen


def test_sharing_worlds_and_children_changes_no_search_result():
    wm, resample = _parts()

    def fresh(view, player, rng):  # a new sampler per draw: every world replayed, nothing shared
        return inference_sampler(wm, resample)(view, player, rng)

    for history in ([0, 3], [0, 3, 2, 1, 4], [0, 3, 2, 1, 4, 2]):
        view = _view(wm, history)
        config = SearchConfig(num_simulations=300, rollouts=2)
        shared = ISMCTS(config, sampler=inference_sampler(wm, resample), seed=5).search(view)
        replayed = ISMCTS(config, sampler=fresh, seed=5).search(view)
        assert shared == replayed and shared.simulations == 300


def test_kept_worlds_are_dropped_at_a_later_move_and_bounded_in_states(monkeypatch):
    """A kept world keeps its parents: a gin rummy sampler kept 4,096 worlds of ~100 states each, 4.5 GB by
    the end of one match. Worlds of an earlier point of the game can never be drawn again, so they go when the
    player moves on, and the states kept at once are capped."""
    from planners import cwm as cwm_agent

    wm, resample = _parts()
    sampler, rng = inference_sampler(wm, resample), np.random.default_rng(0)
    early, late = _view(wm, [0, 3]), _view(wm, [0, 3, 2, 1, 4])
    first = {tuple(w.history()): w for w in (sampler(early, 0, rng) for _ in range(50))}
    again = {tuple(w.history()): w for w in (sampler(early, 0, rng) for _ in range(50))}
    assert all(again[h] is first[h] for h in again)  # the same point of the game: shared
    sampler(late, 0, rng)  # the player moved on
    after = {tuple(w.history()): w for w in (sampler(early, 0, rng) for _ in range(50))}
    assert all(after[h] is not first[h] for h in after if h in first)  # replayed: the early worlds were dropped

    monkeypatch.setattr(cwm_agent, "WORLD_CACHE_STATES", 7)  # room for one world of 5 moves (6 states)
    capped = inference_sampler(wm, resample)
    worlds = [capped(late, 0, rng) for _ in range(200)]
    assert len({tuple(w.history()) for w in worlds}) == 4 < len({id(w) for w in worlds})  # replayed when full
