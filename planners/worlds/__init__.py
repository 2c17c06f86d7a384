"""Ground-truth world samplers written for one engine each: a world (a real game state) drawn from exactly the
deals consistent with what one player observed, where the generic resampler (``planners.gt_resample``) cannot
draw them (a 50- or 52-card deal seen card by card). ``world_sampler(game)`` looks a game up by its engine's
short name and parameters; ``planners.gt_sampler.GroundTruthSampler`` asks it before anything else.

Each sampler is a ``Sampler`` (``(state, player, rng) -> state``): it returns a fresh state whose history
replays, for ``player``, the same observation at every step as the real one, drawn uniformly over the
consistent deals (the hidden cards' chance probabilities, the other players' actions weighted as if they did
not depend on the hidden cards). Trusted code: it reads the real history, which holds the hidden cards.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np
import pyspiel

from planners.worlds.crazy_eights import CrazyEightsWorlds, crazy_eights_problem
from planners.worlds.hanabi import HanabiWorlds, hanabi_problem

WorldSampler = Callable[[pyspiel.State, int, np.random.Generator], pyspiel.State]

# engine short name -> (why this game's parameters are not served, "" when they are; the sampler's factory)
_REGISTRY: dict[str, tuple[Callable[[pyspiel.Game], str], Callable[[pyspiel.Game], Any]]] = {
    "hanabi": (hanabi_problem, HanabiWorlds),
    "crazy_eights": (crazy_eights_problem, CrazyEightsWorlds),
}


def world_sampler(game: pyspiel.Game) -> WorldSampler | None:
    """The game-specific world sampler for ``game``, or ``None`` when its engine (or these parameters of it)
    has none."""
    entry = _REGISTRY.get(game.get_type().short_name)
    if entry is None or entry[0](game):
        return None
    sampler: WorldSampler = entry[1](game)
    return sampler


def world_sampler_problem(game: pyspiel.Game) -> str:
    """Why the game-specific sampler of ``game``'s engine does not serve these parameters (``""``: it does, or
    the engine has no game-specific sampler at all)."""
    entry = _REGISTRY.get(game.get_type().short_name)
    return entry[0](game) if entry is not None else ""


__all__ = ["CrazyEightsWorlds", "HanabiWorlds", "WorldSampler", "world_sampler", "world_sampler_problem"]
