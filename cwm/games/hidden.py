"""The hidden information of a game, one player's view of it, and its true posterior from the ground truth.

The hidden information at a state, for a player, is what the other players know and the player does not.
Generically that is the other players' information states (their own observations and actions so far: the
ground truth's information-state strings, or each one's perfect-recall trace where the engine has none); a game in ``HIDDEN`` names a smaller feature that says the same or the
part worth measuring (Leduc: the opponent's private card; Quadranto: the opponent's square now). The true
posterior of that feature at one player's information state comes from ``planners.gt_resample`` (exact
enumeration where the game is small enough), else from the engine's own ``resample_from_infostate``, else
from rejection draws.
"""

from __future__ import annotations

import dataclasses
from collections import Counter
from collections.abc import Callable, Hashable

import numpy as np
import pyspiel

from cwm.games import registry as games
from cwm.types import CHANCE, JSON
from planners.gt_resample import HistoryResampler, ResampleFailure, StateKey
from planners.gt_sampler import engine_resamples
from planners.info_key import has_information_states, trace_key
from planners.ismcts import resample_from_infostate

Feature = Callable[[games.GameSpec, pyspiel.State, int], Hashable]


def others_information(spec: games.GameSpec, state: pyspiel.State, player: int) -> Hashable:
    """The generic hidden information, from the game's own information: every other player's information
    state, as the engine's information-state string where the game has them (some games have them without
    declaring so), else as that player's perfect-recall trace key (``planners.info_key``: its observation
    strings and own actions so far); else each one's observation as ``spec``'s view shows it (a text view is
    one string). Any game has one of the three."""
    others = [p for p in range(state.num_players()) if p != player]
    game = state.get_game()
    if has_information_states(game):
        return tuple(state.information_state_string(p) for p in others)
    if game.get_type().provides_observation_string:
        return tuple(trace_key(state, p) for p in others)
    return tuple(_hashable(games.observe(spec, state, p)) for p in others)


class FeatureError(ValueError):
    """A hidden feature cannot be read from the view it was given (a field the observation does not have)."""


def opponent_field(*fields: str) -> Feature:
    """The hidden feature ``fields`` of the (one) opponent's own observation, e.g. its private card.

    The feature raises ``FeatureError`` naming the field and the keys the observation has, when the game's
    view has no such field (a text view is a single ``observation`` string): a missing field read as
    ``None`` would make every draw look right. Use the generic feature (``GENERIC``) for such games.
    """

    def feature(spec: games.GameSpec, state: pyspiel.State, player: int) -> Hashable:
        seen = games.observe(spec, state, 1 - player)
        missing = [f for f in fields if f not in seen]
        if missing:
            raise FeatureError(f"{spec.name}: the opponent's observation ({spec.view} view) has no field "
                               f"{missing[0]!r} (its fields: {sorted(seen)}); use the generic hidden feature")
        return tuple(_hashable(seen[f]) for f in fields) if len(fields) > 1 else _hashable(seen[fields[0]])

    return feature


def _hashable(value: JSON) -> Hashable:
    if isinstance(value, list):
        return tuple(_hashable(v) for v in value)
    if isinstance(value, dict):
        return tuple(sorted((k, _hashable(v)) for k, v in value.items()))
    return value


@dataclasses.dataclass(frozen=True)
class HiddenInfo:
    """What is measured of the hidden information of a game.

    Attributes:
      description: what the feature is, in words (reports show it).
      feature: ``(spec, state, player) -> hashable``: the feature at a ground-truth state, for ``player``.
      state_key: merges ground-truth states during exact enumeration (``HistoryResampler``); it must determine
        everything the state does from then on and the feature (``None``: no merging).
      exact: whether to try exact enumeration at all; ``False`` where the deal alone is far beyond any budget
        (a shuffled deck), which would only spend ``max_nodes`` expansions per state before the fallback.
    """

    description: str
    feature: Feature = others_information
    state_key: StateKey | None = None
    exact: bool = True


_RANKS, _SUITS = "A23456789TJQK", "scdh"


def opponent_lowest_card(spec: games.GameSpec, state: pyspiel.State, player: int) -> Hashable:
    """The lowest card of the (one) opponent's hand, as its own observation shows the hand, in OpenSpiel's
    card order (spades, clubs, diamonds, hearts; ace low within a suit); ``None`` for an empty hand."""
    hand = games.observe(spec, state, 1 - player)["hands"][1 - player]
    return min(hand, key=lambda card: _SUITS.index(card[1]) * 13 + _RANKS.index(card[0])) if hand else None


GENERIC = HiddenInfo("the other players' information states (their observations and actions so far)")
# Games whose hidden information has a smaller name. Quadranto's str() is its whole state (squares, moves,
# winner), so its states merge by it; the feature is a marginal: the path is too many values to estimate.
# Gin rummy's opponent hand (10 of some 30 unseen cards) has far too many values for a few hundred draws: its
# lowest card is a marginal a wrong deal shows (a sampler that deals the lowest unseen cards to the opponent).
HIDDEN: dict[str, HiddenInfo] = {
    "leduc_poker": HiddenInfo("the opponent's private card", opponent_field("private")),
    "quadranto": HiddenInfo("the opponent's square now", opponent_field("my_square"), state_key=str),
    "hand_of_war": HiddenInfo("the opponent's hand", opponent_field("my_hand"), exact=False),
    "gin_rummy": HiddenInfo("the lowest card of the opponent's hand", opponent_lowest_card, exact=False),
}


def hidden_info(game: str | games.GameSpec) -> HiddenInfo:
    """The hidden-information definition of a game (``HIDDEN``, else the generic one)."""
    return HIDDEN.get(games.resolve(game).name, GENERIC)


def replay(spec: games.GameSpec, history: list[str], player: int, events: list[JSON]) -> tuple[pyspiel.State | None, str]:
    """Replays an action-string history in the ground truth and compares it with ``player``'s events.

    Returns:
      ``(state, "")`` when the replay reproduces every observation and own action of the player (one event per
      state, as ``planners.HistoryTracker`` records them), else ``(None, reason)`` naming the first step that
      differs (or the move that is not legal there).
    """
    if not isinstance(history, list) or len(history) != len(events) - 1:
        size = len(history) if isinstance(history, list) else type(history).__name__
        return None, f"the history has {size} moves for {len(events)} states (expected {len(events) - 1})"
    state = games.load_game(spec).new_initial_state()
    for k, action in enumerate(history):
        if games.observe(spec, state, player) != events[k]["observation"]:
            return None, f"step {k}: player {player}'s observation differs"
        current = state.current_player()
        own = events[k]["action"]
        if (current == player) != (own is not None) or (own is not None and action != own):
            return None, f"step {k}: player {player}'s own action is {own!r}, the history has {action!r} (mover {current})"
        ids = _ids(state)
        if action not in ids:
            return None, f"step {k}: {action!r} is not legal there"
        state.apply_action(ids[action])
    if games.observe(spec, state, player) != events[-1]["observation"]:
        return None, f"step {len(history)}: player {player}'s observation differs"
    return state, ""


def _ids(state: pyspiel.State) -> dict[str, int]:
    player = state.current_player()
    actions = [a for a, _ in state.chance_outcomes()] if player == CHANCE else state.legal_actions()
    return {state.action_to_string(player, a): int(a) for a in actions}


@dataclasses.dataclass(frozen=True)
class Truth:
    """The true posterior of the hidden feature at one information state.

    Attributes:
      method: ``"exact"`` (enumerated), ``"engine"`` (the engine's resampling, ``draws`` of them) or
        ``"rejection"`` (the generic resampler's rejection draws).
      probabilities: feature value -> probability (estimated frequencies unless exact).
      draws: the draws the estimate rests on (0 when exact).
    """

    method: str
    probabilities: dict[Hashable, float]
    draws: int = 0


def true_posterior(spec: games.GameSpec, state: pyspiel.State, player: int, hidden: HiddenInfo, *,
                   resampler: HistoryResampler, draws: int, rng: np.random.Generator) -> Truth | None:
    """The posterior of ``hidden.feature`` at ``player``'s information state in ``state`` (``None``: none of
    the three methods found it), under the opponents ``resampler`` assumes (``opponent_policy``; uniform by
    default; with a policy, the engine's own resampling, whose model is its own, is not used)."""
    def feature(s: pyspiel.State) -> Hashable:
        return hidden.feature(spec, s, player)

    try:
        posterior = resampler.posterior(state, player) if hidden.exact else None
    except ResampleFailure:
        if resampler.opponent_policy is None:
            raise  # under uniform opponents the real history always has weight: a merging key is wrong
        return None  # the opponent policy never plays what was played: no posterior under that model
    if posterior is not None:
        return Truth("exact", posterior.distribution(feature))
    if resampler.opponent_policy is None and engine_resamples(state.get_game()):  # the engine's model is its own
        counts = Counter(feature(resample_from_infostate(state, player, rng)) for _ in range(draws))
        return Truth("engine", {v: n / draws for v, n in counts.items()}, draws)
    try:
        counts = Counter(feature(resampler(state, player, rng)) for _ in range(draws))
    except ResampleFailure:
        return None
    return Truth("rejection", {v: n / draws for v, n in counts.items()}, draws)
