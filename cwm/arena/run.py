"""Matches and tournaments between agents on a ground-truth game, resumable, on any executor.

``play_match`` plays one game between live agent objects. ``tournament`` plays every pairing of agent
specs in both seat orders, ``matches`` games each, seeded per match; each finished match is appended to
``OUT/matches.jsonl`` as it ends, keyed by its content (``cwm.arena.identity``: the game, the settings,
each agent's fingerprint, the index), so re-running the same call skips what is done, also after the
folder moved or an agent was renamed; labels are for display (``OUT/labels.json``). An illegal action, an exception or a move
over the time limit forfeits the match (counted separately by kind). Each match's full record goes to
``OUT/transcripts/`` before its row (``cwm.arena.transcript``). Results are summarised by
``cwm.arena.report`` (JSON, CSV, markdown, a bar plot) and ``cwm.arena.ratings`` (the leaderboard).
"""

from __future__ import annotations

import contextlib
import dataclasses
import json
import re
import shutil
import time
from collections.abc import Iterator, Mapping, Sequence
from pathlib import Path
from typing import Any

import numpy as np
import pyspiel

from cwm import games
from cwm.agents.base import Agent, AgentError, as_agent
from cwm.agents.specs import Settings, check_agent, make_agent, parse_agent_spec
from cwm.arena import identity
from cwm.arena import report as arena_report
from cwm.arena import transcript as arena_transcript
from cwm.arena.clock import agent_move
from cwm.arena.lock import refuse_if_locked, writer_lock
from cwm.arena.plan import (  # noqa: F401  (DEFAULT_MOVE_TIME_S and TournamentPlan re-exported)
    DEFAULT_MOVE_TIME_S,
    ArenaError,
    MatchJobs,
    TournamentPlan,
    plan_from,
    plan_jobs,
    resumable,
)
from cwm.arena.types import MatchJob, MatchOutcome, MatchResult
from cwm.bundle.files import BundleError, read_manifest, verified_files
from cwm.executors import Executor, JobCrashed, make_executor, worker_place
from cwm.files import InputLimitError, atomic_write, changed_settings
from cwm.llm import PendingBatch
from cwm.llm.batch import PENDING_FILE, pending_requests
from cwm.text import counted
from cwm.types import CHANCE, JSON

# The default move limit of tournaments, `cwm arena` and `cwm run`: CPU seconds per move (with a wall-clock
# backstop of at least three limits and 30 s, growing with the machine's load), long enough for the paper's 1,000 simulations on the games here.

__all__ = ["DEFAULT_MOVE_TIME_S", "play_match", "run_match", "tournament"]


# ---------------------------------------------------------------------------------------------------
# One match


def play_match(game: pyspiel.Game, agents: Sequence[Agent], *, seed: int,
               move_time_limit: float | None = None, actions: list[int] | None = None,
               times: list[float] | None = None) -> MatchOutcome:
    """Plays one game; agent ``i`` takes seat ``i``.

    Args:
      game: the ground-truth game.
      agents: one agent per seat; ``reset()`` is called first and ``inform(action)`` after every move. An
        agent whose ``reset``, ``inform`` or ``step`` raises forfeits, like one that plays an illegal move,
        and so does one whose record of the match (its ``log``) passes the transcript cap
        (``cwm.arena.transcript.RecordCapError``).
      seed: seeds chance sampling.
      move_time_limit: CPU seconds per move; a move over it forfeits as ``timeout``, and so does one
        still running past the wall-clock backstop (``cwm.arena.clock``: at least three limits and 30 s,
        more while the move gets little CPU), so machine load slows a move without forfeiting it
        (``None``: no limit).
      actions: a list that every action applied (chance outcomes included) is appended to, in order.
      times: a list that the wall-clock seconds each applied action took to choose are appended to, in
        step with ``actions`` (0.0 for a chance outcome).

    Returns:
      the outcome; on a forfeit the returns are the game's minimum utility for the forfeiting seat and its
      maximum for the others. An LLM agent's ``PendingBatch`` (a batch reply not written yet) is raised.
    """
    agents = [as_agent(a) for a in agents]  # a user's own agent may have only step()
    rng = np.random.default_rng(seed)
    state = game.new_initial_state()
    for seat, agent in enumerate(agents):
        try:
            agent.reset()
        except Exception as e:  # the arena is a boundary: any agent failure is scored as a forfeit
            return _forfeit_outcome(game, seat, e, 0)
    moves, meter = 0, arena_transcript.RecordMeter(len(agents))
    while not state.is_terminal():
        player = state.current_player()
        started = time.perf_counter()
        if player == CHANCE:
            outcomes = state.chance_outcomes()
            action = int(outcomes[rng.choice(len(outcomes), p=[p for _, p in outcomes])][0])
        else:
            try:
                action = agent_move(agents[player], state, move_time_limit)
                meter.check(player, agents[player])  # a record past the transcript cap forfeits here
            except Exception as e:
                return _forfeit_outcome(game, player, e, moves)
        state.apply_action(action)
        moves += 1
        if actions is not None:
            actions.append(int(action))
        if times is not None:
            times.append(0.0 if player == CHANCE else time.perf_counter() - started)
        for seat, agent in enumerate(agents):
            try:
                agent.inform(action)
            except Exception as e:
                return _forfeit_outcome(game, seat, e, moves)
    return MatchOutcome(list(state.returns()), None, "", "", moves)


def _forfeit_outcome(game: pyspiel.Game, seat: int, error: Exception, moves: int) -> MatchOutcome:
    """The outcome when ``seat``'s agent failed with ``error`` (its kind if an AgentError, else exception);
    a ``PendingBatch`` is raised again: a reply not written yet is no outcome, the match waits."""
    if isinstance(error, PendingBatch):
        raise error
    kind = error.kind if isinstance(error, AgentError) else "exception"
    return MatchOutcome(_forfeit(game, seat), seat, kind, f"{type(error).__name__}: {error}", moves)


def _safe(key: str) -> str:
    """A file name for a match key (an LLM agent's call log and ledger go in a folder per match)."""
    return re.sub(r"[^A-Za-z0-9_.#+-]+", "_", key)


def _forfeit(game: pyspiel.Game, seat: int) -> list[float]:
    """The returns of a match ``seat`` forfeited: the worst for that seat and the best for the others; in a
    cooperative game (every player gets the same return) the worst for every seat, since the others are its
    team."""
    if game.get_type().utility == pyspiel.GameType.Utility.IDENTICAL:
        return [game.min_utility()] * game.num_players()
    return [game.min_utility() if p == seat else game.max_utility() for p in range(game.num_players())]


# ---------------------------------------------------------------------------------------------------
# A job that runs in any worker process


def run_match(job: MatchJob, *, given: Mapping[int, Agent] | None = None) -> dict[str, JSON]:
    """Builds the agents from their specs (seeded from the match seed) and plays; a JSON-able MatchResult,
    with its transcript under ``"transcript"`` (``cwm.arena.transcript.save`` files it apart from the row).

    ``given`` seats live agents instead of building those seats' specs (a person at the terminal,
    ``cwm play``).

    A ``cwm:`` (or ``cwm-selected:``) agent whose model does not load forfeits at move 0 (an LLM-written model
    may be broken); any other spec was checked by ``tournament`` before planning, so a failure to build it is
    raised.
    Every agent is closed at the end (a CWM agent's planning worker ends with its match).
    """
    start = time.perf_counter()
    seeds = np.random.SeedSequence(job.seed).spawn(len(job.seats) + 1)
    agents: list[Agent] = []
    waiting: dict[str, JSON] | None = None
    try:
        for seat, label in enumerate(job.builds or job.seats):
            if given and seat in given:
                agents.append(as_agent(given[seat]))
                continue
            try:
                agents.append(make_agent(parse_agent_spec(label), job.game, settings=job.settings,
                                         seed=np.random.default_rng(seeds[seat]), move_time_s=job.move_time_limit,
                                         log_dir=Path(job.log_dir) / _safe(job.key) if job.log_dir else None))
            except Exception as e:  # a model that does not load loses by forfeit; anything else is not its fault
                if parse_agent_spec(label).kind not in ("cwm", "cwm-selected"):
                    raise
                game = games.load_game(job.game)
                kind = e.kind if isinstance(e, AgentError) else "exception"
                return _with_transcript(game, job, MatchResult(
                    job.key, job.seats, job.seed, tuple(_forfeit(game, seat)), seat, kind,
                    f"agent could not be built: {type(e).__name__}: {e}", 0, time.perf_counter() - start,
                    fingerprints=job.fingerprints, index=job.index, deal=job.deal).to_json())
        game = games.load_game(job.game)
        chance_seed = job.deal if job.deal is not None else int(np.random.default_rng(seeds[-1]).integers(2**63))
        played: list[int] = []
        times: list[float] = []
        try:
            returns, loser, kind, reason, moves = play_match(game, agents, seed=chance_seed,
                                                             move_time_limit=job.move_time_limit, actions=played,
                                                             times=times)
        except PendingBatch as e:  # played again from its start once the reply is there (same seeds, same moves)
            waiting = {"pending": job.key, "directory": str(e.directory)}
    finally:
        for agent in agents:
            with contextlib.suppress(Exception):  # closing is tidying up; the result stands
                agent.close()
    if waiting is not None:
        if job.log_dir:  # the next pass logs the match afresh: its replayed calls are not counted twice
            shutil.rmtree(Path(job.log_dir) / _safe(job.key), ignore_errors=True)
        return waiting
    logs = tuple(list(a.log) for a in agents)
    stats = tuple(_stats(a) for a in agents)
    record = MatchResult(job.key, job.seats, job.seed, tuple(float(r) for r in returns), loser, kind, reason,
                         moves, time.perf_counter() - start, logs if any(logs) else (),
                         stats if any(stats) else (), tuple(played), job.fingerprints, job.index,
                         job.deal).to_json()
    return _with_transcript(game, job, record, times, [{"log": log, "stats": s} for log, s in zip(logs, stats)])


def _with_transcript(game: pyspiel.Game, job: MatchJob, record: dict[str, JSON], times: Sequence[float] = (),
                     agents: Sequence[dict[str, Any]] = ()) -> dict[str, JSON]:
    """``record`` with its transcript (``cwm.arena.transcript``), which ``tournament`` saves apart from the row."""
    return record | {"transcript": arena_transcript.build(game, record, game_name=job.game,
                                                          specs=job.builds or job.seats, times=times,
                                                          agents=agents, worker=dict(worker_place()))}


def _stats(agent: Agent) -> dict[str, JSON]:
    """An agent's own record of the match (``stats()``: draws rejected, fallback moves), when it keeps one."""
    try:
        found = agent.stats()
    except Exception:  # a record is a courtesy; a failing one is left out
        return {}
    if not isinstance(found, dict):
        return {}
    kept = [(k, v) for k, v in found.items() if type(k) is str and len(k) <= _STAT_KEY_CHARS
            and type(v) in (int, float, str, bool)]
    return {k: v[:_STAT_TEXT_CHARS] if type(v) is str else v for k, v in kept[:_STAT_ENTRIES]}


_STAT_ENTRIES, _STAT_KEY_CHARS, _STAT_TEXT_CHARS = 64, 100, 1_000  # an agent's stats: a few short entries


# ---------------------------------------------------------------------------------------------------
# Tournaments


def tournament(game: str | games.GameSpec, agents: Sequence[str], plan: TournamentPlan | None = None, *,
               out_dir: str | Path, executor: str | Executor = "local", progress: bool = True,
               checked: CheckedAgents | None = None, **legacy: Any) -> list[MatchResult]:
    """Plays (or resumes) a tournament and writes its results under ``out_dir``.

    Args:
      game: the real game (registry name, OpenSpiel string or module spec).
      agents: agent spec strings (``cwm.agents.specs``); each is shown under its label (``NAME`` of
        ``NAME=SPEC``, else the spec as typed). Finished matches are found on resume by content
        (``cwm.arena.identity``), so a renamed agent or a moved bundle replays nothing, and an agent that
        changed (a bundle's files, another spec) plays its matches anew.
      plan: the matches per pairing and seat order, every agent's settings, the seed, the pairings and the
        CPU seconds per move (``TournamentPlan``), with the wall-clock backstop of ``play_match``.
      out_dir: where ``config.json``, ``labels.json`` (each agent fingerprint's label), ``matches.jsonl``,
        ``transcripts/`` and the summaries go.
      executor: ``local`` (process pool, default), ``local:N``, ``inline``, ``ray[:ADDRESS]`` or an executor.
      progress: show a tqdm progress bar.
      checked: what ``check_agents`` built just before for this game with these settings (a command that
        checks the agents before its cost estimate): not built again (a bundle's files verified); others are.
      legacy: the former keyword arguments (``matches=``, ``settings=``, ``seed=``, ``pairings=``,
        ``move_time_limit=``), deprecated.

    Returns:
      every match of this tournament, finished earlier or now.

    Raises:
      ArenaError: bad numbers (``matches`` < 1, a time limit <= 0, fewer than one simulation or rollout), an
        agent that cannot be built (an unknown or misfitting spec, an LLM client without its key, a missing
        model file, a ``checked`` bundle changed since), fewer than two agents, two labels of one agent, an
        ``out_dir`` holding a tournament with another game, seed or settings, or one written before matches
        were keyed by content (``cwm.arena.plan.resumable``), or more than ``cwm.arena.plan.MAX_MATCHES``
        matches. Nothing is written then.
      DirectoryInUse: another process is writing ``out_dir`` (``cwm.arena.lock``: the writer holds a lock on
        ``out_dir/.cwm-lock`` while it plays, released when it ends however it ends).
      AgentSpecError: a spec that does not parse, two seated specs with one label, or a pairing entry that
        is an agent's spec under another label.
      ExecutorError: an unknown executor spec, Ray missing, or a Ray address that is malformed or where
        nothing listens (raised after the checks above; nothing is written then either).
      PendingBatch: an LLM agent on a batch directory asked requests without replies: the other matches
        were saved; the waiting ones are replayed from their start by the same call once replies are written.
    """
    plan = plan_from(plan, legacy, "tournament")
    out, name = Path(out_dir), games.resolve(game).name
    _check_numbers(plan.matches, plan.settings, plan.move_time_limit)
    jobs = _planned(name, agents, plan, str(out / "llm"))
    builds = _check_unchecked(name, jobs, plan, checked)
    config = {"game": name} | plan.recorded()
    _check_config(out / "config.json", config)  # the checks, before an executor (a Ray cluster) starts
    refuse_if_locked(out)
    resumable(out / "matches.jsonl", jobs)  # a file that cannot be resumed is refused before anything is written
    ex = make_executor(executor) if isinstance(executor, str) else executor  # an unreachable cluster: nothing written
    try:
        done = _play(ex, jobs, out, config, progress)
    finally:
        if isinstance(executor, str):
            ex.close()
    results = [done[j.key].shown_as(j.seats) for j in jobs]
    labels = list(dict.fromkeys([*(parse_agent_spec(a).label for a in agents), *builds]))
    arena_report.write_reports(out, results, config=config | {"agents": labels, "matches": plan.matches}, specs=builds)
    return results


def _planned(name: str, agents: Sequence[str], plan: TournamentPlan, log_dir: str) -> MatchJobs:
    """``plan_jobs``; where the game's tables cannot be seated (too few agents for its players), an agent that
    cannot play the game is said first, as ``cwm arena`` (which checks the agents before planning) does."""
    try:
        return plan_jobs(name, agents, plan, log_dir=log_dir)
    except ArenaError:
        check_agents(name, {parse_agent_spec(a).label: a for a in agents}, plan.settings)
        raise


def _check_unchecked(name: str, jobs: MatchJobs, plan: TournamentPlan, checked: CheckedAgents | None
                     ) -> dict[str, Any]:
    """Builds once every seated agent that ``checked`` did not build for this game and settings (raising as
    ``check_agents`` does); every seated agent's label and build."""
    builds = dict(pair for seating in jobs.seatings for pair in zip(seating.labels, seating.builds))
    built = checked.builds if checked and (checked.game, checked.settings) == (name, plan.settings) else frozenset()
    seals = dict(checked.seals) if checked else {}
    for label, spec in builds.items():
        if (label, spec) in built:
            _still_as_checked(label, spec, seals.get(spec))
    check_agents(name, {label: spec for label, spec in builds.items() if (label, spec) not in built}, plan.settings)
    return builds


def _bundle_of(spec: str) -> Path | None:
    """The bundle directory a ``cwm:`` spec plays, else ``None``."""
    parsed = parse_agent_spec(spec)
    return Path(parsed.target) if parsed.kind == "cwm" and Path(parsed.target).is_dir() else None


def _seal(spec: str) -> str | None:
    """What a checked bundle agent is (its files' hashes, ``agent_fingerprint``), to verify at the tournament."""
    return identity.agent_fingerprint(parse_agent_spec(spec)) if _bundle_of(spec) is not None else None


def _still_as_checked(label: str, spec: str, seal: str | None) -> None:
    """Raises ``ArenaError`` (one line naming the bundle) when a bundle agent ``check_agents`` checked has changed
    on disk since: a file edited, added or removed (its files no longer match their hashes) or the bundle
    exported anew (other hashes). It would otherwise only forfeit, or play as another agent than was checked."""
    path = _bundle_of(spec)
    if seal is None and path is None:
        return
    why = "it is gone" if path is None else None
    if path is not None:
        try:
            verified_files(path, read_manifest(path))
            why = None if _seal(spec) == seal else "its files are not those checked (exported anew?)"
        except (BundleError, InputLimitError) as e:
            why = (str(e).strip().splitlines() or [type(e).__name__])[0]
    if why:
        raise ArenaError(f"agent {label}: the bundle {path or parse_agent_spec(spec).target} changed on disk after "
                         f"it was checked ({why}); run the command again to check it anew")


def _play(ex: Executor, jobs: MatchJobs, out: Path, config: dict[str, JSON], progress: bool) -> dict[str, MatchResult]:
    """Plays the jobs not yet in ``out/matches.jsonl`` holding ``out``'s writer lock; every finished match."""
    with writer_lock(out):  # one writer: a second process on this folder would play the same matches
        done = resumable(out / "matches.jsonl", jobs)  # again: what another writer added before the lock counts
        if not (out / "config.json").exists():
            atomic_write(out / "config.json", json.dumps(config, indent=2) + "\n")
        identity.save_labels(out, {fp: label for s in jobs.seatings for fp, label in zip(s.fingerprints, s.labels)})
        todo = (j for j in jobs if j.key not in done)  # made as the executor asks: none held up front
        waiting = _run(ex, todo, out / "matches.jsonl", done, (len(jobs), jobs.count_done(done)), progress)
    if waiting:
        folders = [Path(d) for d in sorted(waiting)]
        requests = {d: len(pending_requests(d)) for d in folders}
        matches = sum(waiting.values())
        where = "; ".join(f"{counted(n, 'request')} in {d / PENDING_FILE}" for d, n in requests.items())
        raise PendingBatch(f"{matches} match{'es' if matches != 1 else ''} wait for LLM replies ({where}); answer "
                           f"them and run the same command again: finished matches are kept, waiting ones are "
                           f"replayed from their start", directory=folders[0], pending=sum(requests.values()))
    return done


def _run(ex: Executor, todo: Iterator[MatchJob], path: Path, done: dict[str, MatchResult], counts: tuple[int, int],
         progress: bool) -> dict[str, int]:
    """Plays ``todo`` on ``ex``, appending each match to ``path`` as it ends; ``counts``: (all, already done).
    Returns the matches left waiting for an LLM agent's batch reply, counted by batch directory (not saved)."""
    from tqdm import tqdm

    waiting: dict[str, int] = {}
    bar = tqdm(total=counts[0], initial=counts[1], disable=not progress, desc="matches", unit="match")
    with bar, path.open("a", encoding="utf-8") as f:  # the bar ends its line also on an interrupt
        for record in ex.imap_unordered(run_match, todo):
            if isinstance(record, JobCrashed):  # saved like any match, so a resume does not crash again
                record = _void(record.item, str(record))
            if "pending" in record:
                waiting[str(record["directory"])] = waiting.get(str(record["directory"]), 0) + 1
                bar.set_postfix(waiting=sum(waiting.values()))
                continue
            record = arena_transcript.save(path.parent, record)  # before its row: a skipped match has one
            f.write(json.dumps(record) + "\n")
            f.flush()
            result = MatchResult.from_json(record)
            done[result.key] = result
            bar.update(1)
    return waiting


def _void(job: MatchJob, why: str) -> dict[str, JSON]:
    """The record of a match whose (trusted) process died under it: no seat is blamed, the reports count
    it as void, and it is never replayed."""
    n = len(job.seats)
    return MatchResult(job.key, job.seats, job.seed, (0.0,) * n, None, "crash", why, 0, 0.0,
                       fingerprints=job.fingerprints, index=job.index, deal=job.deal).to_json()


def _check_numbers(matches: int, settings: Settings, move_time_limit: float | None) -> None:
    problems = ([f"matches must be >= 1 (got {matches})"] if matches < 1 else []) + settings.problems()
    if move_time_limit is not None and not move_time_limit > 0:
        problems.append(f"the move time limit must be > 0 seconds (got {move_time_limit})")
    if problems:
        raise ArenaError("; ".join(problems))


@dataclasses.dataclass(frozen=True)
class CheckedAgents:
    """The agents ``check_agents`` built for ``game`` with ``settings`` (pairs of label and spec): a
    ``tournament`` handed them right after does not build them again (a ``gt-ismcts`` agent's self-test of
    its resampler, say), but verifies that each bundle agent's files are still those checked (``seals``)."""

    game: str
    builds: frozenset[tuple[str, str]]
    settings: Settings
    seals: frozenset[tuple[str, str]] = frozenset()  # (spec, fingerprint) of each bundle agent, as checked


def check_agents(game: str, builds: Mapping[str, str], settings: Settings) -> CheckedAgents:
    """Builds each agent's spec (label -> spec) once here, so that a configuration error stops the run
    instead of being recorded as a forfeit in every match (and never replayed once fixed); the commands call
    it before a cost estimate or a synthesis, so that a wrong spec or ``cwm:`` path is the first thing said.

    Returns:
      What was checked, for ``tournament(checked=...)``.

    Raises:
      ArenaError: one line naming the agent and why it cannot play ``game``.
    """
    seals = {}
    for label, spec in builds.items():
        try:
            check_agent(spec, game, settings=settings)
            seals[spec] = _seal(spec)
        except ValueError as e:  # AgentSpecError, LLMConfigError and settings an agent refuses
            raise ArenaError(f"agent {label} cannot play {game}: {e}") from e
    return CheckedAgents(game, frozenset(builds.items()), settings,
                         frozenset((spec, seal) for spec, seal in seals.items() if seal is not None))


def _check_config(path: Path, config: dict[str, JSON]) -> None:
    changed = changed_settings(path, config)
    if changed:
        raise ArenaError(f"{path.parent} holds a tournament with other settings ({', '.join(changed)} differ); "
                         f"resume it with the same game, seed and settings, or use another --out")
