"""Choosing a value function by play inside the world model: a tournament of MCTS agents that differ only in how
they value their leaves.

Each candidate value function gives one agent (MCTS with the value at its leaves, ``value-1``, ``value-2``,
...); one more, ``rollouts``, values leaves by random rollouts as MCTS does without a value. Every ordered
pairing of two different agents plays ``games_per_pairing`` games, so each pair meets in both seats, all of
them inside the synthesized world model (never the real game: the model hosts the games, as in sample
rejection, ``cwm.selection.play``). Every agent plans in a hardened planning worker with its value module
loaded there, and the host model runs in a hardened session of its own: no candidate code runs in this
process. A failure (a value that breaks the contract in play, a worker over its budget) makes both players of
that game lose, as in sample rejection.

The best agent by mean return wins; when that is ``rollouts`` (ties go to it), no value function is kept (the
paper found values helped only in some games). Files under ``out``: ``config.json`` (what a resume must
match), ``games.jsonl`` (one record per finished game, appended as it ends: a rerun plays only what is
missing), ``tournament.json`` and ``tournament.md`` (the table).
"""

from __future__ import annotations

import dataclasses
import json
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from cwm import games
from cwm.agents.specs import Settings
from cwm.arena import DEFAULT_MOVE_TIME_S
from cwm.arena.plan import match_seed
from cwm.executors import Executor
from cwm.files import atomic_write, changed_settings
from cwm.sandbox.host import DEFAULT_HOST_CPU_S
from cwm.selection.play import GameJob, GameRecord
from cwm.selection.rejection import load_records, play_games
from cwm.synthesis.store import sha
from cwm.types import JSON, CwmError, from_former_keywords
from planners.config import SearchConfig

ROLLOUTS = "rollouts"
DEFAULT_GAMES = 10  # games per ordered pairing
TABLE_JSON, TABLE_MD, GAMES_FILE = "tournament.json", "tournament.md", "games.jsonl"


class TournamentError(CwmError, ValueError):
    """A tournament that cannot be played: no candidates, bad numbers, a game that is not for two players, or
    an ``out`` folder holding another tournament."""


@dataclasses.dataclass(frozen=True)
class Standing:
    """One agent's record over all its games (both seats; games whose own process died left out).

    Attributes:
      label: ``rollouts`` or ``value-<k>`` (the k-th candidate, from 1).
      games, wins, draws, losses: counted by its return against its opponent's.
      mean: its mean return.
      failures: games lost because its own worker failed (its value broke the contract, it ran over budget).
    """

    label: str
    games: int
    wins: int
    draws: int
    losses: int
    mean: float
    failures: int


@dataclasses.dataclass(frozen=True)
class Tournament:
    """The outcome: the table, the head-to-head means and the winner.

    Attributes:
      game: the game's name.
      labels: every agent, ``rollouts`` first.
      standings: one per agent, best mean first.
      head_to_head: ``row -> column -> row's mean return`` over their games in both seats.
      winner: the winning candidate's label, or ``None`` when ``rollouts`` came first.
      winner_index: its position among the candidates (0-based), or ``None``.
      games_per_pairing: games of each ordered pairing.
      search: the agents' search settings.
      seed: seeds every game.
    """

    game: str
    labels: tuple[str, ...]
    standings: tuple[Standing, ...]
    head_to_head: dict[str, dict[str, float]]
    winner: str | None
    winner_index: int | None
    games_per_pairing: int
    search: dict[str, JSON]
    seed: int

    def to_json(self) -> dict[str, JSON]:
        return dataclasses.asdict(self)

    def to_markdown(self) -> str:
        """The table as markdown: the standings, then the head-to-head means."""
        lines = [f"# Value tournament: {self.game}", "",
                 f"{self.games_per_pairing} games per ordered pairing inside the world model; MCTS with "
                 f"{self.search['num_simulations']} simulations; seed {self.seed}.", "",
                 "| agent | games | wins | draws | losses | mean return | failures |", "|---|---|---|---|---|---|---|"]
        lines += [f"| {s.label} | {s.games} | {s.wins} | {s.draws} | {s.losses} | {s.mean:+.3f} | {s.failures} |"
                  for s in self.standings]
        lines += ["", "Mean return of the row against the column:", "",
                  "| | " + " | ".join(self.labels) + " |", "|---" * (len(self.labels) + 1) + "|"]
        for row in self.labels:
            cells = [f"{self.head_to_head[row][c]:+.3f}" if c in self.head_to_head[row] else "" for c in self.labels]
            lines.append(f"| {row} | " + " | ".join(cells) + " |")
        verdict = (f"Winner: {self.winner} (kept as value.py)." if self.winner else
                   "Winner: rollouts; no value function is kept.")
        return "\n".join([*lines, "", verdict]) + "\n"


def candidate_labels(count: int) -> list[str]:
    """``rollouts`` and one label per candidate."""
    return [ROLLOUTS, *(f"value-{k + 1}" for k in range(count))]


@dataclasses.dataclass(frozen=True)
class TournamentSettings:
    """How a value tournament is played.

    Attributes:
      games_per_pairing: games of each ordered pairing of two different agents.
      search: the agents' MCTS settings (a value replaces rollouts at the leaves).
      seed: seeds every game (a hash of it and the game's key).
      executor: ``local`` (process pool), ``local:N``, ``inline``, ``ray[:ADDRESS]`` or an ``Executor``.
      move_time_limit: CPU seconds per move of an agent's worker.
      host_cpu_s: CPU seconds per request of the host model's session.
      progress: show a progress bar (stderr).
    """

    games_per_pairing: int = DEFAULT_GAMES
    search: SearchConfig = SearchConfig()
    seed: int = 0
    executor: str | Executor = "local"
    move_time_limit: float = DEFAULT_MOVE_TIME_S
    host_cpu_s: float = DEFAULT_HOST_CPU_S
    progress: bool = True

    def replace(self, **changes: Any) -> TournamentSettings:
        return dataclasses.replace(self, **changes)

    def check(self) -> TournamentSettings:
        """The settings themselves when usable.

        Raises:
          TournamentError: every problem, in one line.
        """
        problems = self.search.problems()
        if type(self.games_per_pairing) is not int or self.games_per_pairing < 1:
            problems.append(f"games per pairing must be >= 1 (got {self.games_per_pairing!r})")
        if problems:
            raise TournamentError("; ".join(problems))
        return self


def run_tournament(game: str | games.GameSpec, world_model: str, candidates: Sequence[str], out: str | Path,
                   settings: TournamentSettings | None = None, *, inference: str | None = None,
                   **legacy: Any) -> Tournament:
    """Plays (or resumes) the tournament of ``candidates`` against random rollouts inside ``world_model``.

    Args:
      game: the game the model models (its engine gives only the action codec and facts; it is never played).
      world_model: the synthesized world model's source (hosts every game; each agent plans on it).
      candidates: value modules' sources (checked already; they still run only in hardened workers).
      out: the tournament folder.
      settings: games per pairing, the agents' search, seed, executor, limits (default ``TournamentSettings()``).
      inference: the model's inference function (a bundle's ``inference.py``), which every agent's ISMCTS
        samples from in a game with hidden information (required there).
      legacy: the former keyword arguments (``games_per_pairing=``, ``search=``, ...), deprecated.

    Returns:
      the ``Tournament`` (also written to ``out/tournament.json`` and ``out/tournament.md``).

    Raises:
      TournamentError: no candidates, a count below 1, a game not for two players, a game with hidden
        information without ``inference``, or an ``out`` holding a tournament with other settings or candidates.
    """
    found = from_former_keywords(TournamentSettings, settings, legacy, who="run_tournament", error=TournamentError)
    settings = (found or TournamentSettings()).check()
    spec = games.resolve(game)
    _check(spec, candidates, inference)
    out = Path(out)
    labels = candidate_labels(len(candidates))
    config = _config(spec, world_model, inference, candidates, settings)
    changed = changed_settings(out / "config.json", config, ignore=("games_per_pairing",))
    if changed:
        raise TournamentError(f"{out} holds a tournament with other settings or candidates ({', '.join(changed)} "
                              f"differ); resume it with the same ones, or use another folder")
    n = settings.games_per_pairing
    planned = [(f"model|{a}|{b}#{i}", a, b) for a in labels for b in labels if a != b for i in range(n)]
    done = load_records(out / GAMES_FILE)
    todo = [p for p in planned if p[0] not in done]
    if todo:
        atomic_write(out / "config.json", json.dumps(config | {"games_per_pairing": n}, indent=2) + "\n")
        jobs = _jobs(spec, world_model, inference, dict(zip(labels[1:], candidates)), todo, settings)
        play_games(jobs, out / GAMES_FILE, done, total=len(planned), executor=settings.executor,
                   progress=settings.progress)
    result = score(spec.name, labels, [done[key] for key, *_ in planned], games_per_pairing=n,
                   search=settings.search, seed=settings.seed)
    atomic_write(out / TABLE_JSON, json.dumps(result.to_json(), indent=2) + "\n")
    atomic_write(out / TABLE_MD, result.to_markdown())
    return result


def _config(spec: games.GameSpec, world_model: str, inference: str | None, candidates: Sequence[str],
            settings: TournamentSettings) -> dict[str, JSON]:
    """What a resume must match (``config.json``; the games per pairing may grow)."""
    return {"game": spec.name, "seed": settings.seed, "search": settings.search.to_json(),
            "model_sha": sha(world_model)[:16], "inference_sha": sha(inference)[:16] if inference else None,
            "candidates": [sha(c)[:16] for c in candidates], "move_time_limit": settings.move_time_limit,
            "host_cpu_s": settings.host_cpu_s}


def _jobs(spec: games.GameSpec, world_model: str, inference: str | None, values: dict[str, str],
          todo: list[tuple[str, str, str]], settings: TournamentSettings) -> list[GameJob]:
    """One hosted game per planned key still to play: each seat's agent plans on the model, with its value."""
    base = {"model.py": world_model} | ({"inference.py": inference} if inference else {})
    sources = {ROLLOUTS: base, **{label: base | {"value.py": v} for label, v in values.items()}}
    agents = Settings(search=settings.search)
    return [GameJob(spec.name, key, "model", world_model, (a, b), (sources[a], sources[b]),
                    match_seed(settings.seed, key), agents, settings.move_time_limit, settings.host_cpu_s)
            for key, a, b in todo]


def score(game: str, labels: Sequence[str], records: Sequence[GameRecord], *, games_per_pairing: int,
          search: SearchConfig, seed: int) -> Tournament:
    """The table of a finished tournament: standings (best mean first), head-to-head means, the winner."""
    returns: dict[str, list[float]] = {label: [] for label in labels}
    tally = {label: [0, 0, 0, 0] for label in labels}  # wins, draws, losses, failures
    pair: dict[tuple[str, str], list[float]] = {}
    for record in records:
        if record.void:
            continue
        for seat, label in enumerate(record.seats):
            mine, theirs = record.returns[seat], record.returns[1 - seat]
            returns[label].append(mine)
            tally[label][0 if mine > theirs else 1 if mine == theirs else 2] += 1
            tally[label][3] += record.failed == f"seat {seat}"
            pair.setdefault((label, record.seats[1 - seat]), []).append(mine)
    standings = [Standing(label, len(returns[label]), tally[label][0], tally[label][1], tally[label][2],
                          _mean(returns[label]), tally[label][3]) for label in labels]
    # best mean first; among equals rollouts first (a value must beat it to be kept), then the earlier candidate
    standings.sort(key=lambda s: (-s.mean, s.label != ROLLOUTS, labels.index(s.label)))
    head = {a: {b: _mean(v) for (x, b), v in sorted(pair.items()) if x == a} for a in labels}
    best = standings[0].label
    winner = None if best == ROLLOUTS else best
    return Tournament(game, tuple(labels), tuple(standings), head, winner,
                      None if winner is None else labels.index(winner) - 1, games_per_pairing, search.to_json(), seed)


def _mean(items: Sequence[float]) -> float:
    return sum(items) / len(items) if items else 0.0


def _check(spec: games.GameSpec, candidates: Sequence[str], inference: str | None) -> None:
    problems = []
    if not spec.perfect_information and not inference:
        problems.append(f"{spec.name} has hidden information: the agents plan with ISMCTS through the model's "
                        f"inference function, so pass it (the bundle's inference.py)")
    if not candidates:
        problems.append("a value tournament needs at least one candidate")
    players = games.load_game(spec).num_players()
    if players != 2:
        problems.append(f"{spec.name} has {players} players; a value tournament pairs two agents, one a seat")
    if problems:
        raise TournamentError("; ".join(problems))


__all__ = ["DEFAULT_GAMES", "ROLLOUTS", "Standing", "Tournament", "TournamentError", "TournamentSettings",
           "candidate_labels", "run_tournament", "score"]
