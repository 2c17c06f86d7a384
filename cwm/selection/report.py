"""What a selection found: each agent's score over its hosted games, the agents that survive the margin, and
the files that say so (``selection.json``, ``selection.md``), read back by ``read_survivors`` for the arena.

An agent's score is its mean utility over every seat it took in a non-void game (both seats of a self-play
game count), with a 95% normal interval. An agent survives when its mean is at most ``margin`` times the
game's utility range below the best agent's (paper: 10%).

Every two agents are also compared directly over their seat-swapped pairs (game ``i`` of both seat orders in
one host, played on one deal), pooled over the hosts: ``cwm.arena.compare.comparisons``, the arena's paired
analysis (``cwm.stats.paired``: a bounded-mean Clopper-Pearson interval over pairs, the minimum detectable
difference at 80% power, parity only by an equivalence test). A failed game is a pair value like any other
(both players got the minimum utility: no edge); a void game leaves its pair out.
"""

from __future__ import annotations

import dataclasses
import json
import math
from collections import Counter
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from cwm.agents.selected import SELECTION_FILE, Candidate, SelectionError, read_survivors  # noqa: F401
from cwm.arena import compare
from cwm.arena.types import MatchResult
from cwm.files import atomic_write
from cwm.selection.play import GameRecord
from cwm.stats import mean_interval
from cwm.types import JSON

REPORT_FILE = "selection.md"


@dataclasses.dataclass(frozen=True)
class AgentScore:
    """One agent's result: mean utility and 95% interval over ``samples`` seats, games of its that failed
    (``failed_games``; ``own_failures`` of them by its own seat), and whether it survived."""

    candidate: Candidate
    mean: float
    lo: float
    hi: float
    samples: int
    failed_games: int
    own_failures: int
    survived: bool

    def to_json(self) -> dict[str, JSON]:
        return dataclasses.asdict(self.candidate) | {k: _finite(v) for k, v in dataclasses.asdict(self).items()
                                                     if k != "candidate"}


@dataclasses.dataclass(frozen=True)
class Selection:
    """The outcome of ``cwm.selection.select_models``.

    Attributes:
      game: the game's name; out: the selection folder.
      hosts: the labels of the bundles that hosted the games.
      utility: the game's (minimum, maximum) utility; utility_source says where it comes from.
      margin: the rejection margin as a fraction of the utility range; threshold: the lowest surviving mean.
      scores: every agent's score, in the order the bundles were given.
      records: every game played (void ones included).
      comparisons: every two agents compared over their seat-swapped pairs (``pair_comparisons``).
    """

    game: str
    out: Path
    hosts: tuple[str, ...]
    utility: tuple[float, float]
    utility_source: str
    margin: float
    threshold: float
    scores: tuple[AgentScore, ...]
    records: tuple[GameRecord, ...]
    comparisons: tuple[dict[str, JSON], ...] = ()

    @property
    def survivors(self) -> tuple[str, ...]:
        """The labels of the agents that survived."""
        return tuple(s.candidate.label for s in self.scores if s.survived)

    @property
    def survivor_paths(self) -> tuple[Path, ...]:
        """The bundle folders of the agents that survived."""
        return tuple(Path(s.candidate.path) for s in self.scores if s.survived)

    @property
    def spec(self) -> str:
        """The arena agent spec that plays this selection (``cwm-selected:OUT``)."""
        return f"cwm-selected:{self.out.resolve()}"

    def to_json(self) -> dict[str, JSON]:
        played = [r for r in self.records if not r.void]
        return {
            "game": self.game, "hosts": list(self.hosts),
            "utility": {"min": self.utility[0], "max": self.utility[1], "source": self.utility_source},
            "margin": self.margin, "threshold": _finite(self.threshold),
            "games": {"played": len(played), "failed": sum(1 for r in played if r.failed),
                      "void": len(self.records) - len(played),
                      "failures_by": dict(Counter(_who(r) for r in played if r.failed)),
                      "failures_by_kind": dict(Counter(r.kind for r in played if r.failed))},
            "agents": [s.to_json() for s in self.scores], "survivors": list(self.survivors),
            "comparisons": list(self.comparisons),
        }


def score(candidates: Sequence[Candidate], records: Sequence[GameRecord], *, margin: float,
          utility: tuple[float, float]) -> tuple[tuple[AgentScore, ...], float]:
    """Every candidate's score over ``records`` and the threshold a mean must reach to survive."""
    samples: dict[str, list[float]] = {c.label: [] for c in candidates}
    failed, own = Counter[str](), Counter[str]()
    for r in records:
        if r.void:
            continue
        for seat, (label, value) in enumerate(zip(r.seats, r.returns)):
            samples.setdefault(label, []).append(value)
            failed[label] += bool(r.failed)
            own[label] += r.failed == f"seat {seat}"
    stats = {label: mean_interval(v) for label, v in samples.items()}
    means = [m for label, (m, _, _) in stats.items() if label in {c.label for c in candidates} and math.isfinite(m)]
    threshold = (max(means) if means else math.nan) - margin * (utility[1] - utility[0])
    scores = tuple(AgentScore(c, *stats[c.label], len(samples[c.label]), failed[c.label], own[c.label],
                              math.isfinite(stats[c.label][0]) and stats[c.label][0] >= threshold - 1e-12)
                   for c in candidates)
    return scores, threshold


def pair_comparisons(records: Sequence[GameRecord], *, hosts: Sequence[str], games_per_pairing: int,
                     utility: tuple[float, float], outcome: str) -> tuple[dict[str, JSON], ...]:
    """Every two distinct agents compared over their seat-swapped pairs, pooled over ``hosts`` (pair ``i`` of
    host ``h`` is pair ``h * games_per_pairing + i``): the arena's rows (``cwm.arena.compare.comparisons``),
    the edge scored as the game's ``outcome`` says (``payoff``, else win/draw/loss) within ``utility``.
    Records without a shared deal (written before games were paired) are counted as unpaired."""
    place = {h: k for k, h in enumerate(hosts)}
    results = [MatchResult(r.key, r.seats, r.seed, r.returns, forfeit_kind="crash" if r.void else "",
                           index=place[r.host] * games_per_pairing + r.index, deal=r.deal)
               for r in records if r.host in place]
    kind = "payoff" if outcome == "payoff" else "win/draw/loss"
    span = utility[1] - utility[0]
    rows = compare.comparisons(results, outcome=kind, margin=compare.margin_for(kind, span),
                               bound=compare.bound_for(kind, span))
    return tuple({k: _finite(v) for k, v in row.items()} for row in rows)


def write_selection(selection: Selection, *, games_per_pairing: int, seed: int) -> None:
    """Writes ``selection.json`` and ``selection.md`` into the selection folder (each atomically)."""
    data = selection.to_json() | {"games_per_pairing": games_per_pairing, "seed": seed}
    atomic_write(selection.out / SELECTION_FILE, json.dumps(data, indent=2) + "\n")
    atomic_write(selection.out / REPORT_FILE, markdown(selection, games_per_pairing=games_per_pairing))


def markdown(selection: Selection, *, games_per_pairing: int) -> str:
    """The selection as a short markdown report: the numbers, one row per agent, the first failures."""
    lo, hi = selection.utility
    n = len(selection.scores)
    played = [r for r in selection.records if not r.void]
    best = max((s for s in selection.scores if math.isfinite(s.mean)), key=lambda s: s.mean, default=None)
    lines = [f"# Sample rejection: {selection.game}", "",
             f"{len(selection.hosts)} host(s) ({', '.join(selection.hosts)}) x {n * n} pairings x "
             f"{games_per_pairing} games = {len(selection.hosts) * n * n * games_per_pairing:,} games: "
             f"{len(played):,} played, {sum(1 for r in played if r.failed):,} of them failed (both players lost), "
             f"{len(selection.records) - len(played)} void.",
             f"Utility range [{lo:g}, {hi:g}] ({selection.utility_source}); margin {selection.margin:.0%} of it "
             f"= {selection.margin * (hi - lo):g}; best mean {_num(best.mean) if best else 'none'}"
             f"{f' ({best.candidate.label})' if best else ''}; an agent survives at a mean of at least "
             f"{_num(selection.threshold)}.", "",
             "| agent | mean utility | 95% interval | seats | failed games | by its own seat | survived |",
             "|---|---|---|---|---|---|---|"]
    for s in selection.scores:
        lines.append(f"| {_cell(s.candidate.label)} | {_num(s.mean)} | [{_num(s.lo)}, {_num(s.hi)}] | {s.samples} | "
                     f"{s.failed_games} | {s.own_failures} | {'yes' if s.survived else 'no'} |")
    lines += ["", f"Survivors: {', '.join(selection.survivors) or 'none'}."]
    if selection.comparisons:
        lines += ["", "## Agent against agent", "", compare.markdown(selection.comparisons).rstrip("\n")]
    failures = [r for r in played if r.failed]
    if failures:
        lines += ["", "## Failed games (the first 10)", "", "| game | who | kind | reason |", "|---|---|---|---|"]
        lines += [f"| {_cell(r.key)} | {_who(r)} | {_cell(r.kind)} | {_cell(r.reason[:300])} |" for r in failures[:10]]
    return "\n".join(lines) + "\n"


def _who(r: GameRecord) -> str:
    return "host" if r.failed == "host" else "seat"


def _finite(x: Any) -> Any:
    return x if not isinstance(x, float) or math.isfinite(x) else None


def _num(x: float) -> str:
    return f"{x:.3f}" if math.isfinite(x) else "n/a"


def _cell(text: str) -> str:
    return text.replace("|", "\\|")
