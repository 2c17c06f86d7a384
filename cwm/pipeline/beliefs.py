"""The posterior check of a run's inference function, off-policy and on the information states its agent met.

The off-policy check (``cwm.checks.posterior``) draws information states from uniformly random games; a
planner steers elsewhere, and a belief right at random states may be wrong where the agent plays. So the
on-policy check takes its states from the arena: every finished match the CWM agent played is replayed in the
ground truth from its recorded actions, and each state where the agent was to move is an information state it
met. At each, the inference function's draws (each in a hardened worker, ``ContainedSampler``) are compared
with the true posterior by total variation, with the minimum detectable distance of the draws made.

The true posterior assumes uniformly random opponents (``cwm.checks.posterior.OPPONENT_MODEL``): exactly the
policy of the arena's ``random`` agent, and an assumption for any other opponent (a planner's policy is not
known in closed form). The report gives each opponent's states apart and says which.
"""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Sequence

import pyspiel

from cwm import games
from cwm.arena.types import MatchResult
from cwm.checks.posterior import OPPONENT_MODEL, PosteriorReport, PosteriorSettings, posterior_check
from cwm.pipeline.on_policy import finished, replay_states
from cwm.sandbox.sampling import ContainedSampler
from cwm.types import JSON

UNIFORM_AGENTS = frozenset({"random"})  # arena agents whose policy is the opponent model itself


def run_settings(seed: int) -> PosteriorSettings:
    """The size of a ``cwm run``'s posterior checks: 8 states, each with the draws that detect a distance of
    0.2 at 95% (at least 200, at most 5,000); where the truth cannot be enumerated, it is drawn too (500 draws,
    more to leave the sampler room for 0.2, at most 5,000). A state whose posterior has too many values for
    0.2 within 5,000 draws keeps 200 and reports the larger distance it can detect."""
    return PosteriorSettings(games_played=10, states=8, draws=200, truth_draws=500, seed=seed, detect=0.2,
                             max_draws=5000)


def agent_states(game: str | games.GameSpec, results: Sequence[MatchResult],
                 label: str) -> tuple[list[tuple[int, pyspiel.State]], list[str]]:
    """The ground-truth states where ``label`` was to move, in every match it finished (a forfeit, a void
    match or a record without actions is left out; ``cwm.pipeline.on_policy.replay_states`` replays the
    rest): ``(match number, state)`` in play order; and each match number's opponent (the other seat's label).

    Raises:
      ReplayError: a recorded action is not legal where it is played, or the actions end before or after the
        game (another game, or a damaged record).
    """
    found: list[tuple[int, pyspiel.State]] = []
    opponents: list[str] = []
    for match in finished(results, label):
        if match is None:
            continue
        r, seats = match
        number = len(opponents)
        opponents.append(next((s for s in r.seats if s != label), label))
        for state, _ in replay_states(game, r.actions, key=r.key):
            if not state.is_chance_node() and state.current_player() in seats:
                found.append((number, state.clone()))
    return found, opponents


def posterior_record(inference: str, game: str | games.GameSpec, results: Sequence[MatchResult], label: str,
                     settings: PosteriorSettings) -> dict[str, JSON]:
    """The run's posterior checks of the inference module ``inference`` (untrusted source, each draw in a
    hardened worker): ``off_policy`` and ``on_policy`` reports as JSON (``None`` for on-policy when the
    agent finished no match), with each opponent's on-policy states apart (``by_opponent``)."""
    states, opponents = agent_states(game, results, label)
    with ContainedSampler(inference) as sampler:
        off = posterior_check(game, sampler, settings)
        on = posterior_check(game, sampler, settings, at=states) if states else None
    record: dict[str, JSON] = {"settings": dataclasses.asdict(settings), "matches": len(opponents),
                               "opponent_model": OPPONENT_MODEL,
                               "off_policy": off.to_json(), "on_policy": None if on is None else on.to_json()}
    if on is not None:
        record["by_opponent"] = by_opponent(on, opponents)
    return record


def by_opponent(report: PosteriorReport, opponents: Sequence[str]) -> dict[str, JSON]:
    """Per opponent, the mean distance, interval and detectable distance over the on-policy states met
    against it, and whether the opponent model is that opponent's real policy."""
    out: dict[str, JSON] = {}
    for name in sorted({opponents[c.game] for c in report.states}):
        mine = [c for c in report.states if opponents[c.game] == name]
        out[name] = {"states": len(mine), "model_is_its_policy": name in UNIFORM_AGENTS,
                     **{k: sum(getattr(c, k) for c in mine) / len(mine) for k in ("tv", "lo", "hi", "detectable")}}
    return out


def well_formed(record: object) -> bool:
    """Whether ``record``, read back from a run's ``posterior.json``, has the shape ``posterior_record``
    writes: the figures a report prints are numbers (a float, or an int small enough for one), each state's
    draws a count. A damaged or edited file fails and is checked again rather than crash the report."""
    if not isinstance(record, dict) or not _part(record.get("off_policy")):
        return False
    on, rows = record.get("on_policy"), record.get("by_opponent", {})
    if on is not None and not _part(on):
        return False
    return isinstance(rows, dict) and all(
        isinstance(r, dict) and _count(r.get("states")) and all(_number(r.get(k)) for k in _FIGURES)
        for r in rows.values())


_FIGURES = ("tv", "lo", "hi", "detectable")


def _part(part: object) -> bool:
    if not isinstance(part, dict) or not isinstance(part.get("states"), (list, tuple)):  # a tuple before JSON
        return False
    return all(_number(part.get(k)) for k in (*_FIGURES, "accuracy", "confidence")) and all(
        isinstance(s, dict) and _count(s.get("draws")) for s in part["states"])


def _number(x: object) -> bool:
    """A float (NaN too: the mean over no states) or an int small enough for one; never an infinity."""
    return (type(x) is float and not math.isinf(x)) or (type(x) is int and abs(x) < 2**1023)


def _count(x: object) -> bool:
    return type(x) is int and 0 <= x < 2**63

