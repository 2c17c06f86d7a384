"""The value target: several value functions ``get_value(state, player_id)`` for a synthesized world model,
asked for at once and checked by ``cwm.checks.value`` on the recorded games replayed in that model.

One initial prompt asks for ``candidates`` different modules (each in its own code block; each becomes a
node of the search tree); failing ones are refined like world models, and the run stops once ``candidates``
distinct programs pass every check (``Target.wanted``). Which of them is kept is decided by play, not by the
checks: ``cwm.selection.value_tournament``.
"""

from __future__ import annotations

from collections.abc import Sequence

from cwm import model as cwm_model
from cwm.checks.value import DEFAULT_CALL_S
from cwm.contract import VALUE_API
from cwm.sandbox import ALLOWED_IMPORTS
from cwm.sandbox.checkers import (
    Checker,
    value_checker,  # noqa: F401  (re-exported)
)
from cwm.synthesis.target import PromptSet, Target, prompt_rules
from cwm.types import Trajectory

VALUE_PROMPTS = PromptSet(system="value/system.md", initial="value/initial.md", refine="value/refine.md")
FRAGMENTS = ("sections/value_api.md", "sections/value_world_model.md", "sections/value_games.md")
DEFAULT_CANDIDATES = 5  # value functions asked for in one prompt


def render_games(games: Sequence[Trajectory]) -> str:
    """Each recorded game as its action strings and final returns, one line each."""
    return "\n".join(f"- Game {i + 1} (seed {t.seed}): {', '.join(t.action_strings)} -> returns "
                     f"{list(t.returns)}" for i, t in enumerate(games))


def value_target(rules: str, world_model: str, games: Sequence[Trajectory], *, utility: tuple[float, float],
                 candidates: int = DEFAULT_CANDIDATES, call_s: float = DEFAULT_CALL_S, check: Checker | None = None,
                 prompt_set: PromptSet = VALUE_PROMPTS) -> Target:
    """The value target for the world model ``world_model`` (source), checked on ``games``.

    Args:
      rules: the game's rules text.
      world_model: the synthesized world model's source (shown in the prompt; the states come from it).
      games: recorded games whose states the checks ask about.
      utility: the game's (minimum, maximum) utility.
      candidates: value functions asked for in the initial prompt, and passing ones the run looks for.
      call_s: CPU seconds one call may use.
      check: the checker (default: ``value_checker`` in this process: trusted code only).
      prompt_set: the templates.

    Raises:
      ValueError: no games, fewer than one candidate, or an empty utility range.
    """
    if not games:
        raise ValueError("value synthesis needs at least one recorded game")
    if candidates < 1:
        raise ValueError(f"value synthesis asks for at least one candidate, got {candidates}")
    if not utility[0] < utility[1]:
        raise ValueError(f"the utility range must have its minimum below its maximum, got {list(utility)}")
    context = {
        "rules": prompt_rules(rules), "api": cwm_model.api_block(VALUE_API).rstrip(),
        "utility_low": f"{utility[0]:g}", "utility_high": f"{utility[1]:g}", "call_ms": f"{call_s * 1000:g}",
        "allowed_imports": ", ".join(sorted(ALLOWED_IMPORTS)), "world_model": world_model.strip(),
        "games": render_games(games), "candidates": str(candidates),
    }
    checker = check or value_checker(world_model, games, utility=utility, call_s=call_s)
    return Target("value", prompt_set, VALUE_API, context, checker, fragments=FRAGMENTS, wanted=candidates, tag="value")


__all__ = ["DEFAULT_CANDIDATES", "VALUE_PROMPTS", "render_games", "value_checker", "value_target"]
