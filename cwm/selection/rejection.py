"""Sample rejection (the paper's appendix E): several syntheses of one game give agents of unequal quality, and
the real game is not played to tell them apart; the synthesized models themselves host the games.

``select_models`` picks ``hosts`` of the bundles (seeded) as stand-in games. In each host every ordered
pairing of the candidate agents (self-play included: 5 x 5 = 25 for five bundles) plays ``games_per_pairing``
games, game ``i`` of the two seat orders of two agents on one deal (``cwm.arena.plan.deal_seed``, as the
arena pairs its matches); each agent plans on its own bundle (MCTS for perfect information, ISMCTS through its inference for
imperfect information) in a hardened worker, and the host runs in a hardened session of its own
(``cwm.selection.play``). A failure of the host or an illegal move (by the host's legal actions) makes both
players lose. Agents whose mean utility is more than ``margin`` of the game's utility range below the best
are rejected (``cwm.selection.report``, which also compares every two agents over their seat-swapped
pairs with ``cwm.stats.paired``); the arena plays the survivors through ``cwm-selected:OUT``.

Files under ``out``: ``config.json`` (what a resume must match), ``games.jsonl`` (one ``GameRecord`` per
finished game, appended as it ends: a rerun replays none), ``selection.json`` and ``selection.md``.
"""

from __future__ import annotations

import dataclasses
import json
import logging
import math
import re
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np

from cwm import games
from cwm.agents.cwm import game_facts
from cwm.agents.specs import AgentSpec, Settings
from cwm.arena import DEFAULT_MOVE_TIME_S
from cwm.arena.identity import agent_fingerprint, settings_hash
from cwm.arena.plan import deal_seed, match_seed
from cwm.bundle import load_bundle
from cwm.bundle.files import read_manifest
from cwm.executors import Executor, JobCrashed, make_executor
from cwm.files import LineError, atomic_write, changed_settings, read_appended
from cwm.sandbox.host import DEFAULT_HOST_CPU_S
from cwm.selection.play import GameJob, GameRecord, play_game
from cwm.selection.report import (
    Candidate,
    Selection,
    SelectionError,
    pair_comparisons,
    score,
    write_selection,
)
from cwm.types import from_former_keywords

__all__ = ["DEFAULT_GAMES", "Selection", "SelectionError", "SelectionSettings", "select_models"]

log = logging.getLogger("cwm.selection")

DEFAULT_GAMES = 50  # games per host and ordered pairing (paper: 50)
GAMES_FILE = "games.jsonl"


@dataclasses.dataclass(frozen=True)
class SelectionSettings:
    """How a selection is played.

    Attributes:
      hosts: how many bundles host games (paper: 2), chosen with ``seed``.
      games_per_pairing: games per host and ordered pairing (paper: 50); raising it on a resume adds games.
      agents: the agents' settings (their ``search``); every bundle is contained whatever ``trust_models`` says.
      seed: picks the hosts and seeds every game (a hash of it and the game's key).
      margin: reject an agent whose mean is more than this fraction of the utility range below the best.
      executor: ``local`` (process pool), ``local:N``, ``inline``, ``ray[:ADDRESS]`` or an executor.
      move_time_limit: CPU seconds per move of an agent's worker; host_cpu_s: per request of the host.
      progress: print the size of the job and show a tqdm progress bar (on stderr).
    """

    hosts: int = 2
    games_per_pairing: int = DEFAULT_GAMES
    agents: Settings = Settings()
    seed: int = 0
    margin: float = 0.1
    executor: str | Executor = "local"
    move_time_limit: float = DEFAULT_MOVE_TIME_S
    host_cpu_s: float = DEFAULT_HOST_CPU_S
    progress: bool = True

    def check(self, bundles: int) -> SelectionSettings:
        """The settings themselves, when usable for ``bundles`` bundles.

        Raises:
          SelectionError: every problem, in one line.
        """
        _check_numbers(bundles, self)
        return self


def select_models(game: str | games.GameSpec, bundles: Sequence[str | Path], out: str | Path,
                  settings: SelectionSettings | None = None, **legacy: Any) -> Selection:
    """Plays (or resumes) a selection among ``bundles`` and writes it under ``out``.

    Args:
      game: the game the bundles model (registry name, OpenSpiel string or module spec); its engine gives only
        facts (players, action strings, utility range, longest play) and is never played.
      bundles: bundle folders (``cwm export``), at least two; each is verified (``cwm.bundle.load_bundle``,
        contained) before anything is played.
      out: the selection folder.
      settings: hosts, games per pairing, the agents' settings, seed, margin, executor, limits, progress
        (``SelectionSettings``; default its defaults).
      legacy: the former keyword arguments (``hosts=``, ``settings=`` for the agents' ``Settings``, ...),
        deprecated.

    Returns:
      the ``Selection``: scores, survivors (``.survivors``, ``.survivor_paths``) and the arena spec
      ``.spec`` (``cwm-selected:OUT``).

    Raises:
      SelectionError: bad numbers, fewer than two bundles or one given twice, a bundle without inference for
        a game with hidden information, or an ``out`` holding a selection with other settings or bundles.
      BundleError: a bundle that fails its verification.
    """
    spec, out = games.resolve(game), Path(out)
    s = from_former_keywords(SelectionSettings, settings, legacy, who="select_models", error=SelectionError,
                             rename={"settings": "agents"}) or SelectionSettings()
    s.check(len(bundles))
    candidates = _candidates(spec, bundles)
    chosen = pick_hosts(candidates, s.hosts, s.seed)
    utility, source = games.utility_range(spec)
    config = {"game": spec.name, "seed": s.seed, "hosts": [c.label for c in chosen],
              "agents": {c.label: c.fingerprint for c in candidates}, "settings": dataclasses.asdict(s.agents),
              "move_time_limit": s.move_time_limit, "host_cpu_s": s.host_cpu_s}
    _check_resume(out, config)
    planned = [(f"{h.label}|{a.label}|{b.label}#{i}", h, a, b, i) for h in chosen for a in candidates
               for b in candidates for i in range(s.games_per_pairing)]
    done = load_records(out / GAMES_FILE)
    todo = [p for p in planned if p[0] not in done]
    if s.progress:
        print(f"{estimate(spec, len(chosen), len(candidates), s.games_per_pairing, s.agents)}; {len(todo):,} to "
              f"play", file=sys.stderr)
    if todo:  # the code is verified only when there is something to play (a finished selection rescores at once)
        atomic_write(out / "config.json", json.dumps(config, indent=2) + "\n")
        play_games(_jobs(spec, candidates, todo, s), out / GAMES_FILE, done, total=len(planned),
                   executor=s.executor, progress=s.progress)
    records = tuple(done[key] for key, *_ in planned)
    scores, threshold = score(candidates, records, margin=s.margin, utility=utility)
    hosts = tuple(c.label for c in chosen)
    compared = pair_comparisons(records, hosts=hosts, games_per_pairing=s.games_per_pairing, utility=utility,
                                outcome=spec.outcome)
    selection = Selection(spec.name, out, hosts, utility, source, s.margin, threshold, scores, records, compared)
    write_selection(selection, games_per_pairing=s.games_per_pairing, seed=s.seed)
    return selection


def _jobs(spec: games.GameSpec, candidates: Sequence[Candidate],
          todo: Sequence[tuple[str, Any, Any, Any, int]], s: SelectionSettings) -> list[GameJob]:
    """The games still to play, each hosted by one bundle's model; the bundles are verified first. Game ``i``
    of both seat orders of two agents in one host shares its deal: ``cwm.arena.plan.deal_seed`` of the
    selection's seed, the game as that host models it, the agents' settings and the two agents in sorted
    order, so the seat-swapped games are a pair as the arena's are."""
    sources = _verified(spec, candidates)
    hashed = settings_hash({"settings": dataclasses.asdict(s.agents), "move_time_limit": s.move_time_limit,
                            "host_cpu_s": s.host_cpu_s})
    return [GameJob(spec.name, key, h.label, sources[h.label]["model.py"], (a.label, b.label),
                    (sources[a.label], sources[b.label]), match_seed(s.seed, key), s.agents, s.move_time_limit,
                    s.host_cpu_s, i, deal_seed(s.seed, f"{spec.name}|host:{h.fingerprint}", hashed,
                                               (a.fingerprint, b.fingerprint), i))
            for key, h, a, b, i in todo]


def play_games(jobs: Sequence[GameJob], path: Path, done: dict[str, GameRecord], *, total: int,
               executor: str | Executor = "local", progress: bool = True) -> None:
    """Plays ``jobs`` on ``executor``, appending each record to ``path`` (a ``games.jsonl``) and to ``done`` as
    its game ends; a job whose process died is saved as a void game. ``total``: the selection's games, for
    the progress bar."""
    from tqdm import tqdm

    ex = make_executor(executor) if isinstance(executor, str) else executor
    bar = tqdm(total=total, initial=total - len(jobs), disable=not progress, desc="selection games", unit="game")
    path.parent.mkdir(parents=True, exist_ok=True)
    try:
        with path.open("a", encoding="utf-8") as f:
            for result in ex.imap_unordered(play_game, jobs):
                if isinstance(result, JobCrashed):  # saved as void, so a resume does not crash again
                    job = result.item
                    result = GameRecord(job.key, job.host, job.seats, job.seed, (0.0,) * len(job.seats), "", "void",
                                        str(result), index=job.index, deal=job.deal).to_json()
                f.write(json.dumps(result) + "\n")
                f.flush()
                record = GameRecord.from_json(result)
                done[record.key] = record
                bar.update(1)
    finally:
        bar.close()
        if isinstance(executor, str):
            ex.close()


def pick_hosts(candidates: Sequence[Candidate], hosts: int, seed: int) -> list[Candidate]:
    """The ``hosts`` candidates that host the games, drawn without replacement by ``np.random.default_rng(seed)``
    (in the order given)."""
    picked = np.random.default_rng(seed).choice(len(candidates), size=hosts, replace=False)
    return [candidates[i] for i in sorted(int(i) for i in picked)]


def estimate(spec: games.GameSpec, hosts: int, agents: int, per_pairing: int, settings: Settings) -> str:
    """The size of a selection in one line: its games, and the search behind each move."""
    search = settings.search
    return (f"selection of {spec.name}: {hosts} host(s) x {agents * agents} pairings x {per_pairing} games = "
            f"{hosts * agents * agents * per_pairing:,} games, each up to {game_facts(spec).max_game_length:,} "
            f"moves (the real game's longest) of {search.num_simulations:,} simulations, {search.rollouts} "
            f"rollouts a leaf")


def load_records(path: Path) -> dict[str, GameRecord]:
    """The finished games in ``path``; a torn last line (a run killed while writing) is cut off with a
    warning and its game played again.

    Raises:
      SelectionError: a line other than the last that is not a game record (names the file and line).
    """
    try:
        found = read_appended(path, GameRecord.from_json, what="a game record", redo="its game is played again",
                              log=log)
    except LineError as e:
        raise SelectionError(f"{e}; fix or delete that line (its game is then played again)") from e
    return {r.key: r for r in found}


def _check_resume(out: Path, config: dict[str, Any]) -> None:
    changed = changed_settings(out / "config.json", config)
    if changed:
        raise SelectionError(f"{out} holds a selection with other settings or bundles ({', '.join(changed)} "
                             f"differ); resume it with the same ones, or use another folder")


def _check_numbers(bundles: int, s: SelectionSettings) -> None:
    problems = s.agents.problems()
    if bundles < 2:
        problems.append(f"a selection needs at least two bundles (got {bundles})")
    if type(s.hosts) is not int or not 1 <= s.hosts <= max(bundles, 1):
        problems.append(f"hosts must be between 1 and the number of bundles, {bundles} (got {s.hosts!r})")
    if type(s.games_per_pairing) is not int or s.games_per_pairing < 1:
        problems.append(f"games per pairing must be >= 1 (got {s.games_per_pairing!r})")
    if type(s.margin) not in (int, float) or not (math.isfinite(s.margin) and s.margin >= 0):
        problems.append(f"the margin must be a finite number >= 0 (got {s.margin!r})")
    for what, limit in (("the move time limit", s.move_time_limit), ("the host's time limit", s.host_cpu_s)):
        if type(limit) not in (int, float) or not (math.isfinite(limit) and limit > 0):
            problems.append(f"{what} must be > 0 seconds (got {limit!r})")
    if problems:
        raise SelectionError("; ".join(problems))


def _candidates(spec: games.GameSpec, bundles: Sequence[str | Path]) -> list[Candidate]:
    """Each bundle labelled by its folder's name (made unique), with its fingerprint; nothing is loaded, and a
    manifest that lists no inference for a game with hidden information is refused at once."""
    paths = [Path(b).resolve() for b in bundles]
    twice = sorted({str(p) for p in paths if paths.count(p) > 1})
    if twice:
        raise SelectionError(f"bundle(s) given more than once: {', '.join(twice)}")
    missing = [str(p) for p in paths if not (p / "manifest.json").is_file()]
    if missing:
        raise SelectionError(f"not a bundle folder (no manifest.json): {', '.join(missing)}")
    for path in paths:
        if not spec.perfect_information and "inference.py" not in _listed(path):
            raise SelectionError(f"{path}: {spec.name} has hidden information and the bundle has no inference.py, "
                                 f"so its agent cannot plan (export it with --inference)")
    return [Candidate(label, str(path), agent_fingerprint(AgentSpec("cwm", str(path))))
            for path, label in zip(paths, _labels(paths))]


def _listed(path: Path) -> list[str]:
    """The files a bundle's manifest lists (checked against the folder when the bundle is verified)."""

    files = read_manifest(path).get("files")
    return list(files) if isinstance(files, dict) else []


def _verified(spec: games.GameSpec, candidates: Sequence[Candidate]) -> dict[str, dict[str, str]]:
    """Each candidate's code, verified as ``load_bundle`` verifies a bundle (contained)."""

    return {c.label: dict(load_bundle(c.path, game=spec).sources) for c in candidates}


def _labels(paths: Sequence[Path]) -> list[str]:
    """A label per bundle: its folder's name (characters other than letters, digits and ``_ . + -`` made
    ``_``); a name several share gets its position (``bundle-2``)."""
    names = [re.sub(r"[^A-Za-z0-9_.+-]", "_", p.name) or "bundle" for p in paths]
    return [f"{n}-{i}" if names.count(n) > 1 else n for i, n in enumerate(names)]
