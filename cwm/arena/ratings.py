"""The arena's leaderboard: one row per agent with a Bradley-Terry rating and its bootstrap 95% interval,
wins, draws and losses, forfeits by kind, and an LLM agent's tokens and cost per game won.

Ratings are fitted with ``choix`` (a maintained implementation of Luce/Bradley-Terry inference) on the
pairwise outcomes of every match: each pair of seats gives one comparison, the seat with the higher return
winning; a draw counts as half a win each way (one comparison in each direction). A small regularisation
keeps the rating of an agent that never lost (or never won) finite. Ratings are shown on the Elo scale
(400 / ln 10 per logit unit, mean 1000). The interval re-fits the ratings on resamples with
replacement (``bootstrap`` times, seeded) and takes the 2.5th and 97.5th percentiles; the unit resampled is
a seat-swapped pair on one deal (``resampling_units``: its two matches share their chance; with N players,
a table's seat orders on one deal), or a match that is in no such pair, in an order of match keys.

N-player matches enter by the same **pairwise decomposition**: a match of N seats gives N(N-1)/2
comparisons, one per pair of seats, the higher return winning (so a three-player win beats both others,
and the two losers are compared by their returns). The comparisons of one match are not independent; the
bootstrap over whole matches (whole tables) is what carries that into the interval.

Ratings are fitted per game. Across games, agents are compared only over games they share, each game
weighing the same: ``head_to_head`` gives each pair's mean rating difference over the games both played (a
pair with none is not ranked), and ``ratings_across`` rates every agent over the games all of them played
(refusing when there is none).
"""

from __future__ import annotations

import collections
import dataclasses
import itertools
import math
from collections.abc import Mapping, Sequence

import numpy as np

from cwm.agents.human import RESIGNED
from cwm.arena.types import FORFEIT_KINDS, MatchResult
from cwm.types import JSON

ELO_PER_LOGIT = 400 / math.log(10)
MEAN_RATING = 1000.0
DEFAULT_BOOTSTRAP = 200
DEFAULT_ALPHA = 0.01  # the regularisation of choix's fit: finite ratings for unbeaten agents
TELEMETRY_KEYS = ("llm_calls", "cached_calls", "input_tokens", "output_tokens", "thinking_tokens")


def comparisons(results: Sequence[MatchResult], labels: Sequence[str]) -> list[tuple[int, int]]:
    """``(winner, loser)`` index pairs over ``labels``: one per pair of seats of every match with an outcome
    (a draw gives both orders); void matches and self-play pairs are left out."""
    index = {label: i for i, label in enumerate(labels)}
    found: list[tuple[int, int]] = []
    for r in results:
        if r.void:
            continue
        for s in range(len(r.seats)):
            for t in range(s + 1, len(r.seats)):
                a, b = index[r.seats[s]], index[r.seats[t]]
                if a == b:
                    continue
                if r.returns[s] >= r.returns[t]:
                    found.append((a, b))
                if r.returns[t] >= r.returns[s]:
                    found.append((b, a))
    return found


def fit(n: int, data: Sequence[tuple[int, int]], *, alpha: float = DEFAULT_ALPHA) -> np.ndarray:
    """Bradley-Terry ratings (Elo scale, mean ``MEAN_RATING``) of ``n`` agents from ``(winner, loser)`` pairs,
    by choix's iterative Luce spectral ranking (``MEAN_RATING`` for all when there are no comparisons)."""
    import choix

    if not data:
        return np.full(n, MEAN_RATING)
    params = choix.ilsr_pairwise(n, list(data), alpha=alpha)
    return MEAN_RATING + ELO_PER_LOGIT * (params - params.mean())


def ratings(results: Sequence[MatchResult], *, bootstrap: int = DEFAULT_BOOTSTRAP, seed: int = 0,
            alpha: float = DEFAULT_ALPHA) -> dict[str, tuple[float, float, float]]:
    """Each agent's rating and its bootstrap 95% interval, ``label -> (rating, lo, hi)``.

    Args:
      results: the matches (void ones are left out).
      bootstrap: resamples of the matches for the interval (0: the interval is the rating itself).
      seed: seeds the resampling (the same seed gives the same intervals).
      alpha: choix's regularisation.
    """
    # fitted and resampled in an order of content, not of the file (with several workers, rows are appended
    # as matches end), so the same matches give the same ratings and intervals bit for bit
    labels = sorted({s for r in results for s in r.seats})
    played = sorted((r for r in results if not r.void), key=lambda r: r.key)
    point = fit(len(labels), comparisons(played, labels), alpha=alpha)
    rng = np.random.default_rng(seed)
    units = resampling_units(played)
    draws = [fit(len(labels), comparisons(resample(units, rng), labels), alpha=alpha)
             for _ in range(bootstrap if played else 0)]
    lo, hi = (np.percentile(draws, [2.5, 97.5], axis=0) if draws else (point, point))
    return {label: (float(point[i]), float(lo[i]), float(hi[i])) for i, label in enumerate(labels)}


def ratings_across(results_by_game: Mapping[str, Sequence[MatchResult]], *, bootstrap: int = DEFAULT_BOOTSTRAP,
                   seed: int = 0, alpha: float = DEFAULT_ALPHA) -> dict[str, tuple[float, float, float]]:
    """Each agent's rating over the games **every** agent played (``common_games``), each of those games
    weighted equally: the mean of its per-game ratings, with a 95% interval from resampling every game's
    matches together. Ratings fitted on different sets of games are not comparable (an agent's rating
    depends on whom it met in which game), so the games some agent did not play are left out.

    Args:
      results_by_game: game -> its matches (one tournament each).
      bootstrap, seed, alpha: as for ``ratings``.

    Raises:
      ValueError: no game that every agent played (compare pairs over their shared games instead:
        ``head_to_head``).
    """
    common = common_games(results_by_game)
    if not common and any(results_by_game.values()):
        raise ValueError(f"no game that every agent played (agents by game: {_agents_by_game(results_by_game)}); "
                         f"rank pairs over their shared games (head_to_head)")
    per_game = [list(results_by_game[g]) for g in common]
    point = _mean_over_games([ratings(r, bootstrap=0, alpha=alpha) for r in per_game])
    rng = np.random.default_rng(seed)
    units = [resampling_units(r) for r in per_game]
    draws = []
    for _ in range(bootstrap if per_game else 0):
        resampled = [resample(u, rng) for u in units]
        draws.append(_mean_over_games([ratings(r, bootstrap=0, alpha=alpha) for r in resampled]))
    found = {}
    for label, rating in point.items():
        samples = [d[label] for d in draws if label in d]
        lo, hi = np.percentile(samples, [2.5, 97.5]) if samples else (rating, rating)
        found[label] = (rating, float(lo), float(hi))
    return found


def head_to_head(results_by_game: Mapping[str, Sequence[MatchResult]], *, bootstrap: int = DEFAULT_BOOTSTRAP,
                 seed: int = 0, alpha: float = DEFAULT_ALPHA) -> list[dict[str, JSON]]:
    """Every pair of agents compared over the games **both** played, each of those games weighted equally:
    ``difference`` is the mean over those games of the first agent's rating minus the second's (each game's
    ratings fitted on all its matches), with a bootstrap 95% interval (every game's matches resampled
    together, ``bootstrap`` times, seeded). A pair with no shared game gets ``games == []`` and no
    difference: it is not ranked.
    """
    played = _agents_by_game(results_by_game)
    labels = list(dict.fromkeys(a for agents in played.values() for a in agents))
    games = [g for g in played if played[g]]
    point = {g: ratings(list(results_by_game[g]), bootstrap=0, alpha=alpha) for g in games}
    rng = np.random.default_rng(seed)
    units = {g: resampling_units(results_by_game[g]) for g in games}
    draws = [{g: ratings(resample(units[g], rng), bootstrap=0, alpha=alpha) for g in games}
             for _ in range(bootstrap if games else 0)]
    rows: list[dict[str, JSON]] = []
    for a, b in itertools.combinations(labels, 2):
        shared = [g for g in games if a in played[g] and b in played[g]]
        row: dict[str, JSON] = {"agent": a, "opponent": b, "games": list(shared), "difference": None,
                                "difference_lo": None, "difference_hi": None}
        if shared:
            diff = _difference(point, shared, a, b)
            assert diff is not None  # every agent of a game is rated in its full fit
            samples = [x for x in (_difference(d, shared, a, b) for d in draws) if x is not None]
            lo, hi = np.percentile(samples, [2.5, 97.5]) if samples else (diff, diff)
            row |= {"difference": diff, "difference_lo": float(lo), "difference_hi": float(hi)}
        rows.append(row)
    return rows


def resampling_units(results: Sequence[MatchResult]) -> list[tuple[MatchResult, ...]]:
    """A bootstrap's units, in an order of content: each seat-swapped pair (one index, the same two agents
    in both seat orders, one recorded deal) is one unit, since its two matches share their chance, and so
    is each table of an N-player game (one index, the same agents in their distinct seat orders, one deal);
    any other match is a unit of its own. Sorted by match key, so the same matches resample alike in any
    order."""
    groups: dict[tuple[int, frozenset[str], int | None], list[MatchResult]] = {}
    for r in sorted(results, key=lambda r: r.key):
        groups.setdefault((r.index, frozenset(r.seats), r.deal), []).append(r)
    units: list[tuple[MatchResult, ...]] = []
    for (_, _, deal), group in groups.items():
        twins = deal is not None and len(group) >= 2 and len({r.seats for r in group}) == len(group)
        units.extend([tuple(group)] if twins else [(r,) for r in group])
    return sorted(units, key=lambda u: u[0].key)


def resample(units: Sequence[tuple[MatchResult, ...]], rng: np.random.Generator) -> list[MatchResult]:
    """One bootstrap resample: ``len(units)`` units drawn with replacement, their matches in one list."""
    return [r for i in rng.integers(len(units), size=len(units)) for r in units[i]] if units else []


def common_games(results_by_game: Mapping[str, Sequence[MatchResult]]) -> list[str]:
    """The games, in order, that every agent of any game played."""
    played = _agents_by_game(results_by_game)
    everyone = {a for agents in played.values() for a in agents}
    return [g for g, agents in played.items() if agents and set(agents) == everyone]


def _agents_by_game(results_by_game: Mapping[str, Sequence[MatchResult]]) -> dict[str, list[str]]:
    return {g: list(dict.fromkeys(s for r in results for s in r.seats)) for g, results in results_by_game.items()}


def _difference(rated: Mapping[str, Mapping[str, tuple[float, float, float]]], games: Sequence[str], a: str,
                b: str) -> float | None:
    """The mean over ``games`` of ``a``'s rating minus ``b``'s, over the games where both are rated (a
    resample may draw none of an agent's matches in a game); ``None`` where there is none."""
    found = [rated[g][a][0] - rated[g][b][0] for g in games if a in rated[g] and b in rated[g]]
    return float(np.mean(found)) if found else None


def _mean_over_games(rated: Sequence[dict[str, tuple[float, float, float]]]) -> dict[str, float]:
    labels = dict.fromkeys(label for game in rated for label in game)
    return {label: float(np.mean([game[label][0] for game in rated if label in game])) for label in labels}


def forfeit_counts(r: dict[str, JSON]) -> str:
    """A row's forfeits by kind, ``illegal/exception/timeout/crash``, and ``, N resigned`` where a person resigned
    (``cwm play``: a resignation is a forfeit of its own kind, not an agent's failure)."""
    counts = "/".join(str(r.get(f"forfeits_{k}", 0)) for k in FORFEIT_KINDS)
    resigned = r.get(f"forfeits_{RESIGNED}")
    return counts + (f", {resigned} resigned" if resigned else "")


@dataclasses.dataclass
class _Tally:
    """One agent's counts over the matches, built up match by match."""

    matches: int = 0
    outcomes: collections.Counter[str] = dataclasses.field(default_factory=collections.Counter)
    forfeits: collections.Counter[str] = dataclasses.field(default_factory=collections.Counter)
    telemetry: collections.Counter[str] | None = None  # LLM agents only
    cost: float | None = 0.0  # None once a match's cost is unknown (a model with no listed price)

    def add(self, r: MatchResult, seat: int) -> None:
        mine, best = r.returns[seat], max(x for i, x in enumerate(r.returns) if i != seat)
        self.matches += 1
        self.outcomes["wins" if mine > best else ("losses" if mine < best else "draws")] += 1
        if r.forfeit_seat == seat:
            self.forfeits[r.forfeit_kind] += 1
        stats = r.stats[seat] if seat < len(r.stats) else None
        if isinstance(stats, dict) and "llm_calls" in stats:
            self._add_telemetry(stats)

    def _add_telemetry(self, stats: dict[str, JSON]) -> None:
        self.telemetry = self.telemetry if self.telemetry is not None else collections.Counter()
        for key in TELEMETRY_KEYS:
            value = stats.get(key)
            self.telemetry[key] += value if type(value) is int and value >= 0 else 0
        cost = stats.get("cost_usd")
        if self.cost is None or not (type(cost) is float and math.isfinite(cost) and cost >= 0):
            self.cost = None
        else:
            self.cost += cost

    def row(self) -> dict[str, JSON]:
        wins = self.outcomes["wins"]
        row: dict[str, JSON] = {"matches": self.matches, "wins": wins, "draws": self.outcomes["draws"],
                                "losses": self.outcomes["losses"]}
        row |= {f"forfeits_{k}": self.forfeits[k] for k in dict.fromkeys([*FORFEIT_KINDS, *self.forfeits])}
        if self.telemetry is not None:
            row |= {k: self.telemetry[k] for k in TELEMETRY_KEYS}
            row |= {"cost_usd": self.cost, "cost_per_win": self.cost / wins if self.cost is not None and wins else None}
        return row


def leaderboard(results: Sequence[MatchResult], *, bootstrap: int = DEFAULT_BOOTSTRAP,
                seed: int = 0) -> list[dict[str, JSON]]:
    """One row per agent, best rating first: ``rating`` with ``rating_lo``/``rating_hi``, ``matches``,
    ``wins``/``draws``/``losses``, ``forfeits_<kind>``, and for an agent that reports LLM telemetry its calls,
    tokens, ``cost_usd`` and ``cost_per_win`` (``None`` with no win, or when a call's model has no listed
    price). Void matches are left out."""
    rated = ratings(results, bootstrap=bootstrap, seed=seed)
    tallies = {label: _Tally() for label in rated}
    for r in results:
        if not r.void:
            for seat, label in enumerate(r.seats):
                tallies[label].add(r, seat)
    rows = [{"agent": label, "rating": rating, "rating_lo": lo, "rating_hi": hi} | tallies[label].row()
            for label, (rating, lo, hi) in rated.items()]
    return sorted(rows, key=lambda row: -rated[str(row["agent"])][0])


def cells(rows: Sequence[dict[str, JSON]]) -> tuple[list[str], list[list[str]]]:
    """The leaderboard as a table's head and rows of text; LLM columns (tokens in/out, cost, cost per win)
    when some agent reports them. An agent whose row has a ``fallback_rate`` over one half (``MOSTLY``, set
    by ``cwm.arena.report``) is named with ``(fell back N%)``."""
    llm = any("llm_calls" in r for r in rows)
    head = ["#", "agent", "rating [95% CI]", "n", "W/D/L", "forfeits (ill/exc/time/crash)"]
    head += ["tokens in/out", "cost (USD)", "cost per win"] if llm else []
    body = []
    for i, r in enumerate(rows, 1):
        line = [str(i), str(r["agent"]) + fallback_mark(r.get("fallback_rate")),
                f"{r['rating']:.0f} [{r['rating_lo']:.0f}, {r['rating_hi']:.0f}]",
                str(r["matches"]), f"{r['wins']}/{r['draws']}/{r['losses']}",
                forfeit_counts(r)]
        if llm:
            line += ([f"{r.get('input_tokens')}/{r.get('output_tokens')}", usd(r.get("cost_usd")),
                      usd(r.get("cost_per_win"))] if "llm_calls" in r else ["-", "-", "-"])
        body.append(line)
    return head, body


MOSTLY = 0.5  # an agent that fell back on more than this share of its moves is not what its name says


def fallback_mark(rate: JSON) -> str:
    """What a table adds to the name of an agent that fell back to random moves on most of its moves
    (``""`` otherwise)."""
    return f" (fell back {100 * rate:.0f}%)" if isinstance(rate, float) and rate > MOSTLY else ""


def markdown(rows: Sequence[dict[str, JSON]]) -> str:
    """The leaderboard as a markdown table (``cells``)."""
    head, body = cells(rows)
    lines = ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    return "\n".join(lines + ["| " + " | ".join(row) + " |" for row in body]) + "\n"


def usd(value: JSON) -> str:
    """A cost in USD for a table (``-``: unknown)."""
    return f"${value:.4f}" if isinstance(value, float) else "-"
