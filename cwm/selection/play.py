"""One game of sample rejection: CWM agents, each planning on its own bundle in a hardened worker, play a
game hosted by another (or the same) synthesized model, which stands in for the real game.

``play_game(job)`` runs in any executor process: it opens the host (``cwm.sandbox.host.HostGame``, a sandbox
session) and one planning worker per seat (``HostedAgent``: ``cwm.agents.worker.WorkerAgent`` following
the hosted game instead of the real one), samples chance from the host's validated distribution (seeded by
the job's ``deal`` when it has one: the seat-swapped games of a pair share it, as the arena's matches do),
and returns a ``GameRecord``. Any failure ends the game and both players lose (each gets the game's minimum
utility), recorded with who failed, how and why: the host (a contract breach, a bad view, its worker
overrunning or dying, a game that does not end) or a seat (an illegal move by the host's legal actions,
its worker's failure). The paper makes an execution failure or an illegal move cost both players, since
either model may be the wrong one.
"""

from __future__ import annotations

import dataclasses
import time
from collections.abc import Sequence
from typing import Any

import numpy as np

from cwm import events as player_events
from cwm import games, value_rules
from cwm.agents.base import AgentError
from cwm.agents.cwm import game_facts
from cwm.agents.specs import Settings
from cwm.agents.worker import WorkerAgent
from cwm.arena.clock import agent_move
from cwm.sandbox.host import DEFAULT_HOST_CPU_S, HostedState, HostFailure, HostGame
from cwm.text import clean, clean_json
from cwm.types import CHANCE, JSON, TERMINAL

REASON_LIMIT = 2000


class HostTracker:
    """Follows a hosted game from one seat: every move's string and the seat's own events, read from the
    validated host views (the tracker a ``HostedAgent`` uses instead of replaying the real game)."""

    def __init__(self, player: int):
        self.player = player
        self.moves: list[str] = []
        self.events: list[dict[str, JSON]] = []

    def follows(self, state: HostedState, player: int) -> bool:
        return player == self.player and list(state.moves[: len(self.moves)]) == self.moves

    def sync(self, state: HostedState) -> None:
        for view in state.views[len(self.events):]:
            over = view.player == TERMINAL
            self.events.append(player_events.event(value_rules.thaw(view.observations[self.player]),
                                                   final_return=view.returns[self.player] if over else None))
        for i in range(len(self.moves), len(state.moves)):
            if state.movers[i] == self.player:
                self.events[i]["action"] = state.moves[i]
            self.moves.append(state.moves[i])


class HostedAgent(WorkerAgent):
    """A contained CWM agent that plays a game hosted by a model (``HostedState``s) instead of the real
    game: the same planning worker, the seat's view read from the host's validated views."""

    def _new_tracker(self, player: int) -> HostTracker:
        return HostTracker(player)


@dataclasses.dataclass(frozen=True)
class GameRecord:
    """One finished game of a selection.

    Attributes:
      key: ``"<host>|<seat0>|<seat1>#<index>"``.
      host: the host's label; seats: the agent label in each seat.
      seed: the game's seed (chance and the agents' seeds derive from it).
      returns: each seat's return (the game's minimum utility for every seat when the game failed).
      failed: who failed: ``"host"``, ``"seat 0"``, ``"seat 1"``, ...; empty when the game ended normally.
      kind: how (``illegal``, ``contract``, ``value``, ``endless``, a sandbox verdict, an agent's forfeit
        kind), or ``void`` when the game's own (trusted) process died: no outcome, never replayed.
      reason: why, cleaned to one safe line.
      moves: actions applied (chance included); duration_s: wall time.
      stats: per seat, the agent's own record (draws accepted and rejected, fallback moves, ...).
      index: the game's number among those of its host and seating (0 for the first).
      deal: the chance seed it was played on, shared by the seat-swapped games of a pair (``None`` in
        records written before games were paired: such games are never paired).
    """

    key: str
    host: str
    seats: tuple[str, ...]
    seed: int
    returns: tuple[float, ...]
    failed: str = ""
    kind: str = ""
    reason: str = ""
    moves: int = 0
    duration_s: float = 0.0
    stats: tuple[JSON, ...] = ()
    index: int = 0
    deal: int | None = None

    def __post_init__(self) -> None:
        object.__setattr__(self, "reason", clean(self.reason, limit=REASON_LIMIT))
        object.__setattr__(self, "kind", clean(self.kind, limit=100))
        object.__setattr__(self, "stats", tuple(clean_json(s, limit=REASON_LIMIT) for s in self.stats))

    @property
    def void(self) -> bool:
        return self.kind == "void"

    def to_json(self) -> dict[str, JSON]:
        return dataclasses.asdict(self)

    @classmethod
    def from_json(cls, data: Any) -> GameRecord:
        """The inverse of ``to_json``.

        Raises:
          ValueError: not a game record (not an object, a field missing or of the wrong type); names the field.
        """
        if not isinstance(data, dict):
            raise ValueError(f"a game record is a JSON object, not {type(data).__name__}")
        seq = (list, tuple)
        kinds: dict[str, type | tuple[type, ...]] = {
            "key": str, "host": str, "seats": seq, "seed": int, "returns": seq, "failed": str, "kind": str,
            "reason": str, "moves": int, "duration_s": (int, float), "stats": seq, "index": int,
            "deal": (int, type(None))}
        for name, kind in kinds.items():
            if name in data and (not isinstance(data[name], kind) or isinstance(data[name], bool)):
                raise ValueError(f"field {name!r} of a game record has the wrong type ({type(data[name]).__name__})")
        missing = [k for k in ("key", "host", "seats", "seed", "returns") if k not in data]
        if missing:
            raise ValueError(f"a game record needs the field(s) {', '.join(missing)}")
        fields = {f.name for f in dataclasses.fields(cls)}
        found = {k: v for k, v in data.items() if k in fields}
        found["seats"] = tuple(str(s) for s in found["seats"])
        found["returns"] = tuple(value_rules.number(r, "a return") for r in found["returns"])
        found["stats"] = tuple(s if isinstance(s, dict) else {} for s in found.get("stats", ()))
        return cls(**found)


@dataclasses.dataclass(frozen=True)
class GameJob:
    """Everything a worker process needs to play one game: the verified code of the host and of each seat's
    bundle (picklable text, no live objects) and the settings."""

    game: str
    key: str
    host: str
    host_source: str
    seats: tuple[str, ...]
    sources: tuple[dict[str, str], ...]
    seed: int
    settings: Settings
    move_time_limit: float
    host_cpu_s: float = DEFAULT_HOST_CPU_S
    index: int = 0
    deal: int | None = None  # the chance seed, shared by the seat orders of a pair (default: from ``seed``)


def play_game(job: GameJob) -> dict[str, JSON]:
    """Plays one game of ``job`` and returns its ``GameRecord`` as JSON (never raises for what a model did).

    Randomness: ``np.random.SeedSequence(job.seed)`` gives one seed per seat and one for chance; a job's
    ``deal`` seeds chance instead.
    """
    start = time.perf_counter()
    spec = games.resolve(job.game)  # the job crossed a process boundary by the game's name
    seeds = np.random.SeedSequence(job.seed).spawn(len(job.seats) + 1)
    agents = [HostedAgent(sources, spec, job.settings.search, name=label, seed=np.random.default_rng(s),
                          move_cpu_s=job.move_time_limit)
              for label, sources, s in zip(job.seats, job.sources, seeds)]
    chance = job.deal if job.deal is not None else int(np.random.default_rng(seeds[-1]).integers(2**63))
    host = HostGame(job.host_source, spec, name=job.host, cpu_s=job.host_cpu_s)
    try:
        returns, failed, kind, reason, moves = play_hosted(
            host, agents, seed=chance, move_time_limit=job.move_time_limit, max_moves=move_cap(spec))
    finally:
        host.close()
        for agent in agents:
            agent.close()
    return GameRecord(job.key, job.host, job.seats, job.seed, tuple(returns), failed, kind, reason, moves,
                      time.perf_counter() - start, tuple(agent.stats() for agent in agents), job.index,
                      job.deal).to_json()


def move_cap(game: games.GameSpec) -> int:
    """Moves after which a hosted game that has not ended is the host's failure: well past the real game's
    longest play (chance included)."""
    return 4 * game_facts(game).max_game_length + 100


def play_hosted(host: HostGame, agents: Sequence[Any], *, seed: int, move_time_limit: float | None,
                max_moves: int) -> tuple[list[float], str, str, str, int]:
    """Plays one game inside ``host``; agent ``i`` takes seat ``i``.

    Returns:
      ``(returns, failed, kind, reason, moves)``; on a failure ``returns`` is the game's minimum utility
      for every seat and ``failed`` names who failed (``host``, ``seat i``).
    """
    rng = np.random.default_rng(seed)
    moves = 0
    try:
        state = host.start()
        while not state.is_terminal():
            if moves >= max_moves:
                raise HostFailure("endless", f"the host's game did not end within {max_moves} moves")
            player = state.current_player()
            if player == CHANCE:
                probs = np.array([p for _, p in state.view.chance])
                action = state.view.chance[int(rng.choice(len(probs), p=probs / probs.sum()))][0]
            else:
                action = _seat_move(agents[player], state, player, move_time_limit)
            state = host.apply(state, action)
            moves += 1
    except HostFailure as e:
        return _both_lose(host, "host", e.kind, str(e), moves)
    except _SeatFailure as e:
        return _both_lose(host, f"seat {e.seat}", e.kind, e.reason, moves)
    return list(state.returns()), "", "", "", moves


class _SeatFailure(Exception):
    def __init__(self, seat: int, kind: str, reason: str):
        super().__init__(reason)
        self.seat, self.kind, self.reason = seat, kind, reason


def _seat_move(agent: Any, state: HostedState, player: int, move_time_limit: float | None) -> str:
    try:
        return state.action_to_string(player, agent_move(agent, state, move_time_limit))
    except Exception as e:  # the boundary of a seat: whatever its agent did ends the game
        kind = e.kind if isinstance(e, AgentError) else "exception"
        where = " (the host's legal actions decide)" if kind == "illegal" else ""
        raise _SeatFailure(player, kind, f"{type(e).__name__}{where}: {e}") from None


def _both_lose(host: HostGame, who: str, kind: str, reason: str, moves: int) -> tuple[list[float], str, str, str, int]:
    return [host.utility[0]] * host.num_players, who, kind, reason, moves
