"""Action ids: a model speaks action strings; OpenSpiel speaks integer ids. ``ActionCodec`` maps between them."""

from __future__ import annotations

import re
from collections.abc import Container
from typing import Any

from cwm.files import quiet_stderr
from cwm.types import CHANCE, JSON, ModelContractError


class ActionCodec:
    """Maps action strings to OpenSpiel integer ids and back, per player (chance is player -1).

    Built from the ground-truth game by enumerating ``action_to_string`` on its initial state. Games
    whose action strings depend on the state (backgammon) carry the id (``"83 - 6/4/3*"``,
    ``"chance outcome 19 ..."``); such strings are decoded from it.
    """

    # OpenSpiel's conventions for strings that depend on the state: "<id> - <move>" and "chance outcome <id> ...".
    # At most 9 digits: no game has a billion actions, and int() refuses strings of over 4,300 digits.
    _PREFIX = re.compile(r"^(?:(\d{1,9}) - |chance outcome (\d{1,9})\b)")

    def __init__(self, table: dict[tuple[int, str], int], *, num_distinct_actions: int, max_chance_outcomes: int,
                 prefixed: bool | None = None):
        self._to_id = dict(table)
        self._to_str = {(p, a): s for (p, s), a in table.items()}
        self.num_distinct_actions = num_distinct_actions
        self.max_chance_outcomes = max_chance_outcomes
        # Only a game whose own strings carry their id (backgammon) decodes unknown strings by that id.
        self.prefixed = any(self._PREFIX.match(s) for (_, s) in table) if prefixed is None else prefixed
        if self.prefixed:  # then a string names its id (``name`` relies on it: one name, one id)
            wrong = next(((p, s, a) for (p, s), a in table.items()
                          if (m := self._PREFIX.match(s)) and int(m.group(1) or m.group(2)) != a), None)
            if wrong is not None:
                raise ValueError(f"codec: the string {wrong[1]!r} of player {wrong[0]} carries another id "
                                 f"than its own ({wrong[2]})")

    def knows(self) -> Container[tuple[int, str]]:
        """The ``(player, string)`` pairs the codec holds (a membership test for the hot loops: a pair not in
        it may still decode, through ``to_id``)."""
        return self._to_id.keys()

    def to_table(self) -> list[list[JSON]]:
        """The table as JSON rows ``[player, string, id]`` (``from_table`` reads it back)."""
        return [[p, s, a] for (p, s), a in self._to_id.items()]

    @classmethod
    def from_table(cls, rows: list[list[JSON]], *, num_distinct_actions: int, max_chance_outcomes: int,
                   prefixed: bool) -> ActionCodec:
        """A codec from ``to_table`` rows (sent to planning workers, which have no ground truth)."""
        table = {(int(p), str(s)): int(a) for p, s, a in rows}
        return cls(table, num_distinct_actions=num_distinct_actions, max_chance_outcomes=max_chance_outcomes,
                   prefixed=prefixed)

    def to_json(self) -> dict[str, JSON]:
        """The whole codec as JSON (``from_json`` reads it back): what a worker, which has no ground truth, needs."""
        return {"table": self.to_table(), "num_distinct_actions": self.num_distinct_actions,
                "max_chance_outcomes": self.max_chance_outcomes, "prefixed": self.prefixed}

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> ActionCodec:
        """The codec ``to_json`` wrote."""
        return cls.from_table(data["table"], num_distinct_actions=data["num_distinct_actions"],
                              max_chance_outcomes=data["max_chance_outcomes"], prefixed=data["prefixed"])

    @classmethod
    def from_game(cls, game: Any, *, explore_games: int = 3, seed: int = 0) -> ActionCodec:
        """Enumerates ``action_to_string`` on the initial state, then adds the strings met in a few random
        games (for actions whose strings only exist in later states, like backgammon's ``Pass``)."""
        import numpy as np

        state = game.new_initial_state()
        table: dict[tuple[int, str], int] = {}
        ranges = [(p, game.num_distinct_actions()) for p in range(game.num_players())]
        ranges.append((CHANCE, game.max_chance_outcomes()))
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
        """The id of ``action`` for ``player`` (``CHANCE`` for chance outcomes).

        Raises:
          ModelContractError: a string the game does not have, or one whose id prefix is out of the game's
            range of ids.
        """
        found = self._to_id.get((player, action))
        if found is not None:
            return found
        m = self._PREFIX.match(action) if self.prefixed else None
        if m:
            aid = int(m.group(1) or m.group(2))
            limit = self.max_chance_outcomes if player == CHANCE else self.num_distinct_actions
            if aid < limit:
                return aid
        who = "chance" if player == CHANCE else f"player {player}"
        raise ModelContractError(f"action {action!r} of {who} is not an action of this game")

    def to_ids(self, player: int, actions: list[str]) -> list[int]:
        """``to_id`` of each string (one table pass; the planners' hot path)."""
        get = self._to_id.get
        ids = [get((player, a)) for a in actions]
        if None in ids:
            return [self.to_id(player, a) for a in actions]
        return ids  # type: ignore[return-value]

    def to_string(self, player: int, action: int) -> str:
        found = self._to_str.get((player, action))
        if found is None:
            raise ModelContractError(f"action id {action} of player {player} has no known string")
        return found

    def name(self, player: int, action: int) -> str:
        """One string for id ``action``, the same wherever the game gives the id several (the name a JAX twin's
        check compares): the codec's string for it, or, in a game whose strings carry their id (backgammon),
        ``"<id> - ..."`` (``"chance outcome <id>"``) for an id in the game's range that the codec has not met.

        Raises:
          ModelContractError: an id with no string, in a game whose strings do not carry it or out of range.
        """
        found = self._to_str.get((player, action))
        if found is not None:
            return found
        limit = self.max_chance_outcomes if player == CHANCE else self.num_distinct_actions
        if self.prefixed and 0 <= action < limit:
            return f"chance outcome {action}" if player == CHANCE else f"{action} - ..."
        return self.to_string(player, action)


class OpenCodec(ActionCodec):
    """A codec for models without a ground truth: ids are handed out in order of first appearance."""

    def __init__(self) -> None:
        super().__init__({}, num_distinct_actions=0, max_chance_outcomes=0, prefixed=False)

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
