"""Team scores of a cooperative game (every seat shares one return, e.g. Hanabi): the agents seated together
are a team, and a team is judged by its mean score over deals, never by wins, draws or losses.

A team is the multiset of agents at a table, written as their labels sorted and ``+``-joined (``cwm+cwm``,
``cwm+random``); its seat orders (rotations) pool into it. The unit is the **deal** (``MatchResult.deal``):
in a cooperative game every team plays match ``i`` on the same deal (``cwm.arena.plan.deal_seed`` leaves the
agents out), so teams are compared on the same cards. A deal's value is the team's mean return over its
seat orders on that deal.

- **A team's mean score**: the mean of its deal values with Student's t 95% interval over deals (``n - 1``
  degrees of freedom; no interval below two deals).
- **Two teams compared**: on the deals both played, the per-deal difference of their values; its mean with
  the paired t 95% interval (Student's paired t test) and whether that interval excludes zero.

Both intervals lean on the central limit theorem across deals; scores are bounded (0 to 25 in Hanabi), so
a few dozen deals suffice for the stated coverage (checked on simulated scores in
``tests/arena/test_teams.py``), while a team whose every deal scored the same gets a zero-width interval
(said as such in the table: ``no spread``).
"""

from __future__ import annotations

import math
from collections.abc import Sequence

from cwm import games
from cwm.arena.types import FORFEIT_KINDS, MatchResult
from cwm.stats import t_quantile
from cwm.types import JSON

CONFIDENCE = 0.95


def cooperative(game: str | games.GameSpec) -> bool:
    """Whether ``game``'s ground truth declares one shared payoff (OpenSpiel's ``IDENTICAL`` utility)."""
    import pyspiel

    utility = games.load_game(games.resolve(game)).get_type().utility
    return bool(utility == pyspiel.GameType.Utility.IDENTICAL)


def team_label(seats: Sequence[str]) -> str:
    """A team's name: its agents' labels sorted and ``+``-joined (one team whatever the seat order)."""
    return "+".join(sorted(seats))


def t_interval(values: Sequence[float]) -> tuple[float, float, float]:
    """Mean and Student's t 95% interval of ``values`` (NaN bounds below two values)."""
    n = len(values)
    if n == 0:
        return math.nan, math.nan, math.nan
    mean = math.fsum(values) / n
    if n < 2:
        return mean, math.nan, math.nan
    sd = math.sqrt(math.fsum((v - mean) ** 2 for v in values) / (n - 1))
    half = t_quantile(n - 1, 0.5 + CONFIDENCE / 2) * sd / math.sqrt(n)
    return mean, mean - half, mean + half


def deal_values(results: Sequence[MatchResult]) -> dict[str, dict[int, float]]:
    """Per team, per deal: the team's mean return over the seat orders it played on that deal (void
    matches and matches without a recorded deal are left out; a forfeited match counts its returns)."""
    sums: dict[str, dict[int, list[float]]] = {}
    for r in results:
        if r.void or r.deal is None or not r.returns:
            continue
        sums.setdefault(team_label(r.seats), {}).setdefault(r.deal, []).append(float(r.returns[0]))
    return {team: {deal: math.fsum(v) / len(v) for deal, v in deals.items()} for team, deals in sums.items()}


def team_rows(results: Sequence[MatchResult], *, max_score: float | None = None,
              min_score: float | None = None) -> list[dict[str, JSON]]:
    """One row per team, best mean first: matches, deals, mean score with its t interval (cut to the game's
    ``[min_score, max_score]``, which holds the true mean, so the cut interval covers it as often), forfeits
    by kind (by any of its seats), and ``max_score`` (the game's best score, for "out of")."""
    values = deal_values(results)
    rows = []
    for team, deals in values.items():
        mine = [r for r in results if not r.void and r.deal is not None and team_label(r.seats) == team]
        mean, lo, hi = t_interval(list(deals.values()))
        lo = max(lo, min_score) if min_score is not None and math.isfinite(lo) else lo
        hi = min(hi, max_score) if max_score is not None and math.isfinite(hi) else hi
        forfeits = {kind: sum(r.forfeit_kind == kind and r.forfeit_seat is not None for r in mine)
                    for kind in FORFEIT_KINDS}
        rows.append({"team": team, "matches": len(mine), "deals": len(deals), "mean_score": mean,
                     "score_lo": lo, "score_hi": hi, "max_score": max_score,
                     "spread": len(set(deals.values())) > 1} | {f"forfeits_{k}": v for k, v in forfeits.items()})
    return sorted(rows, key=lambda r: (-float(r["mean_score"]), str(r["team"])))


def team_comparisons(results: Sequence[MatchResult]) -> list[dict[str, JSON]]:
    """Every two teams on the deals both played: the mean per-deal difference (first minus second, the
    first the team with the higher mean) with its paired t 95% interval, and whether it excludes zero."""
    values = deal_values(results)
    order = sorted(values, key=lambda t: (-math.fsum(values[t].values()) / len(values[t]), t))
    rows: list[dict[str, JSON]] = []
    for i, first in enumerate(order):
        for second in order[i + 1:]:
            shared = sorted(set(values[first]) & set(values[second]))
            diffs = [values[first][d] - values[second][d] for d in shared]
            mean, lo, hi = t_interval(diffs)
            rows.append({"team": first, "other": second, "deals": len(shared), "difference": mean,
                         "difference_lo": lo, "difference_hi": hi,
                         "detected": bool(len(shared) >= 2 and (lo > 0 or hi < 0))})
    return rows


# Published reference points beside which a game's team scores are shown (not measured by cwm).
REFERENCE_POINTS = {
    "hanabi": ("reference points (published, not measured here): the best LLM teams playing directly score about "
               "15 of 25; strong specialised agents (learned or search-based conventions) score above 20 of 25"),
}


def reference_line(game: str | games.GameSpec) -> str:
    """The published reference points for ``game``'s team scores (the full 25-point Hanabi), else ``""``."""
    spec = games.resolve(game)
    name = spec.openspiel.split("(", 1)[0].strip()
    if name not in REFERENCE_POINTS:
        return ""
    best = games.load_game(spec).max_utility()
    return REFERENCE_POINTS[name] if best == 25 else ""


def _number(value: JSON, form: str) -> str:
    return format(value, form) if isinstance(value, (int, float)) and math.isfinite(value) else "-"


def score_cell(row: dict[str, JSON]) -> str:
    """``15.20 [13.90, 16.50] / 25`` (``no spread`` when every deal scored the same)."""
    out_of = f" / {_number(row['max_score'], 'g')}" if row.get("max_score") is not None else ""
    interval = (f"[{_number(row['score_lo'], '.2f')}, {_number(row['score_hi'], '.2f')}]" if row.get("spread")
                else "(no spread)")
    return f"{_number(row['mean_score'], '.2f')}{out_of} {interval}"


def markdown(rows: Sequence[dict[str, JSON]], comparisons: Sequence[dict[str, JSON]], *, reference: str = "") -> str:
    """The team table (mean score out of the game's best, t interval, deals, forfeits), the team
    comparisons on shared deals, and the reference points line when there is one."""
    lines = ["| team | deals (matches) | mean score [95% CI] | forfeits (ill/exc/time/crash) |", "|---|---|---|---|"]
    lines += [f"| {r['team']} | {r['deals']} ({r['matches']}) | {score_cell(r)} | "
              f"{'/'.join(str(r[f'forfeits_{k}']) for k in FORFEIT_KINDS)} |" for r in rows]
    if comparisons:
        lines += ["", "Teams compared on the deals both played (paired t, 95%):", "",
                  "| team | other team | deals | difference [95% CI] | verdict |", "|---|---|---|---|---|"]
        lines += [f"| {c['team']} | {c['other']} | {c['deals']} | {_number(c['difference'], '+.2f')} "
                  f"[{_number(c['difference_lo'], '+.2f')}, {_number(c['difference_hi'], '+.2f')}] | "
                  f"{('higher' if c['difference_lo'] > 0 else 'lower') if c['detected'] else 'no difference detected'} |" for c in comparisons]
    if reference:
        lines += ["", reference[0].upper() + reference[1:] + "."]
    return "\n".join(lines) + "\n"
