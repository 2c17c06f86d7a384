"""The cost of a tournament before it runs: a few timed moves of each agent, projected onto every match.

Each agent is built once (as a worker would build it) and timed on decision states spread over a random
game, after two warm-up moves: the first starts what an agent starts once per executor worker (a CWM
agent's sandbox), the second, after a ``reset``, what it starts once per match (its planning worker); what
each cost beyond a move is counted that often. Search
agents are timed at ``PROBE_SIMULATIONS`` simulations and scaled linearly to the real count (a search's
time is its simulations times the cost of one, the rollouts); a match's length is the mean number of
decisions of ``PROBE_GAMES`` random games, or the game's stated length of a match played to its end
(``GameSpec.match_moves``) where that is more: a game whose random games end far sooner than planned ones
states it (Hanabi: random play loses the three lives in about 12 moves, a team that keeps a life plays about
75). Planned play is otherwise often somewhat longer or shorter than random play: the projection is a size,
not a promise.

A move is timed in CPU seconds, of this process and every process under it (``cwm.sandbox.watch.tree_cpu``:
a CWM agent's planning worker runs in a sandbox child), so the estimate does not depend on how busy the
machine is. Agents are single-threaded, so the run's wall time is its CPU time over the executor's workers
(the process pool's size, or a Ray cluster's cores) on an otherwise idle machine; no cluster makes it shorter
than a match, and the estimate names the fewest cores on which the run fits in an hour, or says that none
does. LLM agents are not timed
(each move is a paid call whose latency is the provider's). An agent that cannot be built or whose probe
move fails has no cost to project: the estimate then names it and why, and gives no total.
"""

from __future__ import annotations

import contextlib
import dataclasses
import json
import math
import os
import sys
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np
import pyspiel

from cwm import games
from cwm.agents.grammar import AgentSpecError
from cwm.agents.specs import make_agent, parse_agent_spec
from cwm.arena.plan import TournamentPlan, plan_from, plan_jobs
from cwm.arena.types import MatchJob
from cwm.files import RECORDS_BYTES, loads_bounded, read_bounded
from cwm.sandbox.watch import TreeSampler, tree_cpu
from cwm.types import JSON, UsageError
from planners.gt_sampler import decision_states

PROBE_SIMULATIONS = 100  # simulations per timed move; the real count scales the time linearly
PROBE_MOVES = 3  # timed moves per agent (at least)
PROBE_CPU_S = 0.3  # the probe moves go on, cycling over the states, until they used this much CPU time...
PROBE_MOST = 30  # ...or made this many moves (a cheap agent is timed over more moves than clock ticks allow)
PROBE_GAMES = 5  # random games whose mean length stands for a match's
CONFIRM_WALL_S = 3600.0  # a run projected longer than this needs --yes
SEARCH_KINDS = ("gt-mcts", "gt-ismcts", "gt-mcts-py", "gt-ismcts-py", "cwm", "cwm-selected")
RAY_CORES = (16, 64)  # the cluster sizes a projection also shows (and one core a match, where that is more)
HOUR_S = 3600.0  # the wall time for which a projection names the cluster size that fits it


@dataclasses.dataclass(frozen=True)
class CostEstimate:
    """A tournament's projected cost on this machine.

    Attributes:
      per_move_s: agent label -> CPU seconds per move at the run's settings (``None``: not timed: an LLM
        agent, or one in ``untimed``).
      moves_per_match: the decisions of a match: the mean of random games, or the game's stated length
        (``GameSpec.match_moves``) where that is more.
      matches: matches still to play.
      cpu_s: projected CPU seconds of those matches (LLM agents count 0; with ``untimed`` agents, only a
        lower bound, which ``lines`` does not print as a total).
      workers: the executor's parallel workers (a Ray cluster: this machine's CPU count, as a stand-in).
      untimed: agent label -> why it could not be timed (it could not be built, or a probe move failed).
      start_s: agent label -> CPU seconds its start costs, once per match (a CWM agent's planning worker).
      once_s: agent label -> CPU seconds it costs once per executor worker it plays on (a CWM agent's sandbox).
      random_moves: the mean decisions of the random games, where the game's stated length replaced it
        (``None``: ``moves_per_match`` is that mean).
    """

    per_move_s: dict[str, float | None]
    moves_per_match: float
    matches: int
    cpu_s: float
    workers: int
    untimed: dict[str, str] = dataclasses.field(default_factory=dict)
    start_s: dict[str, float] = dataclasses.field(default_factory=dict)
    once_s: dict[str, float] = dataclasses.field(default_factory=dict)
    random_moves: float | None = None

    @property
    def wall_s(self) -> float:
        """Projected wall seconds on ``workers`` workers."""
        return self.wall_on(self.workers)

    def wall_on(self, cores: int) -> float:
        """Projected wall seconds on ``cores`` cores (a Ray cluster, or this machine's workers): a match runs on
        one core from start to end, so the busiest core plays ``ceil(matches / cores)`` whole matches of the
        mean CPU time each."""
        if self.matches <= 0:
            return self.cpu_s
        return math.ceil(self.matches / max(1, cores)) * self.cpu_s / self.matches

    def cores_for(self, wall_s: float = HOUR_S) -> int | None:
        """The fewest cores of a Ray cluster on which the run's projected wall time is at most ``wall_s``;
        ``None`` where none is enough: a match is one agent's thread at a time, so even one core a match takes
        a match's mean CPU time."""
        if self.matches <= 0:
            return 1 if self.cpu_s <= wall_s else None
        per_match = self.cpu_s / self.matches
        if per_match > wall_s:
            return None
        per_core = math.floor(wall_s / per_match) if per_match > 0 else self.matches  # whole matches a core plays
        cores = math.ceil(self.matches / max(1, min(per_core, self.matches)))
        # the float division may be a match off at an exact divisor: settle on what wall_on itself says
        while cores < self.matches and self.wall_on(cores) > wall_s:
            cores += 1
        while cores > 1 and self.wall_on(cores - 1) <= wall_s:
            cores -= 1
        return cores

    def _fits(self) -> str:
        """Where the run fits in an hour (``cores_for``), for ``lines``."""
        cores = self.cores_for()
        if cores is not None:
            return f"fits in an hour on {cores} core{'s' if cores > 1 else ''}"
        return f"no cluster fits it in an hour: a match takes {duration(self.cpu_s / self.matches)} of CPU"

    def lines(self) -> list[str]:
        """The estimate as a reader sees it: per-move times, then the projected CPU and wall time."""
        moves = ", ".join(f"{label} {'not timed' if t is None else duration(t)}"
                          for label, t in self.per_move_s.items())
        ray = ", ".join(f"{n} cores {duration(self.wall_on(n))}" for n in RAY_CORES)
        if self.matches > max(RAY_CORES):  # the most a cluster can give: every match on a core of its own
            ray += f", {self.matches} cores (one a match) {duration(self.wall_on(self.matches))}"
        head = f"cost estimate: per move {moves}; ~{self.moves_per_match:.0f} moves a match"
        if self.random_moves is not None:
            head += f" (the game's stated length; random games end after ~{self.random_moves:.0f})"
        if self.untimed:
            why = "; ".join(f"{label}: {reason}" for label, reason in self.untimed.items())
            return [head, f"  {self.matches} matches: no total, as an agent could not be timed ({why})"]
        return [head,
                f"  {self.matches} matches: CPU {duration(self.cpu_s)}, wall {duration(self.wall_s)} on "
                f"{self.workers} workers here (on a Ray cluster: {ray}; {self._fits()})"]

    def to_json(self) -> dict[str, JSON]:
        return dataclasses.asdict(self) | {"wall_s": self.wall_s}


def duration(seconds: float) -> str:
    """``0.42 s``, ``3.1 min``, ``5.2 h`` or ``3.4 days``."""
    for unit, size in (("days", 86400.0), ("h", 3600.0), ("min", 60.0)):
        if seconds >= 2 * size:
            return f"{seconds / size:.1f} {unit}"
    return f"{seconds:.2g} s" if seconds < 10 else f"{seconds:.0f} s"


def executor_workers(spec: str) -> int:
    """The parallel workers of an executor spec: ``local:N`` N, ``inline`` 1, else this machine's CPU count."""
    kind, _, arg = spec.partition(":")
    if kind == "inline":
        return 1
    if kind == "local" and arg.isdigit():
        return max(1, int(arg))
    return os.cpu_count() or 1


def estimate_tournament(game: str | games.GameSpec, agents: Sequence[str], plan: TournamentPlan | None = None, *,
                        executor: str = "local", out_dir: str | Path | None = None, **legacy: Any) -> CostEstimate:
    """The projected cost of ``cwm.arena.tournament(game, agents, plan, ...)``: its matches not yet recorded in
    ``out_dir/matches.jsonl``, on ``executor``'s workers (``legacy``: the former keyword arguments of the plan,
    deprecated).

    Raises:
      AgentSpecError: a spec that does not parse (as the tournament would).
    """
    plan = plan_from(plan, legacy, "estimate_tournament")
    workers = executor_workers(executor)
    limit = plan.move_time_limit
    if plan.matches < 1 or plan.settings.problems() or (limit is not None and not limit > 0):
        return CostEstimate({}, 0.0, 0, 0.0, workers)  # the tournament refuses these, with its own message
    spec = games.resolve(game)
    jobs = plan_jobs(spec.name, agents, plan)
    done = recorded_keys(Path(out_dir) / "matches.jsonl") if out_dir is not None else set()
    return estimate([j for j in jobs if j.key not in done], workers=workers, seed=plan.seed,
                    match_moves=spec.match_moves)


def recorded_keys(path: Path) -> set[str]:
    """The match keys already in a ``matches.jsonl`` (lines that do not read are the tournament's to report)."""
    if not path.is_file():
        return set()
    keys = set()
    for line in read_bounded(path, RECORDS_BYTES, what="record file").decode("utf-8", "replace").splitlines():
        with contextlib.suppress(ValueError, RecursionError):
            found = loads_bounded(line, where=str(path), allow_nan=True)
            if isinstance(found, dict) and isinstance(found.get("key"), str):
                keys.add(found["key"])
    return keys


def estimate(jobs: Sequence[MatchJob], *, workers: int, seed: int = 0, match_moves: int | None = None) -> CostEstimate:
    """Times each agent of ``jobs`` (all of one game) and projects the matches' cost (module docstring):
    ``match_moves`` (the game's ``GameSpec.match_moves``) moves a match where that is more than the random
    games' mean.

    Randomness: the probe games and the probed agents are seeded from ``seed``.
    """
    if not jobs:
        return CostEstimate({}, 0.0, 0, 0.0, workers)
    game = jobs[0].game
    states, random_length = probe_states(game, seed=seed)
    length = max(random_length, float(match_moves or 0))
    stated = length > random_length
    builds = dict(pair for job in jobs for pair in zip(job.seats, job.builds or job.seats))
    per_move: dict[str, float | None] = {}
    untimed: dict[str, str] = {}
    timings: dict[str, Timing] = {}
    for label, build in builds.items():
        try:
            timing = time_moves(build, game, jobs[0], states, seed=seed)
        except Untimed as e:
            per_move[label], untimed[label] = None, str(e)
        else:
            per_move[label] = None if timing is None else timing.per_move_s
            timings[label] = timing or Timing(0.0, 0.0, 0.0)
    cpu = sum(length / len(job.seats) * sum(per_move[s] or 0.0 for s in job.seats)
              + sum(timings[s].start_s for s in job.seats if s in timings) for job in jobs)
    for label, timing in timings.items():  # each executor worker that plays the agent starts it once
        cpu += timing.once_s * min(workers, sum(label in job.seats for job in jobs))
    return CostEstimate(per_move, length, len(jobs), cpu, workers, untimed,
                        {label: t.start_s for label, t in timings.items()},
                        {label: t.once_s for label, t in timings.items()}, random_length if stated else None)


@dataclasses.dataclass(frozen=True)
class Timing:
    """An agent's probe: CPU seconds per move, per match (its start), and per executor worker (once)."""

    per_move_s: float
    start_s: float
    once_s: float


class Untimed(Exception):
    """An agent's probe moves could not be timed; the message says why (one line)."""


def probe_states(game: str, *, seed: int = 0) -> tuple[list[pyspiel.State], float]:
    """``PROBE_MOVES + 1`` decision states spread over one random game, and the mean decisions of
    ``PROBE_GAMES`` random games."""
    loaded = games.load_game(game)
    plays = [decision_states(loaded, np.random.default_rng([seed, i])) for i in range(PROBE_GAMES)]
    first = plays[0]
    picks = [int(i) for i in np.linspace(0, len(first) - 1, PROBE_MOVES + 1)] if first else []
    return [first[i] for i in picks], float(np.mean([len(p) for p in plays]))


def time_moves(build: str, game: str, job: MatchJob, states: Sequence[pyspiel.State], *,
               seed: int = 0) -> Timing | None:
    """The CPU cost of the agent ``build`` names at ``job``'s settings (``None`` for an LLM agent), in CPU
    time of this process and its descendants (``tree_cpu``): per move, timed on the rest of ``states`` and
    scaled from ``PROBE_SIMULATIONS`` to the real count; per match and once, what the two warm-up moves
    cost beyond a move at the probe's size (module docstring).

    Raises:
      Untimed: the agent could not be built, or a probe move failed (the match itself will report it).
      AgentSpecError: the spec cannot be built for the game (``gt-ismcts`` whose resampler self-test fails):
        the run is refused before any match, with the reason.
    """

    kind = parse_agent_spec(build).kind
    if kind.startswith("llm") or not states:
        return None
    settings, scale = job.settings, 1.0
    sims = settings.search.num_simulations
    if kind in SEARCH_KINDS and sims > PROBE_SIMULATIONS:
        search = dataclasses.replace(settings.search, num_simulations=PROBE_SIMULATIONS)
        settings, scale = dataclasses.replace(settings, search=search), sims / PROBE_SIMULATIONS
    try:
        agent = make_agent(build, game, settings=settings, seed=seed, move_time_s=job.move_time_limit)
    except AgentSpecError:  # cannot do what its name says (gt-ismcts with no resampler): refused, with the fix
        raise
    except Exception as e:  # an agent that cannot be built is the tournament's to report, with its reason
        raise Untimed(f"it could not be built ({_first_line(e)})") from None
    try:
        first, again, probe_move = _probe(agent, states)
    except Exception as e:  # LLM-written model code may fail; the match will score it
        raise Untimed(f"a probe move failed ({_first_line(e)})") from None
    finally:
        agent.close()
    return Timing(probe_move * scale, max(0.0, again - probe_move), max(0.0, first - again))


def _probe(agent: Any, states: Sequence[pyspiel.State]) -> tuple[float, float, float]:
    """CPU seconds of the agent's first move, of its first move after a ``reset`` (a new match), and per
    move after that (at least ``PROBE_MOVES``, more until ``PROBE_CPU_S`` is used, at most ``PROBE_MOST``)."""
    costs = []
    for _ in range(2):
        meter = _Meter()
        agent.step(states[0].clone())
        costs.append(meter.used())
        agent.reset()
    agent.step(states[0].clone())  # the match has started: what follows is moves only
    timed, meter = states[1:] or states, _Meter()
    while meter.moves < PROBE_MOVES or (meter.used() < PROBE_CPU_S and meter.moves < PROBE_MOST):
        agent.step(timed[meter.moves % len(timed)].clone())
        meter.moves += 1
    return costs[0], costs[1], meter.used() / meter.moves


class _Meter:
    """CPU seconds of this process and its descendants since it was made, less what reading them cost."""

    def __init__(self) -> None:
        self.moves, self.reading = 0, 0.0
        self.start = tree_cpu(reaped=False)

    def used(self) -> float:
        before = time.process_time()
        now = tree_cpu(reaped=False)
        spent = self.reading
        self.reading += time.process_time() - before
        return now - self.start - spent


def _first_line(e: BaseException) -> str:
    text = str(e).strip().splitlines()
    return f"{type(e).__name__}: {text[0][:200]}" if text else type(e).__name__


def confirm(cost: CostEstimate, *, yes: bool, threshold_s: float = CONFIRM_WALL_S) -> None:
    """Prints the estimate (nothing when no match is left to play); refuses a run projected over
    ``threshold_s`` of wall time without ``yes`` (``confirm_lines``).

    Raises:
      UsageError: over the threshold and not ``yes``; the message says how to go on.
    """
    if cost.matches:
        confirm_lines(cost.lines(), cost.wall_s, yes=yes, threshold_s=threshold_s, smaller="lower --matches or --sims")


def confirm_lines(lines: Sequence[str], wall_s: float, *, yes: bool, threshold_s: float = CONFIRM_WALL_S,
                  smaller: str) -> None:
    """Prints an estimate's ``lines`` to stderr; refuses a run projected over ``threshold_s`` of wall time
    without ``yes``, from a terminal or not (a script that starts a week-long run by mistake is stopped too).

    Args:
      smaller: how to make the run smaller, for the message (``"lower --steps"``).

    Raises:
      UsageError: over the threshold and not ``yes``; the message says how to go on.
    """
    for line in lines:
        print(line, file=sys.stderr)
    if wall_s > threshold_s and not yes:
        raise UsageError(f"this run is projected to take {duration(wall_s)} of wall time (over "
                         f"{duration(threshold_s)}); rerun with --yes to start it, or {smaller}")


def write_record(path: Path, cost: CostEstimate, elapsed_s: float, cpu_s: float | None = None) -> None:
    """Writes ``{"estimate": ..., "elapsed_wall_s": ..., "elapsed_cpu_s": ...}`` to ``path`` (a run's
    ``cost.json``)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(record(cost, elapsed_s, cpu_s), indent=2) + "\n", encoding="utf-8")


def record(cost: CostEstimate, elapsed_s: float, cpu_s: float | None = None) -> dict[str, JSON]:
    """The estimate beside the real wall time and, when measured (``cpu_meter``), the real CPU time, as a run
    record holds them."""
    out: dict[str, JSON] = {"estimate": cost.to_json(), "elapsed_wall_s": elapsed_s}
    if cpu_s is not None:
        out["elapsed_cpu_s"] = cpu_s
    return out


def cpu_meter() -> TreeSampler:
    """Measures the CPU time a run uses, which the estimate's ``cpu_s`` projects: this process and every
    process under it (pool workers, their sandboxes and planning workers, which end unreaped inside their
    namespaces), sampled every 0.1 s (``cwm.sandbox.watch.TreeSampler``)."""
    return TreeSampler()
