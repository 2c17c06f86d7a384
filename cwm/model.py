"""The CWM contract: the functions a synthesized model defines, loading them, and a pyspiel.State-shaped wrapper.

A code world model is one Python module of top-level functions over a JSON-serialisable state. The
library, not the model, owns the invariants: ``ModelState`` checks legality, keeps terminal states
still, validates chance distributions and returns, and raises ``ModelContractError`` naming the call.
"""

from __future__ import annotations

import dataclasses
import re
import sys
import types
from collections.abc import Callable, Sequence
from typing import Any

from cwm.types import CHANCE, JSON, TERMINAL, ModelContractError, ModelLoadError


@dataclasses.dataclass(frozen=True)
class ContractFunction:
    """One function of the contract: its name, signature and the promise it makes."""

    name: str
    signature: str
    doc: str


# The one definition of the world-model API: the loader requires these names and the synthesis prompt
# renders them (``api_block``), so the LLM is shown exactly what the checks enforce.
WORLD_MODEL_API: tuple[ContractFunction, ...] = (
    ContractFunction(
        "get_initial_state", "get_initial_state() -> dict",
        "The state before any move (chance included). A JSON-serialisable dict."),
    ContractFunction(
        "get_current_player", "get_current_player(state: dict) -> int",
        "The player to act: 0..N-1, -1 for a chance node, -4 once the game is over."),
    ContractFunction(
        "get_legal_actions", "get_legal_actions(state: dict) -> list[str]",
        "The legal action strings in the game's own notation (as in the trajectories). At a chance "
        "node: the possible outcomes. At a terminal state: an empty list."),
    ContractFunction(
        "get_chance_outcomes", "get_chance_outcomes(state: dict) -> list[tuple[str, float]]",
        "At a chance node: every outcome string with its probability (they sum to 1). "
        "Elsewhere: an empty list."),
    ContractFunction(
        "apply_action", "apply_action(state: dict, action: str) -> dict",
        "The state after `action`, as a NEW dict. Never modify `state` or anything inside it."),
    ContractFunction(
        "get_observations", "get_observations(state: dict) -> list[dict]",
        "One observation per player (index = player id), each exactly what that player sees, in the "
        "format the trajectories show. Identical for all players in perfect-information games."),
    ContractFunction(
        "get_rewards", "get_rewards(state: dict) -> list[float]",
        "One reward per player for the move that led to `state` (at the end of the game this is where "
        "the final payoffs appear in games that pay only at the end). All zeros for the initial state."),
)

INFERENCE_API: tuple[ContractFunction, ...] = (
    ContractFunction(
        "resample_history", "resample_history(events: list[dict], player_id: int, seed: int) -> list[str]",
        "Given one player's observations and own actions so far (events: {'observation': ..., "
        "'action': str or None}), return a full action history (all players and chance) whose replay "
        "from get_initial_state() reproduces every observation and own action of that player."),
)

VALUE_API: tuple[ContractFunction, ...] = (
    ContractFunction(
        "get_value", "get_value(state: dict, player_id: int) -> float",
        "An estimate of the final return of `player_id` from `state`; the true return at terminal states."),
)

CONTRACT_VERSION = "1"


def api_block(functions: Sequence[ContractFunction] = WORLD_MODEL_API) -> str:
    """The API as Python stubs with docstrings, for prompts and documentation."""
    parts = []
    for f in functions:
        parts.append(f'def {f.signature}:\n    """{f.doc}"""\n')
    return "\n".join(parts)


# ---------------------------------------------------------------------------------------------------
# Loading


def load_source(
    source: str,
    *,
    name: str = "cwm_model",
    api: Sequence[ContractFunction] = WORLD_MODEL_API,
    gate: bool = True,
) -> types.ModuleType:
    """Executes model source into a fresh module and checks that it defines the contract.

    Args:
      source: the module's Python source.
      name: the module name (shown in tracebacks).
      api: the functions the module must define.
      gate: run the sandbox's static gate first (forbidden imports and names) and execute the module with
        the sandbox's restricted builtins (no ``open``/``eval``/``getattr``..., an ``__import__`` limited
        to the gate's allow-list). Only turn it off for trusted code such as hand-written test fixtures.

    Raises:
      ModelLoadError: syntax error, forbidden code, an exception at import, or a missing function.
    """
    if gate:
        from cwm import sandbox  # imported here: the sandbox imports checks, which import this module

        try:
            sandbox.static_gate(source)
        except ModelLoadError as e:  # name the model, as the loader's own errors do
            raise ModelLoadError(f"{name}: {e}") from e
    try:
        code = compile(source, f"<{name}>", "exec")
    except SyntaxError as e:
        raise ModelLoadError(f"{name}: syntax error at line {e.lineno}: {e.msg}") from e
    module = types.ModuleType(name)
    module.__dict__["__source__"] = source
    if gate:  # the same restricted builtins and guarded __import__ as in a sandbox child
        from cwm._sandbox_layers import restricted_builtins

        module.__dict__["__builtins__"] = restricted_builtins()
    # Class decorators such as @dataclass look the module up in sys.modules while the class is built;
    # it is listed there only while the module body runs, and never over a module of that name.
    listed = name not in sys.modules
    if listed:
        sys.modules[name] = module
    try:
        exec(code, module.__dict__)
    except Exception as e:  # the model's own import-time error; report it as a load failure
        raise ModelLoadError(f"{name}: running the module raised {type(e).__name__}: {e}") from e
    finally:
        if listed:
            sys.modules.pop(name, None)
    missing = [f.name for f in api if not callable(module.__dict__.get(f.name))]
    if missing:
        raise ModelLoadError(f"{name}: missing contract function(s): {', '.join(missing)}")
    return module


# ---------------------------------------------------------------------------------------------------
# Action ids


class ActionCodec:
    """Maps action strings to OpenSpiel integer ids and back, per player (chance is player -1).

    Built from the ground-truth game by enumerating ``action_to_string`` on its initial state. Games
    whose action strings depend on the state (backgammon) carry the id (``"83 - 6/4/3*"``,
    ``"chance outcome 19 ..."``); such strings are decoded from it.
    """

    # OpenSpiel's conventions for strings that depend on the state: "<id> - <move>" and "chance outcome <id> ...".
    _PREFIX = re.compile(r"^(?:(\d+) - |chance outcome (\d+)\b)")

    def __init__(self, table: dict[tuple[int, str], int], *, num_distinct_actions: int, max_chance_outcomes: int):
        self._to_id = dict(table)
        self._to_str = {(p, a): s for (p, s), a in table.items()}
        self.num_distinct_actions = num_distinct_actions
        self.max_chance_outcomes = max_chance_outcomes

    @classmethod
    def from_game(cls, game: Any, *, explore_games: int = 3, seed: int = 0) -> ActionCodec:
        """Enumerates ``action_to_string`` on the initial state, then adds the strings met in a few random
        games (for actions whose strings only exist in later states, like backgammon's ``Pass``)."""
        import numpy as np

        state = game.new_initial_state()
        table: dict[tuple[int, str], int] = {}
        ranges = [(p, game.num_distinct_actions()) for p in range(game.num_players())]
        ranges.append((CHANCE, game.max_chance_outcomes()))
        from cwm.games import quiet_stderr

        with quiet_stderr():
            for player, count in ranges:
                for a in range(count):
                    try:
                        table[(player, state.action_to_string(player, a))] = a
                    except Exception:  # state-dependent strings (no dice yet, ...): learnt by exploring below
                        break
        rng = np.random.default_rng(seed)
        for _ in range(explore_games):
            state = game.new_initial_state()
            while not state.is_terminal():
                player = state.current_player()
                actions = [a for a, _ in state.chance_outcomes()] if player == CHANCE else state.legal_actions()
                for a in actions:
                    table.setdefault((player, state.action_to_string(player, a)), int(a))
                state.apply_action(actions[rng.integers(len(actions))])
        return cls(
            table, num_distinct_actions=game.num_distinct_actions(), max_chance_outcomes=game.max_chance_outcomes()
        )

    def to_id(self, player: int, action: str) -> int:
        found = self._to_id.get((player, action))
        if found is not None:
            return found
        m = self._PREFIX.match(action)
        if m:
            return int(m.group(1) or m.group(2))
        who = "chance" if player == CHANCE else f"player {player}"
        raise ModelContractError(f"action {action!r} of {who} is not an action of this game")

    def to_string(self, player: int, action: int) -> str:
        found = self._to_str.get((player, action))
        if found is None:
            raise ModelContractError(f"action id {action} of player {player} has no known string")
        return found


class OpenCodec(ActionCodec):
    """A codec for models without a ground truth: ids are handed out in order of first appearance."""

    def __init__(self) -> None:
        super().__init__({}, num_distinct_actions=0, max_chance_outcomes=0)

    def to_id(self, player: int, action: str) -> int:
        key = (player, action)
        if key not in self._to_id:
            new_id = sum(1 for (p, _) in self._to_id if p == player)
            self._to_id[key] = new_id
            self._to_str[(player, new_id)] = action
            if player == CHANCE:
                self.max_chance_outcomes = max(self.max_chance_outcomes, new_id + 1)
            else:
                self.num_distinct_actions = max(self.num_distinct_actions, new_id + 1)
        return self._to_id[key]


# ---------------------------------------------------------------------------------------------------
# The wrapper

Guard = Callable[..., Any]  # guard(fn, *args) -> fn(*args), possibly under a time budget

# What a model call may raise that counts as the model's own failure: every Exception, plus the built-in
# BaseExceptions a model can raise itself (``exit()``, ``raise KeyboardInterrupt``, a closed generator).
# Without them a model calling ``exit(0)`` in get_rewards would end `cwm check` with status 0 and no report.
# The cost: a real Ctrl-C that lands inside a model call is scored as that call failing; one landing
# between calls (where the library's own code runs) still stops the program. Other BaseExceptions (the
# sandbox's timeout and verdict signals) pass through untouched.
MODEL_ERRORS: tuple[type[BaseException], ...] = (Exception, SystemExit, KeyboardInterrupt, GeneratorExit)


def direct_guard(fn: Callable[..., Any], *args: Any) -> Any:
    """The default guard: call the function as it is (no time budget)."""
    return fn(*args)


class WorldModel:
    """A model (module or any object with the contract functions) plus its action codec.

    Args:
      functions: the module or object defining ``WORLD_MODEL_API``.
      codec: maps action strings to ids; an ``OpenCodec`` when there is no ground truth.
      name: shown in errors.
      guard: runs every model call; the sandbox supplies one with a per-call time budget.
    """

    def __init__(
        self, functions: Any, *, codec: ActionCodec | None = None, name: str = "model", guard: Guard = direct_guard
    ):
        self.functions = functions
        self.codec = codec or OpenCodec()
        self.name = name
        self.guard = guard
        self._fns = {f.name: getattr(functions, f.name) for f in WORLD_MODEL_API}
        self._num_players: int | None = None

    def call(self, fn_name: str, *args: Any, step: int | None = None) -> Any:
        """Calls one contract function; any exception becomes a ``ModelContractError`` naming the call (and
        ``step``, the number of actions taken so far, when the caller knows it)."""
        try:
            return self.guard(self._fns[fn_name], *args)
        except ModelContractError:
            raise
        except MODEL_ERRORS as e:  # the model's bug, reported as a contract breach with the call named
            where = "" if step is None else f"step {step}: "
            raise ModelContractError(f"{self.name}: {where}{fn_name}(...) raised {type(e).__name__}: {e}") from e

    @property
    def num_players(self) -> int:
        if self._num_players is None:
            obs = self.call("get_observations", self.call("get_initial_state"))
            if not isinstance(obs, list) or not obs:
                raise ModelContractError(f"{self.name}: get_observations(initial) must return a non-empty list")
            self._num_players = len(obs)
        return self._num_players

    def new_initial_state(self) -> ModelState:
        return ModelState(self, self.call("get_initial_state"))


class ModelState:
    """A model state shaped like ``pyspiel.State``; states are shared, never copied (the contract forbids
    mutation, and the checks enforce it)."""

    __slots__ = ("model", "raw", "_history", "_returns", "_rewards", "_player", "_legal", "_by_id", "_parent")

    def __init__(self, model: WorldModel, raw: JSON, *, history: tuple[int, ...] = (), returns: tuple[float, ...] = (),
                 rewards: tuple[float, ...] = (), parent: ModelState | None = None):
        self.model = model
        self.raw = raw
        self._history = history
        self._returns = returns or (0.0,) * model.num_players
        self._rewards = rewards or (0.0,) * model.num_players
        self._player: int | None = None
        self._legal: list[str] | None = None
        self._by_id: dict[int, str] | None = None  # this state's legal ids -> their strings, built once
        self._parent = parent

    # -- errors -------------------------------------------------------------------------------------
    def _breach(self, what: str) -> ModelContractError:
        """A contract breach at this state, naming the model and the step (actions taken so far)."""
        return ModelContractError(f"{self.model.name}: step {len(self._history)}: {what}")

    # -- queries ------------------------------------------------------------------------------------
    def current_player(self) -> int:
        if self._player is None:
            p = self.model.call("get_current_player", self.raw, step=len(self._history))
            if isinstance(p, bool) or not isinstance(p, int) or not (p in (CHANCE, TERMINAL) or 0 <= p < self.num_players()):
                raise self._breach(f"get_current_player returned {p!r}; "
                                   f"expected 0..{self.num_players() - 1}, -1 or -4")
            self._player = p
        return self._player

    def num_players(self) -> int:
        return self.model.num_players

    def is_terminal(self) -> bool:
        return self.current_player() == TERMINAL

    def is_chance_node(self) -> bool:
        return self.current_player() == CHANCE

    def is_player_node(self) -> bool:
        return self.current_player() >= 0

    def is_simultaneous_node(self) -> bool:
        return False

    def legal_action_strings(self) -> list[str]:
        if self._legal is None:
            if self.is_terminal():
                self._legal = []
            else:
                legal = self.model.call("get_legal_actions", self.raw, step=len(self._history))
                if not isinstance(legal, list) or not all(isinstance(a, str) for a in legal):
                    raise self._breach(f"get_legal_actions must return a list of str, got {legal!r:.200}")
                if not legal:
                    raise self._breach(f"no legal actions at a non-terminal state (history {self.history_strings()})")
                self._legal = legal
        return self._legal

    def legal_actions(self, player: int | None = None) -> list[int]:
        p = self.current_player()
        if player is not None and player != p:
            return []
        if p >= 0:  # one pass over the strings serves both this list and child(id)
            return list(self._strings_by_id())
        return self._to_ids(p, self.legal_action_strings())

    def _to_ids(self, player: int, strings: Sequence[str]) -> list[int]:
        to_id = self.model.codec.to_id
        try:
            return [to_id(player, s) for s in strings]
        except ModelContractError as e:  # a string the game does not know: say which model and step
            raise self._breach(str(e)) from e

    def _strings_by_id(self) -> dict[int, str]:
        """This state's own legal (or chance) action ids mapped to their strings, cached on the state.

        An id is decoded here rather than by the codec's global table because in some games (backgammon)
        the string of an id depends on the state: id 25 is "chance outcome 25 (roll: 54)" after the first
        roll and "... O starts ..." before it.
        """
        if self._by_id is None:
            p = self.current_player()
            strings = [a for a, _ in self.chance_outcome_strings()] if p == CHANCE else self.legal_action_strings()
            self._by_id = dict(zip(self._to_ids(p, strings), strings))
        return self._by_id

    def chance_outcome_strings(self) -> list[tuple[str, float]]:
        if not self.is_chance_node():
            return []
        outcomes = self.model.call("get_chance_outcomes", self.raw, step=len(self._history))
        try:
            pairs = [(str(a), float(p)) for a, p in outcomes]
        except (TypeError, ValueError) as e:
            raise self._breach(f"get_chance_outcomes must return (action, probability) pairs, "
                               f"got {outcomes!r:.200}") from e
        total = sum(p for _, p in pairs)
        if not pairs or abs(total - 1.0) > 1e-6 or any(p < 0 for _, p in pairs):
            raise self._breach(f"chance probabilities must be >= 0 and sum to 1, "
                               f"got sum {total} over {len(pairs)} outcomes")
        return pairs

    def chance_outcomes(self) -> list[tuple[int, float]]:
        pairs = self.chance_outcome_strings()
        return list(zip(self._to_ids(CHANCE, [a for a, _ in pairs]), [p for _, p in pairs]))

    def rewards(self) -> list[float]:
        return list(self._rewards)

    def returns(self) -> list[float]:
        return list(self._returns)

    def player_return(self, player: int) -> float:
        return self._returns[player]

    def observation(self, player: int) -> JSON:
        obs = self.model.call("get_observations", self.raw, step=len(self._history))
        if not isinstance(obs, list) or len(obs) != self.num_players():
            raise self._breach(f"get_observations must return one observation per player ({self.num_players()}), "
                               f"got {obs!r:.200}")
        return obs[player]

    def observation_string(self, player: int) -> str:
        import json

        return json.dumps(self.observation(player), sort_keys=True)

    def information_state_string(self, player: int) -> str:
        """The player's observations at every state so far and its own actions: its information set."""
        import json

        chain: list[ModelState] = []
        node: ModelState | None = self
        while node is not None:
            chain.append(node)
            node = node._parent
        chain.reverse()
        events = []
        for i, st in enumerate(chain):
            own = None
            if i + 1 < len(chain) and st.current_player() == player:
                own = chain[i + 1]._history[-1]
            events.append([st.observation(player), own])
        return json.dumps(events, sort_keys=True)

    def history(self) -> list[int]:
        return list(self._history)

    def history_strings(self) -> list[str]:
        chain, node = [], self
        while node._parent is not None:
            parent = node._parent
            chain.append(parent.action_to_string(parent.current_player(), node._history[-1]))
            node = parent
        return chain[::-1]

    def action_to_string(self, player: int, action: int) -> str:
        """The string of ``action``: this state's own string when ``player`` moves here, else the codec's."""
        if player == self.current_player() and player != TERMINAL:
            found = self._strings_by_id().get(action)
            if found is not None:
                return found
        return self.model.codec.to_string(player, action)

    def string_to_action(self, action: str) -> int:
        return self.model.codec.to_id(self.current_player(), action)

    # -- moves --------------------------------------------------------------------------------------
    def child(self, action: int) -> ModelState:
        """The state after ``action`` (an OpenSpiel id); this state is unchanged."""
        player = self.current_player()
        if player == TERMINAL:
            raise self._breach(f"apply_action(id {action}) at a terminal state")
        found = self._strings_by_id().get(action)
        if found is None:
            raise self._breach(f"action id {action} is not legal here; legal ids: {sorted(self._strings_by_id())[:20]}")
        return self._advance(player, found, action)

    def child_from_string(self, action: str, *, action_id: int | None = None) -> ModelState:
        player = self.current_player()
        if player == TERMINAL:
            raise self._breach(f"apply_action({action!r}) at a terminal state")
        legal = (
            [a for a, _ in self.chance_outcome_strings()] if player == CHANCE else self.legal_action_strings()
        )
        if action not in legal:
            raise self._breach(f"action {action!r} is not legal here; legal: {legal[:20]}")
        return self._advance(player, action, action_id)

    def _advance(self, player: int, action: str, action_id: int | None) -> ModelState:
        """Applies a legal ``action`` and wraps the result with its rewards and returns."""
        nxt = self.model.call("apply_action", self.raw, action, step=len(self._history))
        if nxt is self.raw:
            raise self._breach("apply_action returned its input state object; it must return a new state")
        aid = self.model.codec.to_id(player, action) if action_id is None else action_id
        rewards = self.model.call("get_rewards", nxt, step=len(self._history))
        try:
            if not isinstance(rewards, list) or len(rewards) != self.num_players():
                raise TypeError("not a list of the right length")
            rewards_t = tuple(map(float, rewards))
        except (TypeError, ValueError) as e:  # None, "win", [1, 2] ...: name the call, not float()
            raise self._breach(f"get_rewards (after {action!r}) must return a list of {self.num_players()} "
                               f"numbers, got {rewards!r:.200}") from e
        returns = tuple(a + b for a, b in zip(self._returns, rewards_t))
        return ModelState(self.model, nxt, history=self._history + (aid,), returns=returns,
                          rewards=rewards_t, parent=self)

    def apply_action(self, action: int) -> None:
        """OpenSpiel-style in-place move: this wrapper now points at the next state (no state is mutated)."""
        nxt = self.child(action)
        self._become(nxt)

    def apply_action_string(self, action: str) -> None:
        self._become(self.child_from_string(action))

    def _become(self, nxt: ModelState) -> None:
        parent = ModelState(self.model, self.raw, history=self._history, returns=self._returns,
                            rewards=self._rewards, parent=self._parent)
        parent._player, parent._legal, parent._by_id = self._player, self._legal, self._by_id
        self.raw, self._history, self._returns, self._rewards = nxt.raw, nxt._history, nxt._returns, nxt._rewards
        self._player, self._legal, self._by_id, self._parent = None, None, None, parent

    def clone(self) -> ModelState:
        twin = ModelState(self.model, self.raw, history=self._history, returns=self._returns,
                          rewards=self._rewards, parent=self._parent)
        twin._player, twin._legal, twin._by_id = self._player, self._legal, self._by_id
        return twin

    def __deepcopy__(self, memo: dict[int, Any]) -> ModelState:
        # Model states are never mutated, so a "deep" copy may share them (OpenSpiel clones Python
        # states by deep-copying their attributes).
        return self.clone()

    def __str__(self) -> str:
        return repr(self.raw)
