"""A game played inside an untrusted world model (a stand-in host): ``HostGame`` drives the model in a
hardened sandbox session (``cwm.sandbox.jobs.host``) and hands out ``HostedState``s, built only from views
this side has validated.

The host model is the game: its initial state, chance outcomes, legal actions, observations and returns.
It runs only in a sandbox session child, each request under a CPU budget timed from outside; its states
never leave the child. Every view that comes back is untrusted (the model shares its process with the
code that answers) and is checked here by the contract's value rules (``cwm.value_rules``) and the real game's
facts: whose turn it is, legal strings that are actions of the game (exact ``str``, distinct, bounded),
chance outcomes that are a distribution, one canonical observation per player (bounded in size), and
returns inside the game's utility range. Anything else ends the game with a ``HostFailure``.
"""

from __future__ import annotations

import dataclasses
import functools
from typing import Any

from cwm import events as player_events
from cwm import games, value_rules
from cwm.codec import ActionCodec
from cwm.sandbox import pool
from cwm.sandbox.box import HOST_JOB, Sandbox
from cwm.text import clean
from cwm.types import CHANCE, JSON, TERMINAL, CwmError

DEFAULT_HOST_CPU_S = 2.0  # CPU seconds the host may use per request (a move applied and its view made)
MAX_VIEW_CHARS = 1_000_000  # a state's observations, written as JSON, beyond which the host fails
MAX_ACTION_CHARS = 1_000  # characters of one action string
_RETURN_TOLERANCE = 1e-9  # relative slack on the utility range (returns summed from float rewards)


class HostFailure(CwmError):
    """The host model cannot go on: it broke the contract, its worker failed or overran, or it answered
    something the rules refuse. ``kind`` is the sandbox verdict (``timeout``, ``crash``, ...), ``contract``
    or ``value``."""

    def __init__(self, kind: str, message: str):
        self.kind = clean(kind, limit=100)
        super().__init__(clean(message))


@dataclasses.dataclass(frozen=True)
class HostView:
    """One validated host state: whose turn, its legal actions or chance outcomes, every player's canonical
    observation, and the returns once the game is over."""

    player: int
    legal: tuple[str, ...]
    chance: tuple[tuple[str, float], ...]
    observations: tuple[JSON, ...]
    returns: tuple[float, ...]


@functools.lru_cache(maxsize=16)
def game_codec(game: str | games.GameSpec) -> ActionCodec:
    """The real game's action codec (the action strings it has), cached per game."""
    return ActionCodec.from_game(games.load_game(game))


def read_view(value: Any, *, num_players: int, codec: ActionCodec, utility: tuple[float, float]) -> HostView:
    """A host's answer as a ``HostView``, or ``HostFailure`` (kind ``value``) naming the first rule it breaks.

    Args:
      value: the answer, as it came back (any JSON, or worse).
      num_players: the game's number of players.
      codec: the real game's codec: every legal string and chance outcome must be an action of the game.
      utility: the game's (minimum, maximum) utility; terminal returns must lie within it.
    """
    try:
        return _read_view(value, num_players, codec, utility)
    except HostFailure:
        raise
    except (value_rules.ValueBreach, CwmError) as e:  # a breach, or an action string the game does not have
        raise HostFailure("value", f"the host answered a view the rules refuse: {e}") from None


def _read_view(value: Any, num_players: int, codec: ActionCodec, utility: tuple[float, float]) -> HostView:
    if type(value) is not dict:
        raise value_rules.ValueBreach(f"a view is an object, got {value_rules.describe(value)}")
    if "failed" in value:
        why = value["failed"]
        raise HostFailure("contract", f"the host model broke the contract: "
                                      f"{why if type(why) is str else value_rules.describe(why, 1500)}")
    player = value_rules.player(value.get("player"), num_players)
    observations = value_rules.observations(value.get("observations"), num_players)
    size = sum(len(value_rules.dumps(o)) for o in observations)
    if size > MAX_VIEW_CHARS:
        raise value_rules.ValueBreach(f"the observations take {size:,} characters as JSON, over {MAX_VIEW_CHARS:,}")
    legal: tuple[str, ...] = ()
    chance: tuple[tuple[str, float], ...] = ()
    returns: tuple[float, ...] = ()
    if player == CHANCE:
        chance = tuple(value_rules.chance_outcomes(value.get("chance")))
        _known(codec, CHANCE, [a for a, _ in chance], codec.max_chance_outcomes, "chance outcomes")
    elif player == TERMINAL:
        returns = value_rules.rewards(value.get("returns"), num_players, "the returns")
        _within(returns, utility)
    else:
        legal = tuple(value_rules.action_strings(value.get("legal")))
        _known(codec, player, list(legal), codec.num_distinct_actions, "legal actions")
    return HostView(player, legal, chance, observations, returns)


def _known(codec: ActionCodec, player: int, actions: list[str], most: int, what: str) -> None:
    """Checks that ``actions`` are a non-empty, bounded list of actions the real game has for ``player``."""
    if not actions:
        raise value_rules.ValueBreach(f"no {what} at a state that is not over")
    if len(actions) > max(most, 1):
        raise value_rules.ValueBreach(f"{len(actions):,} {what}, more than the game's {most:,}")
    for a in actions:
        if len(a) > MAX_ACTION_CHARS:
            raise value_rules.ValueBreach(f"an action string of {len(a):,} characters among the {what}")
        codec.to_id(player, a)  # ModelContractError: not an action of this game


def _within(returns: tuple[float, ...], utility: tuple[float, float]) -> None:
    lo, hi = utility
    slack = _RETURN_TOLERANCE * max(1.0, hi - lo)
    if any(not (lo - slack <= r <= hi + slack) for r in returns):
        raise value_rules.ValueBreach(f"returns {list(returns)} outside the game's utility range [{lo:g}, {hi:g}]")


class HostedState:
    """A state of a game played inside a host model, shaped like the parts of ``pyspiel.State`` that the
    match loop and the agents use. Immutable (``clone`` returns it): ``HostGame.apply`` makes the next one.

    Action ids are positions in this state's own legal list (or chance outcome list); ``moves`` holds every
    action string so far, ``movers`` who made each (``-1``: chance), and ``views`` the validated view of
    every state from the first.
    """

    def __init__(self, views: tuple[HostView, ...], moves: tuple[str, ...] = (), movers: tuple[int, ...] = ()):
        self.views, self.moves, self.movers = views, moves, movers
        self.view = views[-1]

    def current_player(self) -> int:
        return self.view.player

    def is_terminal(self) -> bool:
        return self.view.player == TERMINAL

    def is_chance_node(self) -> bool:
        return self.view.player == CHANCE

    def legal_actions(self, player: int | None = None) -> list[int]:
        if player is not None and player != self.view.player:
            return []
        return list(range(len(self.view.legal)))

    def action_to_string(self, player: int, action: int) -> str:
        actions = self.view.legal if player >= 0 else [a for a, _ in self.view.chance]
        if player != self.view.player or not 0 <= action < len(actions):
            raise ValueError(f"action {action} of player {player} is not an action of this host state")
        return actions[action]

    def chance_outcomes(self) -> list[tuple[int, float]]:
        return [(i, p) for i, (_, p) in enumerate(self.view.chance)]

    def returns(self) -> list[float]:
        return list(self.view.returns) if self.is_terminal() else [0.0] * len(self.view.observations)

    def events(self, player: int) -> list[dict[str, JSON]]:
        """``player``'s own view of the game so far, as a CWM agent's planner takes it: its observation at
        every state, and its own action where it moved (``cwm.agents.cwm.HistoryTracker.events``)."""
        out: list[dict[str, JSON]] = []
        for i, v in enumerate(self.views):
            own = i < len(self.moves) and self.movers[i] == player
            out.append(player_events.event(value_rules.thaw(v.observations[player]), self.moves[i] if own else None,
                                           final_return=v.returns[player] if v.player == TERMINAL else None))
        return out

    def clone(self) -> HostedState:
        return self

    def then(self, action: str, view: HostView) -> HostedState:
        """The state after ``action`` (by this state's player), whose validated view is ``view``."""
        return HostedState(self.views + (view,), self.moves + (action,), self.movers + (self.view.player,))


class HostGame:
    """One game inside a host model, in a sandbox session of its own (``with HostGame(...) as host``).

    Args:
      source: the host model's code (untrusted; it passes the static gate in the child).
      game: the real game, for its facts only (players, action strings, utility range); it is never played.
      name: the host's name in reasons.
      cpu_s: CPU seconds the host may use per request.
      sandbox: the sandbox to run the host in (default: one from this process's pool).
      gate: run the static gate; turned off only by tests of the layers behind it.

    Raises (``start``, ``apply``):
      HostFailure: the host could not start, broke the contract, overran, died or answered a bad view.
    """

    def __init__(self, source: str, game: games.GameSpec, *, name: str = "host",
                 cpu_s: float = DEFAULT_HOST_CPU_S, sandbox: Sandbox | None = None, gate: bool = True):
        self.source, self.spec, self.name, self.cpu_s, self.gate = source, game, name, cpu_s, gate
        gt = games.load_game(self.spec)
        self.utility = (float(gt.min_utility()), float(gt.max_utility()))
        self.num_players = int(gt.num_players())
        self.codec = game_codec(self.spec)
        self._worker = pool.Lease(sandbox)

    def start(self) -> HostedState:
        """A new game: the host's initial state."""
        self.close()
        session = self._worker.open(HOST_JOB, self.source, {"name": self.name}, move_cpu_s=self.cpu_s,
                                    gate=self.gate)
        if not session.alive:
            raise HostFailure(session.opened.kind, f"host {self.name} could not start ({session.opened.kind}): "
                                                   f"{session.opened.error}")
        return HostedState((self._ask({"op": "init"}),))

    def apply(self, state: HostedState, action: str) -> HostedState:
        """The state after ``action``, one of ``state``'s legal strings or chance outcomes."""
        return state.then(action, self._ask({"op": "apply", "action": action}))

    def _ask(self, message: JSON) -> HostView:
        session = self._worker.session
        if session is None:
            raise HostFailure("error", f"host {self.name} is not running")
        try:
            result = session.ask(message)
        except BaseException:  # an interrupt left the exchange half done
            session.abandon()
            raise
        if not result.ok:
            raise HostFailure(result.kind, f"host {self.name}'s worker failed ({result.kind}): {result.error}")
        return read_view(result.value, num_players=self.num_players, codec=self.codec, utility=self.utility)

    def close(self) -> None:
        """Ends the host's worker (if any) and returns its sandbox to the pool."""
        self._worker.close()

    def __enter__(self) -> HostGame:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

