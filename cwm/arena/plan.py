"""The plan of a tournament and what of it is done: jobs from agent specs, each keyed by its content
(``cwm.arena.identity``: the game, the settings, each seat's agent fingerprint, the index), and the
finished matches read back from ``matches.jsonl``, so a resumed tournament plays nothing it has played,
whatever its agents are called now.

Importable from ``cwm.arena``.
"""

from __future__ import annotations

import dataclasses
import hashlib
import itertools
import logging
from collections.abc import Iterator, Mapping, Sequence
from pathlib import Path
from typing import Any, overload

from cwm import games
from cwm.agents.fingerprint import former_fingerprint
from cwm.agents.specs import AgentSpec, AgentSpecError, Settings, check_labels, parse_agent_spec
from cwm.arena import identity, teams
from cwm.arena.types import MatchJob, MatchResult
from cwm.files import RECORDS_BYTES, InputLimitError, LineError, parse_jsonl, read_appended, read_bounded
from cwm.types import JSON, CwmError, from_former_keywords

log = logging.getLogger("cwm.arena")

DEFAULT_MOVE_TIME_S = 60.0  # CPU seconds per move before a timeout forfeit, unless the tournament sets one


class ArenaError(CwmError, ValueError):
    """A tournament that cannot run as asked: too few agents, an agent that cannot be built (bad spec, LLM
    configuration, settings), bad numbers, or an output folder of another tournament."""


@dataclasses.dataclass(frozen=True)
class TournamentPlan:
    """What a tournament plays: its matches and the settings they are played under.

    Attributes:
      matches: games per pairing and seat order.
      settings: search and LLM settings of every agent.
      seed: the tournament seed (each match's seed derives from it and the match key).
      pairings: seatings by label (or by the spec of a new agent with a label of its own) instead of every pair
        of distinct agents.
      move_time_limit: CPU seconds per move before a ``timeout`` forfeit (``None``: no limit for in-process
        agents, and a CWM agent's worker gets its own default); a ``cwm:`` agent's worker gets exactly this
        CPU budget.
      seat_orders: which seat orders of each table of agents are played (``SEAT_ORDERS``, ``seat_orders``):
        ``"rotations"`` (default), the N cyclic rotations, in which each agent takes each seat once;
        ``"permutations"``, all N! orders, in which besides each agent follows each other agent in turn
        equally often. With two players both are the same two orders. The rotations are among the
        permutations and a match's key does not depend on this setting, so a folder played one way resumes
        the other way without playing a match twice.
      deals: given chance seeds instead of dealt ones (``None``, the default: ``deal_seed``): match ``i`` of
        every seat order of every pairing is dealt ``deals[i]``, one per match (``matches == len(deals)``), so
        teams under other settings play the deals of an earlier tournament (read from its ``MatchResult.deal``).
        The list is part of the recorded settings, so it is in every match key: another list, other matches.

    Raises:
      ArenaError: given deals that are not a tuple of integers in [0, 2**63), one per match.
    """

    matches: int
    settings: Settings = Settings()
    seed: int = 0
    pairings: Sequence[tuple[str, ...]] | None = None
    move_time_limit: float | None = DEFAULT_MOVE_TIME_S
    seat_orders: str = "rotations"
    deals: tuple[int, ...] | None = None

    def __post_init__(self) -> None:
        if self.problems():  # a plan with given deals is dealt from them at once (its jobs, its cost estimate)
            raise ArenaError("; ".join(self.problems()))

    def replace(self, **changes: Any) -> TournamentPlan:
        return dataclasses.replace(self, **changes)

    def recorded(self) -> dict[str, JSON]:
        """What the matches are played under besides the game (``config.json`` holds it with it); given deals
        are there only when given, so a dealt tournament's settings (and keys) are as they always were."""
        recorded = tournament_settings(self.seed, self.settings, self.move_time_limit)
        return recorded if self.deals is None else recorded | {"deals": list(self.deals)}

    def problems(self) -> list[str]:
        """What is wrong with the given deals (none when none are given): one entry per problem."""
        if self.deals is None:
            return []
        if not isinstance(self.deals, tuple) or any(
                isinstance(d, bool) or not isinstance(d, int) or not 0 <= d < 2**63 for d in self.deals):
            return [f"deals must be a tuple of integers in [0, 2**63) (got {self.deals!r})"]
        if len(self.deals) != self.matches:
            return [f"{len(self.deals)} deal(s) given for {self.matches} match(es) per seat order; give one deal "
                    f"per match"]
        return []


def plan_from(plan: TournamentPlan | None, legacy: dict[str, Any], who: str) -> TournamentPlan:
    """The plan a function was given: ``plan``, or one from the former keyword arguments (``matches=``,
    ``settings=``, ``seed=``, ``pairings=``, ``move_time_limit=``: deprecated, with a ``DeprecationWarning``).

    Raises:
      ArenaError: both, neither, or an unknown keyword.
    """
    found = from_former_keywords(TournamentPlan, plan, legacy, who=who, error=ArenaError)
    if found is None:
        raise ArenaError(f"{who}: pass a TournamentPlan (how many matches, under which settings)")
    return found


def match_seed(seed: int, key: str) -> int:
    """The seed of one match: a hash of the tournament seed and the match key (independent of run order)."""
    return int.from_bytes(hashlib.sha256(f"{seed}|{key}".encode()).digest()[:8], "big") >> 1


MAX_MATCHES = 100_000  # matches one tournament may plan (a typo like --matches 1000000000 is refused at once)
_NUMBERS = {2: "two", 3: "three", 4: "four", 5: "five"}
SEAT_ORDERS = ("rotations", "permutations")  # which seat orders of a table a tournament plays


def seat_orders(table: Sequence[Any], how: str = "rotations") -> list[tuple[Any, ...]]:
    """The seat orders of one table of agents (a seat each), each once, in order.

    ``"rotations"``: the N cyclic rotations ``table[k:] + table[:k]``, a Latin square: each agent takes each
    seat exactly once, and each agent is followed in turn by the same agent in every order (the cyclic order
    of play is the table's). ``"permutations"``: all N! orders (``itertools.permutations``), which balance
    that too: each agent takes each seat (N-1)! times and follows each other agent equally often. With two
    agents both give ``[(a, b), (b, a)]``. A table that seats one agent twice (self-play) gives each
    distinct order once.

    Raises:
      ArenaError: ``how`` is not one of ``SEAT_ORDERS``.
    """
    if how == "rotations":
        orders = [tuple(table[k:]) + tuple(table[:k]) for k in range(len(table))]
    elif how == "permutations":
        orders = list(itertools.permutations(table))
    else:
        raise ArenaError(f"seat orders must be one of {list(SEAT_ORDERS)} (got {how!r})")
    return list(dict.fromkeys(orders))


@dataclasses.dataclass(frozen=True)
class Seating:
    """One seat order of a tournament: each seat's label, the spec a worker builds, and its fingerprint."""

    labels: tuple[str, ...]
    builds: tuple[str, ...]
    fingerprints: tuple[str, ...]


class MatchJobs(Sequence[MatchJob]):
    """A tournament's jobs in order, each made when it is asked for: a plan's size costs no memory until its
    matches are played.

    The seat orders of one pairing (a table of N agents in an N-player game) play each index in turn, so in
    a two-player pairing jobs ``2k`` and ``2k + 1`` are one deal with the seats swapped: match ``i`` of every
    seat order of a pairing shares its chance seed (``deal_seed``), the standard variance reduction of an
    arena (duplicate play; with N players, each rotation of the table on one deal). With ``shared_deals``
    (a cooperative game) match ``i`` of every pairing, every team, is that one deal. The agents' own seeds
    differ (they derive from each match's seed).

    Attributes:
      seatings: the seat orders, in order (those of one pairing next to each other).
      groups: per pairing, the indices in ``seatings`` of its seat orders.
    """

    def __init__(self, game: str, seatings: list[Seating], plan: TournamentPlan, log_dir: str | None,
                 groups: Sequence[Sequence[int]] | None = None, *, shared_deals: bool = False):
        self.game, self.seatings, self.plan, self.log_dir = game, seatings, plan, log_dir
        self.shared_deals = shared_deals
        self.groups = [list(g) for g in groups] if groups is not None else [[i] for i in range(len(seatings))]
        self._hashed = identity.settings_hash(plan.recorded())

    def __len__(self) -> int:
        return len(self.seatings) * self.plan.matches

    @overload
    def __getitem__(self, i: int) -> MatchJob: ...

    @overload
    def __getitem__(self, i: slice) -> list[MatchJob]: ...

    def __getitem__(self, i: int | slice) -> MatchJob | list[MatchJob]:
        if isinstance(i, slice):
            return [self[k] for k in range(*i.indices(len(self)))]
        n = len(self)
        if not -n <= i < n:
            raise IndexError(f"match job {i} of {n}")
        i %= n
        for group in self.groups:
            size = len(group) * self.plan.matches
            if i < size:
                index, order = divmod(i, len(group))
                return self._job(self.seatings[group[order]], index)
            i -= size
        raise AssertionError("the groups cover every seating")

    def __iter__(self) -> Iterator[MatchJob]:
        for group in self.groups:
            for index in range(self.plan.matches):
                for order in group:
                    yield self._job(self.seatings[order], index)

    def count_done(self, done: Mapping[str, MatchResult]) -> int:
        """How many of these jobs ``done`` holds (found from each result's fingerprints and index, so the
        count costs the results', not the plan's, size)."""
        prints = {s.fingerprints for s in self.seatings}
        return sum(1 for key, r in done.items() if r.fingerprints in prints and 0 <= r.index < self.plan.matches
                   and identity.match_key(self.game, self._hashed, r.fingerprints, r.index) == key)

    def _job(self, seating: Seating, index: int) -> MatchJob:
        key = identity.match_key(self.game, self._hashed, seating.fingerprints, index)
        deal = (self.plan.deals[index] if self.plan.deals is not None else
                deal_seed(self.plan.seed, self.game, self._hashed, () if self.shared_deals else seating.fingerprints,
                          index))
        return MatchJob(self.game, key, seating.labels, match_seed(self.plan.seed, key), self.plan.settings,
                        self.plan.move_time_limit, self.log_dir, seating.builds, seating.fingerprints, index, deal)


def deal_seed(seed: int, game: str, settings: str, fingerprints: Sequence[str], index: int) -> int:
    """The chance seed of match ``index`` of every seat order of one set of agents: a hash of the tournament
    seed and the match key of the agents in sorted order, so seat-swapped matches share their deal.

    Args:
      settings: the tournament's settings hash (``cwm.arena.identity.settings_hash``).
    """
    return match_seed(seed, "deal|" + identity.match_key(game, settings, sorted(fingerprints), index))


def recorded_deals(path: Path) -> tuple[int, ...]:
    """The deals of an earlier tournament (its ``matches.jsonl``, read without writing to it), by match index:
    what ``TournamentPlan.deals`` takes to deal its cards again under other settings.

    Raises:
      ArenaError: no match with a recorded deal, an index of 0..n-1 missing, or an index played on two deals
        (a competitive tournament deals each pairing its own; give one pairing's folder).
    """
    found: dict[int, set[int]] = {}
    for r in read_results(path).values():
        if r.deal is not None and not r.void:
            found.setdefault(r.index, set()).add(r.deal)
    if not found:
        raise ArenaError(f"{path}: no finished match with a recorded deal")
    mixed = next((i for i, d in sorted(found.items()) if len(d) > 1), None)
    if mixed is not None:
        raise ArenaError(f"{path}: match {mixed} was played on {len(found[mixed])} deals (each pairing its own); "
                         f"deals can be taken from a tournament whose match i is one deal for every table")
    if sorted(found) != list(range(len(found))):
        missing = min(set(range(max(found) + 1)) - set(found))
        raise ArenaError(f"{path}: no finished match {missing} with a recorded deal (indices 0..{max(found)} "
                         f"needed)")
    return tuple(next(iter(found[i])) for i in range(len(found)))


def plan_jobs(game: str, agents: Sequence[str], plan: TournamentPlan, *, log_dir: str | None = None) -> MatchJobs:
    """The jobs of a tournament: each pairing in its seat orders (``plan.seat_orders``: in a two-player game
    both orders), ``plan.matches`` games per order, made lazily (``MatchJobs``); match ``i`` of each seat
    order of a pairing is one deal (``deal_seed``), played next to each other.

    A game of N players seats N agents at a time: a pairing is a table of N agents, and the default
    pairings are every set of N distinct agents (``itertools.combinations``). In a cooperative game (one
    shared payoff, ``cwm.arena.teams.cooperative``) a table is a team: the default is every team of N
    agents, repeats included (``combinations_with_replacement``: each agent's own team and every mixed
    one), and match ``i`` of every team is played on the same deal, so teams are compared on the same cards.

    Each job's key, and so its seed, is its content (``cwm.arena.identity.match_key``): the game, these
    settings, each seat's agent fingerprint and the index, so neither depends on an agent's label or on
    where a ``cwm:`` bundle lives. Each agent is shown under its label (``NAME`` of ``NAME=SPEC``, else the
    spec as typed); workers build the spec with its path made absolute (``MatchJob.builds``).

    Args:
      plan: the matches, settings, seed, move limit and seat orders; its ``pairings`` are seatings by label,
        or by the spec of an agent of its own (whose label must be new), one entry per player; default every
        set of as many distinct agents as the game has players (a self-play pairing ``(a, a)`` may be
        given).

    Raises:
      AgentSpecError: a spec that does not parse, two seated specs with one label (in ``agents`` or
        ``pairings``), or a pairing entry that is an agent's spec under another label (``random`` for
        ``x=random``: pair it as ``x``).
      ArenaError: fewer agents than the game has players and no pairings, a pairing with another number of
        entries, unknown seat orders, two labels for one agent (one fingerprint), or more than
        ``MAX_MATCHES`` matches in all.
    """
    specs = {s.label: s for s in _parse_all(agents)}
    players = games.resolve(game).players
    pairings = plan.pairings
    shared = teams.cooperative(game)  # one shared payoff: every team (agents seated together), on shared deals
    if pairings is None and shared:
        pairings = list(itertools.combinations_with_replacement(specs, players))
    if pairings is None:
        if len(specs) < players:
            raise ArenaError(f"a tournament of a {players}-player game needs at least {_NUMBERS.get(players, players)} "
                             f"agents (or explicit pairings, or --self-play); got {len(specs)}")
        pairings = list(itertools.combinations(specs, players))
    wrong = next((pair for pair in pairings if len(pair) != players), None)
    if wrong is not None:
        raise ArenaError(f"pairing {list(wrong)} seats {len(wrong)} agent(s); {game} is a {players}-player game")
    seated = [tuple(_seat(entry, specs) for entry in pair) for pair in pairings]
    grouped = [seat_orders(pair, plan.seat_orders) for pair in seated]  # each order once for self-play
    orders = [o for group in grouped for o in group]
    if len(orders) * plan.matches > MAX_MATCHES:
        raise ArenaError(f"{plan.matches:,} matches per seat order over {len(orders)} seat orders is "
                         f"{len(orders) * plan.matches:,} matches, over the {MAX_MATCHES:,} one tournament may "
                         f"play; lower --matches")
    prints = _fingerprints(list(dict.fromkeys([*specs.values(), *(s for pair in seated for s in pair)])))
    seatings = [Seating(tuple(s.label for s in order), tuple(_absolute(s) for s in order),
                        tuple(prints[s.label] for s in order)) for order in orders]
    starts = list(itertools.accumulate((len(g) for g in grouped), initial=0))
    return MatchJobs(game, seatings, plan, log_dir, [list(range(a, b)) for a, b in itertools.pairwise(starts)],
                     shared_deals=shared)


def tournament_settings(seed: int, settings: Settings, move_time_limit: float | None) -> dict[str, JSON]:
    """What a tournament's matches are played under besides the game (``config.json`` holds it with it)."""
    return {"seed": seed, "settings": dataclasses.asdict(settings), "move_time_limit": move_time_limit}


def _fingerprints(specs: Sequence[AgentSpec]) -> dict[str, str]:
    """Label -> fingerprint of each agent (labels checked unique); two labels of one agent are refused, since
    their matches would be the same matches."""
    check_labels(specs)
    found: dict[str, str] = {}
    for spec in specs:
        fingerprint = identity.agent_fingerprint(spec)
        twin = next((label for label, fp in found.items() if fp == fingerprint), None)
        if twin is not None:
            raise ArenaError(f"agents {twin!r} and {spec.label!r} are one agent ({fingerprint}); give it one label "
                             f"(--self-play plays an agent against itself)")
        found[spec.label] = fingerprint
    return found


def _parse_all(agents: Sequence[str]) -> list[AgentSpec]:
    specs = [parse_agent_spec(a) for a in agents]
    check_labels(specs)
    return specs


def _seat(entry: str, specs: dict[str, AgentSpec]) -> AgentSpec:
    """The agent a pairing names: one of ``specs`` by label, else ``entry`` parsed as a spec of its own (its
    label is checked with the others'), unless it is an agent's spec without that agent's name."""
    if entry in specs:
        return specs[entry]
    spec = parse_agent_spec(entry)
    twin = next((s for s in specs.values() if not spec.name and _absolute(s) == _absolute(spec)), None)
    if twin is not None:
        raise AgentSpecError(f"pairing entry {entry!r} is the spec of agent {twin.label!r}; pair it by its label "
                             f"{twin.label!r}")
    return spec


def _absolute(spec: AgentSpec) -> str:
    """The bare spec with a ``cwm:`` (or ``cwm-selected:``) path made absolute, so workers with another working
    directory find it."""
    if spec.kind in ("cwm", "cwm-selected") and Path(spec.target).exists():
        return f"{spec.kind}:{Path(spec.target).resolve()}"
    return spec.bare


def resumable(path: Path, jobs: MatchJobs | None = None) -> dict[str, MatchResult]:
    """The finished matches in ``path`` (``load_results``), refusing a file from before content keys, and one
    where an agent of ``jobs`` was recorded under its former fingerprint.

    Raises:
      ArenaError: a row without fingerprints, or a row naming an agent of ``jobs`` by its former fingerprint
        (``former_fingerprint``: a bundle by the hash of its whole manifest, an LLM on a batch directory by
        the folder's path; both written by an older cwm; the folder stays readable for ``cwm replay``,
        ``cwm view`` and the reports), or a damaged line (``load_results``).
    """
    done = load_results(path)
    if any(not r.fingerprints for r in done.values()):
        raise ArenaError(f"{path}: its matches are keyed by agent label (written by an older cwm) and cannot be "
                         f"resumed; play into a new --out (cwm replay and cwm view still read this folder)")
    former = _former_fingerprints(jobs) if jobs is not None else {}
    label = next((former[fp] for r in done.values() for fp in r.fingerprints if fp in former), None)
    if label is not None:
        raise ArenaError(f"{path}: agent {label!r} is recorded under the fingerprint an older cwm gave it (a "
                         f"bundle's manifest hash, which changed with every export; an LLM on a batch directory by "
                         f"the folder's whole path) and cannot be resumed; play into a new --out (cwm run: move its "
                         f"arena/ aside); cwm replay and cwm view still read this folder")
    return done


def _former_fingerprints(jobs: MatchJobs) -> dict[str, str]:
    """Former fingerprint -> label of each agent of ``jobs`` that had another (``agents.fingerprint.former_fingerprint``)."""
    found: dict[str, str] = {}
    for seating in jobs.seatings:
        for label, build in zip(seating.labels, seating.builds):
            former = former_fingerprint(parse_agent_spec(build))
            if former is not None:
                found[former] = label
    return found


def load_results(path: Path) -> dict[str, MatchResult]:
    """The finished matches in a JSONL file.

    A last line that is not a match result is what a run killed while writing leaves: it is cut off the file
    with a warning naming the file and line, and its match is played again (a whole last line that only
    lacks its newline gets it). Any other line that is not a match result is an error, since dropping it
    would lose a finished match.

    Raises:
      ArenaError: a line that is not UTF-8, not JSON or not shaped as a match result (names the file and line).
    """
    try:
        results = read_appended(path, MatchResult.from_json, what="a match result", redo="its match is played again",
                                log=log)
    except LineError as e:
        raise ArenaError(f"{e}; fix or delete that line (its match is then played again)") from e
    return {r.key: r for r in results}


def read_results(path: Path) -> dict[str, MatchResult]:
    """The finished matches in a JSONL file, read without writing to it (``cwm replay``, ``cwm view``: a
    reader never changes what it reads; only the tournament that writes the file repairs it).

    A torn last line (a run killed, or still running, while writing it) is skipped with a one-line warning
    naming the file and line; the file is left as it is. No file reads as no matches.

    Raises:
      ArenaError: a line other than the last that is not UTF-8, not JSON or not shaped as a match result
        (names the file and line), or a file over ``RECORDS_BYTES`` or not a regular file (checked before
        it is read).
    """
    if not path.exists():
        return {}
    try:
        data = read_bounded(path, RECORDS_BYTES, what="record file")
        results, torn = parse_jsonl(path, data, MatchResult.from_json, what="a match result")
    except (LineError, InputLimitError) as e:
        raise ArenaError(str(e)) from e
    if torn is not None:
        log.warning("%s:%d: the last line is cut short (a run killed or still writing); skipped here, the file "
                    "is left as it is", path, torn)
    return {r.key: r for r in results}
