"""``ModelState``: a state of a world model, shaped like ``pyspiel.State``, that enforces the contract.

The library, not the model, owns the invariants: a state checks legality, keeps terminal states still,
applies the contract's value rules (``cwm.value_rules``) to every answer, and raises ``ModelContractError``
naming the model, the step and the rule. States are shared between tree nodes, never copied: each is
read-only, so no model function can change one another state depends on.
"""

from __future__ import annotations

import operator
from collections.abc import Callable
from typing import TYPE_CHECKING, Any, TypeVar

from cwm import json_values, value_rules
from cwm.types import CHANCE, JSON, TERMINAL, ModelContractError

if TYPE_CHECKING:
    from cwm.model import WorldModel

T = TypeVar("T")
DECODED_LIMIT = 4096  # action lists a WorldModel remembers decoded (WorldModel.decoded): a few MB at most
_STR = frozenset({str})
_FLOAT = {float}
_new_state = object.__new__

# What a model call may raise that counts as the model's own failure: every Exception, plus the built-in
# BaseExceptions a model can raise itself (``exit()``, ``raise KeyboardInterrupt``, a closed generator).
# Without them a model calling ``exit(0)`` in get_rewards would end `cwm check` with status 0 and no report.
# The cost: a real Ctrl-C that lands inside a model call is scored as that call failing; one landing
# between calls (where the library's own code runs) still stops the program. Other BaseExceptions (the
# sandbox's timeout and verdict signals) pass through untouched, and ``WorldModel.call`` lets a
# ``MemoryError`` (the memory limit) through too: a planning worker that runs out of memory says so.
MODEL_ERRORS: tuple[type[BaseException], ...] = (Exception, SystemExit, KeyboardInterrupt, GeneratorExit)
_READ_ONLY_DICT = value_rules.ReadOnlyDict
_exact_dict_state = json_values.exact_dict_state
_DICT_LEN = dict.__len__


class ModelState:
    """A model state shaped like ``pyspiel.State``; states are shared, never copied: each is read-only
    (``cwm.value_rules.state``), so no model function can change one another state depends on.

    Every value the model returns goes through the contract's value rules (``cwm.value_rules``) before it is
    used: a breach raises ``ModelContractError`` naming the model, the step and the rule.
    """

    __slots__ = ("model", "raw", "_history", "_returns", "_rewards", "_player", "_legal", "_by_id", "_parent",
                 "_action", "_chance", "_obs", "_keys")

    def __init__(self, model: WorldModel, raw: JSON, *, history: tuple[int, ...] = (), returns: tuple[float, ...] = (),
                 rewards: tuple[float, ...] = (), parent: ModelState | None = None, action: str = ""):
        self.model = model
        self.raw = raw
        self._history = history
        self._returns = returns or (0.0,) * model.num_players
        self._rewards = rewards or (0.0,) * model.num_players
        self._player: int | None = None
        self._legal: list[str] | None = None
        self._by_id: dict[int, str] | None = None  # this state's legal ids -> their strings, built once
        self._parent = parent
        self._action = action  # the string of the move that led here (empty at the initial state)
        self._chance: list[tuple[str, float]] | None = None
        self._obs: tuple[JSON, ...] | None = None  # every player's canonical observation, made once
        self._keys: dict[int, bytes] | None = None  # player -> information-state key (value_rules.InfoKey)

    @classmethod
    def drawn(cls, model: WorldModel, raw: JSON, player: int, key: bytes) -> ModelState:
        """A state a hidden-state sampler drew for ``player``'s information set ``key`` (its information key
        in the real game): the search cannot see how the state came about, so the player's key is taken as
        given, the other players' start here, and the returns so far count as zero."""
        state = cls(model, raw)
        state._keys = {player: key}
        return state

    # -- errors -------------------------------------------------------------------------------------
    def _breach(self, what: str) -> ModelContractError:
        """A contract breach at this state, naming the model and the step (actions taken so far)."""
        return ModelContractError(f"{self.model.name}: step {len(self._history)}: {what}")

    def _rule(self, rule: Callable[..., T], *args: Any) -> T:
        """``rule(*args)`` of ``cwm.value_rules``; a broken rule is a contract breach at this state."""
        try:
            return rule(*args)
        except value_rules.ValueBreach as e:
            raise self._breach(str(e)) from None

    # -- queries ------------------------------------------------------------------------------------
    def current_player(self) -> int:
        p = self._player
        if p is None:
            model, raw = self.model, self.raw
            try:  # model.call's work, inline (a state asks each question once, on the hot path of every search)
                p = model.bound["get_current_player"](raw)
                if type(raw) is not _READ_ONLY_DICT or _DICT_LEN(raw) != 1:
                    value_rules.untouched(raw)
            except MemoryError:
                raise
            except MODEL_ERRORS as e:
                raise model.failure("get_current_player", e, len(self._history))  # noqa: B904 (cause set there)
            if type(p) is not int or not (p in (CHANCE, TERMINAL) or 0 <= p < self.model.num_players):
                p = self._rule(value_rules.player, p, self.model.num_players)
            self._player = p
        return p

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
        legal = self._legal
        if legal is None:
            if self.current_player() == TERMINAL:
                legal = []
            else:
                legal = self.model.call("get_legal_actions", self.raw, step=len(self._history))
                if type(legal) is not list or not set(map(type, legal)) <= _STR or len(set(legal)) != len(legal):
                    legal = self._rule(value_rules.action_strings, legal)
                if not legal:
                    raise self._breach(f"no legal actions at a non-terminal state (history {self.history_strings()})")
            self._legal = legal
        return legal

    def legal_actions(self, player: int | None = None) -> list[int]:
        p = self.current_player()
        if player is not None and player != p:
            return []
        if p >= 0:  # one pass over the strings serves both this list and child(id)
            return list(self._strings_by_id())
        return self._to_ids(p, self.legal_action_strings())

    def _to_ids(self, player: int, strings: list[str]) -> list[int]:
        try:
            return self.model.codec.to_ids(player, strings)
        except ModelContractError as e:  # a string the game does not know: say which model and step
            raise self._breach(str(e)) from e

    def _strings_by_id(self) -> dict[int, str]:
        """This state's own legal (or chance) action ids mapped to their strings, cached on the state.

        An id is decoded here rather than by the codec's global table because in some games (backgammon)
        the string of an id depends on the state: id 25 is "chance outcome 25 (roll: 54)" after the first
        roll and "... O starts ..." before it.
        """
        by_id = self._by_id
        if by_id is None:
            p = self.current_player()
            strings = [a for a, _ in self.chance_outcome_strings()] if p == CHANCE else self.legal_action_strings()
            memo, key = self.model.decoded, (p, tuple(strings))
            by_id = memo.get(key)
            if by_id is None:  # the same action lists recur across states: decode each once (read-only dicts)
                by_id = dict(zip(self._to_ids(p, strings), strings))
                if len(by_id) != len(strings):
                    raise self._breach(f"two of the actions {strings[:20]} decode to the same action id")
                if len(memo) >= DECODED_LIMIT:
                    memo.clear()
                memo[key] = by_id
            self._by_id = by_id
        return by_id

    def chance_outcome_strings(self) -> list[tuple[str, float]]:
        if not self.is_chance_node():
            return []
        pairs = self._chance
        if pairs is None:
            outcomes = self.model.call("get_chance_outcomes", self.raw, step=len(self._history))
            pairs = self._rule(value_rules.chance_outcomes, outcomes)
            if not pairs:
                raise self._breach("get_chance_outcomes returned no outcomes at a chance node")
            self._chance = pairs
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

    def observations(self) -> tuple[JSON, ...]:
        """Every player's observation of this state, canonical (``cwm.value_rules.canonical``), made once."""
        obs = self._obs
        if obs is None:
            got = self.model.call("get_observations", self.raw, step=len(self._history))
            obs = self._obs = self._rule(value_rules.observations, got, self.num_players())
        return obs

    def observation(self, player: int) -> JSON:
        return self.observations()[player]

    def observation_string(self, player: int) -> str:
        return value_rules.dumps(self.observation(player))  # canonical observations can always be written

    def information_state_string(self, player: int) -> str:
        """The player's information set: its observation at every state so far and its own actions, as the
        one encoding ``cwm.value_rules.InfoKey`` defines (agents build the same key from the real game)."""
        return self.information_key(player).hex()

    def information_key(self, player: int) -> bytes:
        """``information_state_string`` as bytes; extends the parent's key by one step (no replay)."""
        pending: list[ModelState] = []
        node: ModelState | None = self
        while node is not None and (node._keys is None or player not in node._keys):
            pending.append(node)
            node = node._parent
        key = value_rules.InfoKey.START if node is None else node._keys[player]  # type: ignore[index]
        for st in reversed(pending):
            parent = st._parent
            if parent is not None and parent.current_player() == player:
                key = value_rules.InfoKey.act(key, st._action)
            key = value_rules.InfoKey.observe(key, st.observation(player))
            if st._keys is None:
                st._keys = {}
            st._keys[player] = key
        return key

    def history(self) -> list[int]:
        return list(self._history)

    def history_strings(self) -> list[str]:
        chain, node = [], self
        while node._parent is not None:
            chain.append(node._action)
            node = node._parent
        return chain[::-1]

    def action_to_string(self, player: int, action: int) -> str:
        """The string of ``action``: this state's own string when ``player`` moves here, else the codec's."""
        if player == self.current_player() and player != TERMINAL:
            found = self._strings_by_id().get(action)
            if found is not None:
                return found
        return self.model.codec.to_string(player, action)

    def string_to_action(self, action: str) -> int:
        player = self.current_player()
        if player != TERMINAL:
            for aid, text in self._strings_by_id().items():
                if text == action:
                    return aid
        return self.model.codec.to_id(player, action)

    # -- moves --------------------------------------------------------------------------------------
    def child(self, action: int) -> ModelState:
        """The state after ``action`` (an OpenSpiel id); this state is unchanged."""
        player = self._player  # the cached answers read inline (a search asks for a child at every expansion)
        if player is None:
            player = self.current_player()
        if player == TERMINAL:
            raise self._breach(f"apply_action(id {action}) at a terminal state")
        by_id = self._by_id
        found = (self._strings_by_id() if by_id is None else by_id).get(action)
        if found is None:
            raise self._breach(f"action id {action} is not legal here; legal ids: {sorted(self._strings_by_id())[:20]}")
        return self._advance(player, found, action)

    def child_from_string(self, action: str, *, action_id: int | None = None) -> ModelState:
        player = self.current_player()
        if player == TERMINAL:
            raise self._breach(f"apply_action({action!r}) at a terminal state")
        if type(action) is not str:
            action = self._rule(value_rules.action_strings, [action], "an action")[0]
        legal = (
            [a for a, _ in self.chance_outcome_strings()] if player == CHANCE else self.legal_action_strings()
        )
        if action not in legal:
            raise self._breach(f"action {action!r} is not legal here; legal: {legal[:20]}")
        return self._advance(player, action, action_id)

    def _advance(self, player: int, action: str, action_id: int | None) -> ModelState:
        """Applies a legal ``action`` and wraps the result with its rewards and returns."""
        model, raw = self.model, self.raw
        fns = model.bound
        # model.call's work, inline: each call's exception named as call names it, its read-only input checked
        try:
            nxt = fns["apply_action"](raw, action)
            if type(raw) is not _READ_ONLY_DICT or _DICT_LEN(raw) != 1:
                value_rules.untouched(raw)
        except MemoryError:
            raise
        except MODEL_ERRORS as e:
            raise model.failure("apply_action", e, len(self._history))  # noqa: B904 (cause set there)
        if nxt is raw:
            raise self._breach("apply_action returned its input state object; it must return a new state")
        try:
            nxt = _exact_dict_state(nxt) if type(nxt) is dict else value_rules.state(nxt)
        except value_rules.ValueBreach as e:
            raise self._breach(str(e)) from None
        aid = self._id_of(action) if action_id is None else action_id
        try:
            got = fns["get_rewards"](nxt)
            if _DICT_LEN(nxt) != 1:  # nxt is a read-only dict (just frozen)
                value_rules.untouched(nxt)
        except MemoryError:
            raise
        except MODEL_ERRORS as e:
            raise model.failure("get_rewards", e, len(self._history))  # noqa: B904 (cause set there)
        returns = self._returns
        last = model.last_rewards  # the last rewards that passed, as the model's own items and as checked
        if (type(got) is list and len(got) == len(returns) == len(last[0])
                and all(map(operator.is_, got, last[0]))):
            rewards = last[1]  # the very same exact numbers (immutable) as a list that passed: nothing to check
        elif type(got) is list and len(got) == len(returns) and value_rules.finite_numbers(got):
            rewards = tuple(got) if set(map(type, got)) == _FLOAT else tuple(map(float, got))
            model.last_rewards = (tuple(got), rewards)
        else:
            rewards = self._rule(value_rules.rewards, got, len(returns), f"get_rewards (after {action!r})")
        if any(rewards):  # most moves pay nothing: the returns are shared then
            returns = tuple([a + b for a, b in zip(returns, rewards)])
        child = _new_state(ModelState)  # ModelState(...) without its defaults: every field is set here
        child.model, child.raw, child._history, child._returns, child._rewards = (
            model, nxt, self._history + (aid,), returns, rewards)
        child._player = child._legal = child._by_id = child._chance = child._obs = child._keys = None
        child._parent, child._action = self, action
        return child

    def _id_of(self, action: str) -> int:
        for aid, text in self._strings_by_id().items():
            if text == action:
                return aid
        raise self._breach(f"action {action!r} has no action id here")

    def apply_action(self, action: int) -> None:
        """OpenSpiel-style in-place move: this wrapper now points at the next state (no state is mutated)."""
        nxt = self.child(action)
        self._become(nxt)

    def apply_action_string(self, action: str) -> None:
        self._become(self.child_from_string(action))

    def _copy_of(self, *, parent: ModelState | None) -> ModelState:
        twin = ModelState(self.model, self.raw, history=self._history, returns=self._returns,
                          rewards=self._rewards, parent=parent, action=self._action)
        twin._player, twin._legal, twin._by_id = self._player, self._legal, self._by_id
        twin._chance, twin._obs, twin._keys = self._chance, self._obs, self._keys
        return twin

    def _become(self, nxt: ModelState) -> None:
        parent = self._copy_of(parent=self._parent)
        self.raw, self._history, self._returns, self._rewards = nxt.raw, nxt._history, nxt._returns, nxt._rewards
        self._player, self._legal, self._by_id, self._parent = None, None, None, parent
        self._action, self._chance, self._obs, self._keys = nxt._action, None, None, None

    def clone(self) -> ModelState:
        return self._copy_of(parent=self._parent)

    def __deepcopy__(self, memo: dict[int, Any]) -> ModelState:
        # Model states are never mutated, so a "deep" copy may share them (OpenSpiel clones Python
        # states by deep-copying their attributes).
        return self.clone()

    def __str__(self) -> str:
        try:
            return value_rules.dumps(value_rules.canonical(self.raw))
        except value_rules.ValueBreach:
            return f"<model state of {self.model.name}>"
