"""Paired comparisons of two agents, and what each agent was: the part of a report that says whether a
difference was shown, how large a difference the matches could have shown, and under which settings.

The unit is the **pair**: match ``i`` of each seat order of a two-player pairing is one deal with the seats
swapped (``cwm.arena.plan.MatchJobs``). A pair's value is the first agent's **edge**: half the difference of
the two agents' outcomes, averaged over the pair's two matches, where the outcome is the score (1 win, 1/2
draw, 0 loss) in a win/draw/loss game and the return in a payoff game. So in a win/draw/loss game the edge
is the score rate minus 1/2 (shown as the score, 0.50 even), and in a zero-sum payoff game it is the first
agent's mean payoff. A pair with a void match, or one whose twin is missing, is left out (and counted).

Each comparison (``cwm.stats.paired``: the Clopper-Pearson method for a bounded mean, over pairs whose
value lies within half the range of one match's outcome) gives the interval, the matches and pairs,
the minimum detectable difference at 80% power from the observed spread, the p-value, and, where nothing
was detected, how many matches would detect a difference of the observed size. Parity is claimed only by
an equivalence test (TOST at 5% on each side) within ``EQUIVALENCE_SHARE`` of the range of one match's
outcome: 0.05 of score in a win/draw/loss game, 5% of ``max - min`` utility in a payoff game.
"""

from __future__ import annotations

import collections
import itertools
from collections.abc import Mapping, Sequence

from cwm.agents.specs import AgentSpecError, parse_agent_spec
from cwm.arena.types import MatchResult
from cwm.stats import ALPHA, POWER, PairedComparison, paired
from cwm.text import counted
from cwm.types import JSON

EQUIVALENCE_SHARE = 0.05  # the equivalence margin, as a share of the range of one match's outcome


def bound_for(outcome: str, utility_range: float | None) -> float | None:
    """The bound of a pair's value (an edge lies in ``[-bound, bound]``): 1/2 of a score (win/draw/loss), or
    half the utility range (payoff; ``None`` when the range is unknown: no bounded test can be made)."""
    if outcome != "payoff":
        return 0.5
    return utility_range / 2 if utility_range and utility_range > 0 else None


def margin_for(outcome: str, utility_range: float | None) -> float | None:
    """The equivalence margin of a game's edge: ``EQUIVALENCE_SHARE`` of a score (win/draw/loss) or of the
    utility range (payoff; ``None`` when the range is unknown: no parity can be claimed)."""
    if outcome != "payoff":
        return EQUIVALENCE_SHARE
    return EQUIVALENCE_SHARE * utility_range if utility_range and utility_range > 0 else None


def edge_pairs(results: Sequence[MatchResult], first: str, second: str, *,
               outcome: str) -> tuple[list[float], int]:
    """The pair values (``first``'s edge) of the two agents' seat-swapped pairs, and how many of their
    matches are in no complete pair (a void match, a missing twin, or no shared deal: twins must record
    the same ``deal``, so rows written before deals were shared are never paired). With more than two
    players a "pair" is a table's balanced set of seat orders on one deal (``edge_units``)."""
    values, unpaired, _ = edge_units(results, first, second, outcome=outcome)
    return values, unpaired


def edge_units(results: Sequence[MatchResult], first: str, second: str, *,
               outcome: str) -> tuple[list[float], int, int]:
    """``first``'s edge over ``second`` per complete unit, the matches of theirs in no complete unit, and
    the matches in complete units.

    A unit is the matches of one table (the same agents, one per seat; an agent may hold several seats, as
    the CWM agent against two copies of an opponent) with one index: two players the seat-swapped pair, N
    players the table's rotations (or permutations). It is complete when none is void, all were played on
    one recorded deal and its seat orders are balanced (``balanced``). Its value is the mean over its
    matches of the pairwise edge of ``first`` over ``second`` (the pairwise decomposition of an N-player
    result that the ratings use too: the two agents' returns compared, the other seats left aside; where
    they hold several seats, the mean over each seat of ``first`` against each of ``second``), so with two
    players exactly the pair's value."""
    units: dict[tuple[int, tuple[str, ...]], list[MatchResult]] = {}
    for r in results:
        if first != second and first in r.seats and second in r.seats:
            units.setdefault((r.index, tuple(sorted(r.seats))), []).append(r)
    values, paired = [], 0
    for unit in units.values():
        if any(r.void for r in unit) or not one_deal(unit) or not balanced(unit):
            continue
        values.append(sum(_edge(r, first, second, outcome) for r in unit) / len(unit))
        paired += len(unit)
    return values, sum(len(u) for u in units.values()) - paired, paired


def one_deal(twins: Sequence[MatchResult]) -> bool:
    """Whether matches were played on one recorded deal (``MatchResult.deal``)."""
    return twins[0].deal is not None and all(r.deal == twins[0].deal for r in twins)


def balanced(unit: Sequence[MatchResult]) -> bool:
    """Whether a table's matches are distinct seat orders of one table in which every seat holds every agent
    as often as the agent sits at the table (two players: both orders; N players: the N rotations, or all
    N! orders), so that no agent gains from a seat."""
    table = collections.Counter(unit[0].seats)
    if len({r.seats for r in unit}) != len(unit) or any(collections.Counter(r.seats) != table for r in unit):
        return False
    for k in range(len(unit[0].seats)):
        held = collections.Counter(r.seats[k] for r in unit)
        if any(held[agent] * len(unit[0].seats) != n * len(unit) for agent, n in table.items()):
            return False
    return True


def _edge(r: MatchResult, first: str, second: str, outcome: str) -> float:
    mine = [x for x, seat in zip(r.returns, r.seats) if seat == first]
    theirs = [y for y, seat in zip(r.returns, r.seats) if seat == second]
    edges = [_one_edge(a, b, outcome) for a in mine for b in theirs]
    return sum(edges) / len(edges)


def _one_edge(a: float, b: float, outcome: str) -> float:
    if outcome == "payoff":
        return (a - b) / 2
    return (1.0 if a > b else 0.0 if a < b else 0.5) - 0.5


def comparisons(results: Sequence[MatchResult], *, outcome: str, margin: float | None,
                bound: float | None) -> list[dict[str, JSON]]:
    """One row per two distinct agents that met at a table (in order of first appearance, each pair of seats
    of a match in seat order): the pair analysis of the first-seated agent's edge
    (``cwm.stats.PairedComparison`` fields; pair values within ``bound``, ``bound_for``), ``matches`` (in
    complete pairs), ``unpaired``, ``needed_matches`` (``needed_pairs`` times the matches of a pair), and
    the ``verdict`` in words; with more than two players also ``players``, and a "pair" is a table's
    balanced set of seat orders on one deal, its value the pairwise edge (``edge_units``). Without a
    ``bound`` (a payoff game that states no utility range) the mean is shown and nothing is tested."""
    seen: dict[frozenset[str], tuple[str, str]] = {}
    players: dict[frozenset[str], int] = {}
    for r in results:
        for i, j in itertools.combinations(range(len(r.seats)), 2):
            if r.seats[i] != r.seats[j]:
                seen.setdefault(frozenset((r.seats[i], r.seats[j])), (r.seats[i], r.seats[j]))
                players.setdefault(frozenset((r.seats[i], r.seats[j])), len(r.seats))
    rows = []
    for key, (first, second) in seen.items():
        values, unpaired, matches = edge_units(results, first, second, outcome=outcome)
        c = paired(values, bound=bound, margin=margin) if bound is not None else _untested(values)
        row: dict[str, JSON] = {"agent": first, "opponent": second, "outcome": outcome, "matches": matches,
                                "unpaired": unpaired, **c.to_json()}
        size = matches // c.pairs if c.pairs else players[key]  # the matches of one pair (a table's seat orders)
        row["needed_matches"] = None if c.needed_pairs is None else size * c.needed_pairs
        if players[key] > 2:
            row["players"] = players[key]
        row["verdict"] = verdict(row)
        rows.append(row)
    return rows


def _untested(values: Sequence[float]) -> PairedComparison:
    mean = sum(values) / len(values) if values else 0.0
    return PairedComparison(len(values), mean, mean, mean, 0.0, 1.0, False, None, None, None, None, 0.0)


def _num(row: Mapping[str, JSON], key: str) -> float:
    value = row[key]
    assert isinstance(value, (int, float))
    return float(value)


def shown(row: Mapping[str, JSON], value: float, *, sign: bool = True) -> str:
    """An edge as the table shows it: the score (``0.5 + edge``) in a win/draw/loss game, else the edge."""
    if row["outcome"] == "payoff":
        return f"{value:+.3f}" if sign else f"{value:.3f}"
    return f"{0.5 + value:.2f}" if sign else f"{value:.2f}"


def verdict(row: Mapping[str, JSON]) -> str:
    """What a comparison shows, in words: who is ahead (significant at ``ALPHA``), parity within the margin
    (TOST), or that nothing was detected, with the minimum detectable difference and how many matches
    would resolve a difference of the observed size."""
    first, second, pairs, mean = row["agent"], row["opponent"], int(_num(row, "pairs")), _num(row, "mean")
    if pairs == 0:
        return "no complete seat-swapped pair: nothing to compare"
    if row.get("bound") == 0.0:
        return "not tested: the game states no utility range to bound a pair's value"
    if row["significant"]:
        return f"{first if mean > 0 else second} ahead (p = {_num(row, 'p_value'):.2g})"
    if row["equivalent"]:
        return f"level within ±{shown(row, _num(row, 'margin'), sign=False)} (equivalence test, TOST at {ALPHA:g})"
    if row["mde"] is None:
        return f"no difference detected; {pairs} pair(s) cannot show one at {ALPHA:g}: play more matches"
    mde = shown(row, _num(row, "mde"), sign=False)
    found = f"no difference detected (could detect ±{mde} at {POWER:.0%} power)"
    if row["needed_matches"] is None:
        return found + ("; the observed difference is 0" if mean == 0 else
                        "; a difference of the observed size would need over 20 million matches")
    return found + f"; about {row['needed_matches']} matches would resolve a difference of the observed size"


def markdown(rows: Sequence[Mapping[str, JSON]]) -> str:
    """The comparisons as a markdown table, with a line on how they are made (empty when there are none)."""
    if not rows:
        return ""
    what = ("score = (wins + draws/2) / matches of the first agent, 0.50 even" if rows[0]["outcome"] != "payoff"
            else "edge = half the mean payoff difference (a zero-sum game: the first agent's mean payoff)")
    tables = ("; with more than two players a pair is the rotations of a table on one deal, each agent "
              "compared with the other by their two returns" if any("players" in r for r in rows) else "")
    lines = [f"Paired comparisons (seat-swapped pairs on one deal; {what}; 95% bounded-mean Clopper-Pearson interval over pairs; MDE: the "
             f"smallest difference detectable at {POWER:.0%} power{tables}):", "",
             "| agent | opponent | matches (pairs) | " + ("score" if rows[0]["outcome"] != "payoff" else "edge")
             + " [95% CI] | MDE | verdict |", "|---|---|---|---|---|---|"]
    for r in rows:
        mde = "-" if r["mde"] is None else "±" + shown(r, _num(r, "mde"), sign=False)
        lines.append(f"| {r['agent']} | {r['opponent']} | {r['matches']} ({r['pairs']}) | "
                     f"{shown(r, _num(r, 'mean'))} [{shown(r, _num(r, 'lo'))}, {shown(r, _num(r, 'hi'))}] | {mde} | "
                     f"{r['verdict']} |")
    unpaired = sum(int(_num(r, "unpaired")) for r in rows)
    note = ["", f"{unpaired} match(es) in no complete pair (void, a twin not played, or no shared deal recorded) are left out."] if unpaired else []
    return "\n".join(lines + note) + "\n"


def describe_agents(specs: Mapping[str, str], settings: Mapping[str, JSON], *, perfect: bool) -> dict[str, str]:
    """What each agent of a tournament is, in one line: its planner with its simulations, rollouts and
    rollout cut-off (where one is set), how it infers hidden state, or its LLM model (``specs``: label ->
    spec; ``settings``: the recorded ``Settings`` as JSON)."""
    search = settings.get("search") if isinstance(settings.get("search"), dict) else {}
    assert isinstance(search, dict)
    sims, rollouts, cutoff = search.get("num_simulations"), search.get("rollouts"), search.get("max_rollout_steps")
    budget = (f"{counted(sims, 'simulation')}, {counted(rollouts, 'rollout')} per leaf"
              if type(sims) is int and type(rollouts) is int else "search settings not recorded")
    if type(cutoff) is int:  # a cut-off changes what a rollout is worth: never left out of what was run
        budget += f", each rollout cut off after {counted(cutoff, 'move')}"
    found = {}
    for label, text in specs.items():
        try:
            spec = parse_agent_spec(text)
        except AgentSpecError:
            found[label] = f"`{text}`"
            continue
        found[label] = _describe(spec.kind, spec.target, budget, settings, perfect=perfect)
    return found


def _describe(kind: str, target: str, budget: str, settings: Mapping[str, JSON], *, perfect: bool) -> str:
    planner = "MCTS" if perfect else "ISMCTS"
    if kind == "random":
        return "uniformly random legal moves"
    if kind.startswith("gt-"):
        infer = "" if perfect else "; inference: exact (worlds drawn from the true game)"
        return f"{planner} on the true game, {budget}{infer}"
    if kind in ("cwm", "cwm-selected"):
        infer = "" if perfect else "; inference: the bundle's synthesized inference function"
        return f"{planner} on the synthesized model, {budget}{infer}"
    if kind == "ppo":
        return "a PPO policy network (no search)"
    return (f"LLM policy, model `{target}`, {settings.get('llm_retries')} retries, "
            f"{settings.get('llm_examples')} example trajectories")


def settings_markdown(described: Mapping[str, str], matches: JSON) -> str:
    """What was run: one line per agent, and the matches per seat order."""
    lines = [f"What was run ({matches} matches per seat order of each pairing):", ""]
    return "\n".join(lines + [f"- `{label}`: {text}" for label, text in described.items()]) + "\n"
