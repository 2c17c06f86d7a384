"""The contained CWM agent: plans on an untrusted model in a hardened worker process, plays the real game here.

``WorkerAgent`` keeps the trusted half of a CWM agent in this process (the real game's tracker, which
needs the ground truth; the mapping of the chosen string to the real game's id) and runs the model only
in a sandbox session (``cwm.sandbox.jobs.plan``): each move crosses as JSON, the answer comes back as JSON
and is checked here. The worker has no API keys, no network, no file writes, and each move has a CPU-time
budget timed from outside; a worker that overruns, crashes or breaks the contract forfeits the match with
the reason (``timeout``, ``crash``, ``exception``), and the next match gets a fresh worker. An answer is
bounded like any untrusted input: of its per-move stats only the known keys (``STATS_KEYS``) with finite
numbers are kept, and an answer with more stats entries than ``MAX_STATS_ENTRIES``, a key longer than
``MAX_STATS_KEY_CHARS`` or an action string longer than ``MAX_ACTION_CHARS`` (no real planning server writes
one) forfeits the match.

Cost: one fork per match, a few milliseconds to load the model there, and a pipe round trip per move
(tens of microseconds); the search itself runs at full speed (``benchmarks/bench_worker.py``).
"""

from __future__ import annotations

import math
from typing import Any, Literal, Protocol

import numpy as np
import pyspiel

from cwm import games
from cwm.agents.base import AgentBase, AgentError, IllegalMoveError
from cwm.agents.cwm import HistoryTracker, game_facts, real_action
from cwm.contract import draws_histories
from cwm.sandbox import pool
from cwm.sandbox.box import PLAN_JOB, Sandbox
from cwm.sandbox.session import Session
from cwm.text import clean
from cwm.types import JSON
from planners.config import DEFAULT_SEARCH, SearchConfig

DEFAULT_MOVE_CPU_S = 60.0  # CPU seconds per move in a worker unless the arena sets a move limit
# The stats a planning server reports (``planners.cwm.CWMPlanner.stats`` and the move's times): only these are
# kept, as finite numbers, so an answer cannot grow the match's record.
STATS_KEYS = frozenset({"searches", "simulations", "moves", "draws", "rejected_draws", "fallback_moves",
                        "move_wall_s", "move_cpu_s"})
MAX_STATS_ENTRIES = 32  # a real answer has at most 8; more is a forged one
MAX_STATS_KEY_CHARS = 64
MAX_ACTION_CHARS = 10_000  # the longest action string of any game here is under 100 characters
MAX_REFUSED_CHARS = 2_000  # of a worker's refusal, what is cleaned and shown (it may send megabytes)


class Tracker(Protocol):
    """What follows one game from one seat for a worker: every move's string and the seat's own events
    (``cwm.agents.cwm.HistoryTracker`` on the real game)."""

    moves: list[str]
    events: list[dict[str, JSON]]

    def follows(self, state: Any, player: int) -> bool: ...

    def sync(self, state: Any) -> None: ...


class WorkerTimeout(AgentError):
    """The worker's move ran over its budget (or the worker stopped answering)."""

    kind = "timeout"


class WorkerCrash(AgentError):
    """The worker died (a signal, the memory limit) or could not start."""

    kind = "crash"


def codec_payload(game: games.GameSpec) -> dict[str, JSON]:
    """The real game's action codec as JSON, for a worker (which has no ground truth); cached per game."""
    return games.action_codec(game).to_json()


class WorkerAgent(AgentBase):
    """A CWM agent whose model runs in a hardened planning worker.

    Args:
      sources: the model's code: ``{"model.py": ..., "inference.py": ... (optional), "value.py": ...
        (optional), "twin.py": ... (optional)}`` (a verified bundle's ``sources``).
      game: the real game.
      config: the search settings.
      name: the model's name in reasons.
      seed: the agent's seed (one integer for the worker's search is drawn from it per match).
      move_cpu_s: CPU seconds the worker may use per move.
      sandbox: the sandbox to run the worker in (default: one from this process's pool).
      use_twin: plan on ``twin.py`` where the sources hold one (a verified bundle's twin, equivalent to the
        model by its evidence: ``cwm.bundle.twin``), no ``value.py`` (which reads the model's own states) and
        no ``inference.py`` other than one that draws histories (``planned_on``); ``False`` plans on the
        checked ``model.py`` always. With no ``inference.py`` or ``value.py``, a ``jax_twin.py`` in the sources
        (a verified bundle's JAX twin) values each leaf of the search by its batched rollouts
        (``cwm.jax_contract.batched_rollouts_fn``: the search's rollouts as one vmapped batch in the worker)
        instead of rollouts in the model.
        ``"playout"``: as ``True``, and the twin's own ``playout`` plays the search's rollouts; pass it only
        where the twin's evidence records a passing check of that playout
        (``cwm.sandbox.equivalence.playout_checked``). Otherwise a twin is stepped and its playout, if it has
        one, is never called.
    """

    def __init__(self, sources: dict[str, str], game: str | games.GameSpec, config: SearchConfig = DEFAULT_SEARCH,
                 *, name: str = "model", seed: int | np.random.Generator | None = None,
                 move_cpu_s: float = DEFAULT_MOVE_CPU_S, sandbox: Sandbox | None = None,
                 use_twin: bool | Literal["playout"] = True):
        self.sources = dict(sources)
        self.twin_playout = use_twin == "playout"  # the twin's evidence checked its playout (the caller read it)
        self.planned_on = planned_on(self.sources, use_twin)  # the file the worker plans on
        # a JAX twin's batched rollouts value the search's leaves, on the same terms as a twin is planned on
        self.jax_rollouts = bool(use_twin) and "jax_twin.py" in self.sources and not {"inference.py", "value.py"} & set(sources)
        self.spec = games.resolve(game)
        self.config = config
        self.name = name
        self.rng = np.random.default_rng(seed)
        self.move_cpu_s = move_cpu_s
        self._worker = pool.Lease(sandbox)
        self._tracker: Tracker | None = None
        self._sent_moves = self._sent_events = 0
        self._stats: dict[str, Any] = {}
        self.log: list[JSON] = []  # per move: the worker's sampling record and the move's wall and CPU time

    # -- the match protocol -------------------------------------------------------------------------
    def reset(self) -> None:
        """A new match: the next move starts a fresh worker."""
        self.close()
        self._tracker = None

    def step(self, state: pyspiel.State) -> int:
        player = state.current_player()
        if self._tracker is None or not self._tracker.follows(state, player):
            if self._tracker is not None or self._sent_moves or self._sent_events:
                self.close()  # another game (or seat): a fresh worker
            self._tracker = self._new_tracker(player)
        self._tracker.sync(state)
        legal = [state.action_to_string(player, a) for a in state.legal_actions()]
        answer = self._ask(player, legal)
        action = answer.get("action")
        if type(action) is not str:
            # The answer may be megabytes: the message names its keys only.
            keys = ", ".join(sorted(clean(str(k)[:40]) for k in answer)[:8])
            raise IllegalMoveError(f"world model {self.name}'s worker answered an object without a text action "
                                   f"(action: {type(action).__name__}; keys: {keys})")
        return real_action(state, player, action, self.name)

    def _new_tracker(self, player: int) -> Tracker:
        """What follows a new game from ``player``'s seat: the real game, replayed on the ground truth (a game
        played elsewhere, such as inside a host model, brings a tracker of its own)."""
        return HistoryTracker(self.spec, player)

    def stats(self) -> dict[str, Any]:
        """The worker's search record of this match as it last reported it (``simulations`` actually run; with
        imperfect information the sampling record), and ``simulations_asked``, each search's budget."""
        return dict(self._stats) | {"simulations_asked": self.config.num_simulations}

    def close(self) -> None:
        """Ends this match's worker (if any) and returns its sandbox to the pool."""
        self._worker.close()
        self._sent_moves = self._sent_events = 0

    # -- the worker ---------------------------------------------------------------------------------
    def _ask(self, player: int, legal: list[str]) -> dict[str, Any]:
        assert self._tracker is not None
        session = self._worker.session or self._open()
        moves, events = self._tracker.moves, self._tracker.events
        # the last event sent goes again: the seat's own action there is filled in once it has moved
        resend = max(0, self._sent_events - 1)
        message = {"op": "plan", "player": player, "legal": legal,
                   "moves_from": self._sent_moves, "moves": moves[self._sent_moves:],
                   "events_from": resend, "events": events[resend:]}
        try:
            result = session.ask(message)
        except BaseException:  # an interrupt (the arena's timer) left the exchange half done
            session.abandon()
            raise
        if not result.ok:  # the worker is gone: the next move starts another
            raise _failure(self.name, result.kind, result.error)
        self._sent_moves, self._sent_events = len(moves), len(events)
        answer = result.value if isinstance(result.value, dict) else {}
        if type(answer.get("action")) is str and len(answer["action"]) > MAX_ACTION_CHARS:
            raise IllegalMoveError(f"world model {self.name}'s worker answered an action of {len(answer['action']):,} "
                                   f"characters (at most {MAX_ACTION_CHARS:,})")
        if isinstance(answer.get("stats"), dict):
            before, self._stats = self._stats.get("simulations"), known_stats(answer["stats"], self.name)
            # the worker's per-move record for the transcript, with the simulations this move's search ran
            record = dict(self._stats)
            if type(record.get("simulations")) is int:
                record["move_simulations"] = record["simulations"] - (before if type(before) is int else 0)
            self.log.append({"player": player, **record})
        if "refused" in answer:  # the worker's words for the model's breach: they quote the model, cleaned here
            raise refusal(self.name, answer["refused"])
        return answer

    def _open(self) -> Session:
        payload = {"name": self.name, "codec": codec_payload(self.spec),
                   "facts": game_facts(self.spec).to_json(), "config": self.config.to_json(),
                   "seed": int(self.rng.integers(2**62)), "inference": self.sources.get("inference.py"),
                   "value": self.sources.get("value.py"), "twin": self.planned_on == "twin.py",
                   "playout": self.planned_on == "twin.py" and self.twin_playout,
                   "jax_twin": self.sources["jax_twin.py"] if self.jax_rollouts else None}
        session = self._worker.open(PLAN_JOB, self.sources[self.planned_on], payload, move_cpu_s=self.move_cpu_s)
        if not session.alive:
            opened = session.opened
            raise _failure(self.name, opened.kind, opened.error, starting=True)
        return session


def planned_on(sources: dict[str, str], use_twin: bool | str = True) -> str:
    """The code file a planning worker runs: ``twin.py`` where ``use_twin`` and the sources hold one and
    nothing that reads or builds the model's own states, else ``model.py``.

    A ``value.py`` reads the model's states, and an inference that draws states (``resample_state``) builds
    them: both keep the model. An inference that draws action histories (``resample_history``, defined by a
    top-level ``def``: ``cwm.contract.draws_histories``) reads only the seat's events, and its histories are
    replayed on the twin as they would be on the model (the twin is observationally equal to it), so it
    plans on the twin."""
    if not use_twin or "twin.py" not in sources or "value.py" in sources:
        return "model.py"
    inference = sources.get("inference.py")
    return "twin.py" if inference is None or draws_histories(inference) else "model.py"


def known_stats(found: dict[Any, Any], name: str) -> dict[str, int | float]:
    """The entries of a worker's stats that ``STATS_KEYS`` names and whose values are finite numbers (ints of
    at most 64 bits); the rest are dropped.

    Raises:
      AgentError: more entries than ``MAX_STATS_ENTRIES``, or a key that is not a string of at most
        ``MAX_STATS_KEY_CHARS`` characters (the answer was forged: the match is forfeited).
    """
    if len(found) > MAX_STATS_ENTRIES or not all(type(k) is str and len(k) <= MAX_STATS_KEY_CHARS for k in found):
        raise AgentError(f"world model {name}'s worker answered stats over their bounds ({len(found):,} entries; at "
                         f"most {MAX_STATS_ENTRIES}, keys of at most {MAX_STATS_KEY_CHARS} characters): a forged answer")
    return {k: v for k, v in found.items() if k in STATS_KEYS and (
        (type(v) is int and -(2**63) <= v < 2**63) or (type(v) is float and math.isfinite(v)))}


def refusal(name: str, refused: Any) -> AgentError:
    """The error for a worker's ``refused`` answer: its first ``MAX_REFUSED_CHARS`` characters, cleaned (the
    rest is never cleaned or copied: a hostile model's refusal may be megabytes long)."""
    text = refused[:MAX_REFUSED_CHARS] if type(refused) is str else f"a {type(refused).__name__}, not a message"
    return AgentError(f"world model {name} failed: {clean(text)}")


def _failure(name: str, kind: str, error: str, *, starting: bool = False) -> AgentError:
    where = " could not start its planning worker" if starting else "'s planning worker failed"
    # the worker's words quote the model (its exception, its output): cleaned before they reach anyone
    text = f"world model {name}{where} ({clean(kind, limit=40)}): {clean(error, limit=1500)}"
    if kind == "timeout":
        return WorkerTimeout(text)
    if kind in ("crash", "memory"):
        return WorkerCrash(text)
    return AgentError(text)
