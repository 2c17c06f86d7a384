"""Held-out test sets sized by transitions: generated once per (game, seed, settings), in parallel, cached.

A synthesis run measures its best program on held-out games from the ground truth, a share of them
uniformly random play and the rest MCTS play (``mcts_policy``). The paper sizes that set at 10,000
transitions, not a number of games: 100 games are 800 transitions of tic-tac-toe and 40,000 of
backgammon. ``held_out_set`` plays games in index order (game ``i`` of a share is seeded ``base + i``) until
each share holds its transitions; games run in parallel on an executor (``cwm.executors``) in batches, and
the set is always the shortest prefix of games that reaches the size, so it does not depend on the
executor, the number of workers or the order in which games finish.

Long games play their MCTS share at fewer simulations: a game whose maximum length is over
``LONG_GAME_MOVES`` searches ``LONG_GAME_SIMULATIONS`` simulations per move (``default_simulations``), which
keeps backgammon's set to minutes on two cores while its MCTS games still differ from random play.

A finished set is cached under ``cache_dir()`` (``$CWM_CACHE_DIR``, else ``$XDG_CACHE_HOME/cwm``, else
``~/.cache/cwm``), keyed by the game's canonical id and every setting, so synthesis runs of the same game
and seed share it.
"""

from __future__ import annotations

import contextlib
import dataclasses
import hashlib
import json
import math
import os
import sys
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import numpy as np
from tqdm import tqdm

from cwm import games
from cwm.executors import Executor, JobCrashed, make_executor
from cwm.games import trajectories
from cwm.types import Trajectory, UsageError
from planners.config import SearchConfig
from planners.mcts import MCTS

DEFAULT_TRANSITIONS = 10_000  # the paper's held-out set
DEFAULT_SIMULATIONS = 100  # simulations per move of the MCTS share
LONG_GAME_MOVES = 200  # a game longer than this at most is "long"
LONG_GAME_SIMULATIONS = 25  # ... and plays its MCTS share at this many simulations
SEED_OFFSET = 100_000  # held-out seeds start here, so they never overlap the training games
FORMAT = 2  # bumped when what a cached set holds changes (2: long chance tables written once)


@dataclasses.dataclass(frozen=True)
class TestSetSettings:
    """What a held-out set is made of (all of it is in its cache key).

    Attributes:
      transitions: steps the set holds at least (paper: 10,000), split between the shares.
      mcts_fraction: the share of transitions from MCTS play (default one half).
      mcts_simulations: simulations per move of the MCTS share (``None``: ``default_simulations``).
    """

    __test__ = False  # not a pytest class, despite its name

    transitions: int = DEFAULT_TRANSITIONS
    mcts_fraction: float = 0.5
    mcts_simulations: int | None = None

    def check(self) -> None:
        """Raises ``UsageError`` naming a setting out of range."""
        if type(self.transitions) is not int or self.transitions < 1:
            raise UsageError(f"test transitions must be an integer >= 1, got {self.transitions!r}")
        if not 0.0 <= self.mcts_fraction <= 1.0:
            raise UsageError(f"the MCTS share of the test set must be in [0, 1], got {self.mcts_fraction!r}")
        if self.mcts_simulations is not None and self.mcts_simulations < 1:
            raise UsageError(f"test MCTS simulations must be >= 1, got {self.mcts_simulations}")


def mcts_policy(*, simulations: int = 100, rollouts: int = 1) -> trajectories.Policy:
    """A UCT player (``planners.mcts.MCTS``, c = 2) as a trajectory policy.

    Randomness: each move's search is seeded with one integer drawn from the game's generator, so a
    recorded game is reproducible from its seed.
    """
    def policy(state: Any, rng: np.random.Generator) -> int:
        return int(MCTS(SearchConfig(num_simulations=simulations, rollouts=rollouts), seed=rng).step(state))

    return policy


def default_simulations(game: str | games.GameSpec) -> int:
    """The MCTS share's simulations per move: ``LONG_GAME_SIMULATIONS`` for a game whose maximum length is
    over ``LONG_GAME_MOVES``, else ``DEFAULT_SIMULATIONS``."""
    length = games.load_game(game).max_game_length()
    return LONG_GAME_SIMULATIONS if length > LONG_GAME_MOVES else DEFAULT_SIMULATIONS


def cache_dir() -> Path:
    """Where shared test sets live: ``$CWM_CACHE_DIR``, else ``$XDG_CACHE_HOME/cwm``, else ``~/.cache/cwm``."""
    if os.environ.get("CWM_CACHE_DIR"):
        return Path(os.environ["CWM_CACHE_DIR"])
    return Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache") / "cwm"


@dataclasses.dataclass(frozen=True)
class _GameJob:
    """One held-out game for a worker: picklable names and numbers only."""

    game: str
    share: str  # "random" or "mcts"
    index: int
    seed: int
    simulations: int


def _play(job: _GameJob) -> tuple[str, int, Trajectory]:
    if job.share == "random":
        return job.share, job.index, trajectories.record(job.game, seed=job.seed)
    policy = mcts_policy(simulations=job.simulations)
    return job.share, job.index, trajectories.record(job.game, seed=job.seed, policy=policy, policy_name="mcts")


def held_out_set(game: str | games.GameSpec, *, seed: int = 0, settings: TestSetSettings = TestSetSettings(),
                 executor: str | Executor = "local", cache: Path | None = None,
                 progress: bool = True) -> list[Trajectory]:
    """The held-out games of ``game`` for a run seeded ``seed``: from the cache, else played and cached.

    Args:
      game: a game with a ground truth.
      seed: the run's seed; random games are seeded ``seed + SEED_OFFSET + i``, MCTS games after them.
      settings: the set's size, MCTS share and simulations.
      executor: where games are played (``local``, ``local:N``, ``inline``, ``ray[:ADDRESS]`` or an executor).
      cache: the cache folder (default ``cache_dir()``); the set is ``test_sets/<game>-<key>.jsonl`` there.
      progress: show a progress bar of transitions on stderr.

    Returns:
      the random share's games, then the MCTS share's, each in index order.

    Raises:
      UsageError: settings out of range.
      CwmError: a game whose worker died (``JobCrashed``), with its share and seed.
    """
    settings.check()
    spec = games.resolve(game)
    sims = settings.mcts_simulations or default_simulations(spec)
    path = (cache or cache_dir()) / "test_sets" / f"{_safe(spec.name)}-{cache_key(spec, seed, settings, sims)}.jsonl"
    if path.is_file():
        return trajectories.load_open(path)
    mcts_steps = int(round(settings.transitions * settings.mcts_fraction))
    wanted = {"random": settings.transitions - mcts_steps, "mcts": mcts_steps}
    ex = make_executor(executor) if isinstance(executor, str) else executor
    try:
        with _bar(settings.transitions, spec.name, progress) as bar:
            played = _play_until(spec.name, seed, sims, wanted, ex, bar)
    finally:
        if isinstance(executor, str):
            ex.close()
    out = trajectories.share_tables(played["random"] + played["mcts"])
    trajectories.save(path, out, shared=True)  # a long chance table once, not once a game (bargaining)
    return out


def cache_key(spec: games.GameSpec, seed: int, settings: TestSetSettings, simulations: int) -> str:
    """16 hex digits naming a set: the game's canonical id, the seed and every setting."""
    what = {"game": games.canonical_id(spec), "seed": seed, "transitions": settings.transitions,
            "mcts_fraction": settings.mcts_fraction, "simulations": simulations, "format": FORMAT}
    return hashlib.sha256(json.dumps(what, sort_keys=True).encode()).hexdigest()[:16]


def _play_until(game: str, seed: int, sims: int, wanted: dict[str, int], ex: Executor,
                bar: Callable[[int], None]) -> dict[str, list[Trajectory]]:
    """Each share's shortest prefix of games reaching its transitions, played in parallel batches (the first
    two games per worker, then as many as the mean length so far says are still missing, and at least one
    per worker, so the last games of a share do not run one at a time)."""
    base = {"random": seed + SEED_OFFSET, "mcts": seed + SEED_OFFSET + 1_000_000}
    found: dict[str, dict[int, Trajectory]] = {"random": {}, "mcts": {}}
    workers = max(1, getattr(ex, "workers", 1) or 1)
    while True:
        todo = [_GameJob(game, share, i, base[share] + i, sims) for share in found
                for i in range(len(found[share]), len(found[share]) + _missing(found[share], wanted[share], workers))]
        if not todo:
            return {share: _prefix(found[share], wanted[share]) for share in found}
        for result in ex.imap_unordered(_play, todo):
            if isinstance(result, JobCrashed):
                raise result
            share, index, trajectory = result
            found[share][index] = trajectory
            bar(len(trajectory.steps))


def _missing(done: dict[int, Trajectory], wanted: int, workers: int) -> int:
    """Games to play next for ``wanted`` transitions: two per worker at the start, then the mean length's
    share of what is missing, at least one per worker."""
    steps = sum(len(t.steps) for t in done.values())
    if wanted <= 0 or steps >= wanted:
        return 0
    if not done:
        return 2 * workers
    return max(workers, math.ceil((wanted - steps) / max(1.0, steps / len(done))))


def _prefix(done: dict[int, Trajectory], wanted: int) -> list[Trajectory]:
    out, steps = [], 0
    for i in sorted(done):
        if steps >= wanted:
            break
        out.append(done[i])
        steps += len(done[i].steps)
    return out


def _safe(name: str) -> str:
    return "".join(c if c.isalnum() or c in "-_." else "_" for c in name)[:60]


@contextlib.contextmanager
def _bar(total: int, game: str, show: bool) -> Iterator[Callable[[int], None]]:
    """A tqdm bar of transitions played (the extra games of a last batch may take it past ``total``)."""
    if not show:
        yield lambda n: None
        return
    bar = tqdm(total=total, desc=f"{game} test set", unit="step", file=sys.stderr, dynamic_ncols=True)
    try:
        yield lambda n: bar.update(n)
    finally:
        bar.close()


__all__ = ["DEFAULT_TRANSITIONS", "LONG_GAME_MOVES", "LONG_GAME_SIMULATIONS", "TestSetSettings", "cache_dir",
           "cache_key", "default_simulations", "held_out_set"]

