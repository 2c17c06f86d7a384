"""The encoder target: an observation encoder ``encode(observation, player_id) -> list[float]`` for a game,
asked for with example observations of the recorded games and checked by ``cwm.checks.encoder`` on every
observation of those games.

A PPO policy reads the game only through its encoder (docs/ppo.md), so the checks ask for what a network
input needs: one fixed length, finite floats, the same vector each time, distinct vectors for distinct
observations of a player, cheap calls. A failing candidate is refined like a world model, each failure
naming the game, the step and the observation it failed on.
"""

from __future__ import annotations

import json
from collections.abc import Sequence

from cwm import model as cwm_model
from cwm.checks.encoder import (
    DEFAULT_CALL_S,
    Site,
    observation_sites,
)
from cwm.contract import ENCODER_API
from cwm.sandbox import ALLOWED_IMPORTS
from cwm.sandbox.checkers import Checker, encoder_checker  # noqa: F401  (re-exported)
from cwm.synthesis.target import PromptSet, Target, prompt_rules
from cwm.types import Trajectory

ENCODER_PROMPTS = PromptSet(system="encoder/system.md", initial="encoder/initial.md", refine="encoder/refine.md")
FRAGMENTS = ("sections/encoder_api.md", "sections/encoder_observations.md")
DEFAULT_SHOWN = 12  # example observations in a prompt


def render_observations(sites: Sequence[Site], shown: int = DEFAULT_SHOWN) -> str:
    """``shown`` observations spread evenly over ``sites`` (the first and the last included), one line each
    with the observing player and where it was recorded."""
    spacing = (len(sites) - 1) / max(1, shown - 1)
    picked = list(sites) if len(sites) <= shown else [sites[round(i * spacing)] for i in range(shown)]
    return "\n".join(f"- player_id {s.player} (trajectory {s.trajectory}, step {s.step}): "
                     f"`{json.dumps(s.observation)}`" for s in picked)


def encoder_target(rules: str, games: Sequence[Trajectory], *, call_s: float = DEFAULT_CALL_S,
                   shown: int = DEFAULT_SHOWN, check: Checker | None = None,
                   prompt_set: PromptSet = ENCODER_PROMPTS) -> Target:
    """The encoder target for the game whose recorded ``games`` the checks encode.

    Args:
      rules: the game's rules text.
      games: recorded games (open deck or closed: only each player's observations are read).
      call_s: the mean seconds a call may take.
      shown: example observations in the prompts.
      check: the checker (default: ``encoder_checker`` in this process: trusted code only).
      prompt_set: the templates.

    Raises:
      ValueError: no games, games without a single observation, or fewer than one observation shown.
    """
    if shown < 1:
        raise ValueError(f"an encoder prompt shows at least one observation, got {shown}")
    sites = observation_sites(games)
    if not sites:
        raise ValueError("encoder synthesis needs at least one recorded game with observations")
    context = {
        "rules": prompt_rules(rules), "api": cwm_model.api_block(ENCODER_API).rstrip(),
        "call_ms": f"{call_s * 1000:g}", "allowed_imports": ", ".join(sorted(ALLOWED_IMPORTS)),
        "observations": render_observations(sites, shown), "shown": str(min(shown, len(sites))),
        "total": str(len(sites)),
    }
    return Target("encoder", prompt_set, ENCODER_API, context, check or encoder_checker(games, call_s=call_s),
                  fragments=FRAGMENTS, tag="encoder")


__all__ = ["ENCODER_PROMPTS", "encoder_checker", "encoder_target", "render_observations"]
