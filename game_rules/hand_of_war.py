"""Hand of war: a 16-card battle game with hidden simultaneous picks and showdowns (an OpenSpiel Python game).

Rules: ``game_rules/hand_of_war.md``. Chance deals the 16 cards (A > K > Q > J, suits S H D C) one at a time,
alternately to the two face-down draw piles; each player draws a hand of 3. Each battle player 0 picks a
card (hidden from player 1), then player 1 picks; the higher rank takes the pot onto its win pile; a tie
burns one draw-pile card each and battles again. Hands refill to 3 after every battle. The game ends when
a needed card is missing (a burn from an empty draw pile, or an empty hand) or a win pile holds all 16
cards; the bigger win pile wins. Observation and information-state strings are compact JSON text.
"""

from __future__ import annotations

import functools
import json
from typing import Any

import numpy as np
import pyspiel

RANKS = "AKQJ"  # highest first
SUITS = "SHDC"
NUM_CARDS = len(RANKS) * len(SUITS)
HAND_SIZE = 3
PILE_SIZE = NUM_CARDS // 2
_MAX_STATES = NUM_CARDS + 2 * PILE_SIZE + 1  # the deal, at most 8 battles of 2 picks, the final state

_GAME_TYPE = pyspiel.GameType(
    short_name="hand_of_war",
    long_name="Hand of War",
    dynamics=pyspiel.GameType.Dynamics.SEQUENTIAL,
    chance_mode=pyspiel.GameType.ChanceMode.EXPLICIT_STOCHASTIC,
    information=pyspiel.GameType.Information.IMPERFECT_INFORMATION,
    utility=pyspiel.GameType.Utility.ZERO_SUM,
    reward_model=pyspiel.GameType.RewardModel.TERMINAL,
    max_num_players=2,
    min_num_players=2,
    provides_information_state_string=True,
    provides_information_state_tensor=True,
    provides_observation_string=True,
    provides_observation_tensor=True,
    parameter_specification={},
)
_GAME_INFO = pyspiel.GameInfo(
    num_distinct_actions=NUM_CARDS,
    max_chance_outcomes=NUM_CARDS,
    num_players=2,
    min_utility=-1.0,
    max_utility=1.0,
    utility_sum=0.0,
    max_game_length=NUM_CARDS + 2 * PILE_SIZE,
)


def card_name(card: int) -> str:
    """``"AS"``, ``"KH"``, ...: rank letter then suit letter (card id = 4 * rank index + suit index)."""
    return RANKS[card // len(SUITS)] + SUITS[card % len(SUITS)]


def card_id(name: str) -> int:
    return RANKS.index(name[0]) * len(SUITS) + SUITS.index(name[1])


def strength(card: int) -> int:
    """Higher is stronger: A=3, K=2, Q=1, J=0."""
    return len(RANKS) - 1 - card // len(SUITS)


def _json(obj: Any) -> str:
    return json.dumps(obj, separators=(",", ":"))


# JSON text of the action strings logged in information states: [player's picks, chance deals][card id].
_ACTION_JSON = tuple(tuple(json.dumps(f"{verb} {card_name(c)}") for c in range(NUM_CARDS)) for verb in ("play", "deal"))


@functools.lru_cache(maxsize=1 << 16)  # a pure function of its argument; planners ask for the same views often
def _observation_text(key: tuple) -> str:
    hand, pick, opp_picked, opp_hand, my_draw, opp_draw, my_won, opp_won, pot_up, pot_down, last = key
    last_battle = None
    if last is not None:
        mine, theirs = last
        result = "tie" if strength(mine) == strength(theirs) else "won" if strength(mine) > strength(theirs) else "lost"
        last_battle = {"my_card": card_name(mine), "opponent_card": card_name(theirs), "result": result}
    return _json({
        "my_hand": [card_name(c) for c in hand],
        "my_pick": None if pick is None else card_name(pick),
        "opponent_picked": opp_picked,
        "opponent_hand_size": opp_hand,
        "my_draw_pile": my_draw,
        "opponent_draw_pile": opp_draw,
        "my_win_pile": my_won,
        "opponent_win_pile": opp_won,
        "pot_face_up": [card_name(c) for c in pot_up],
        "pot_face_down": pot_down,
        "last_battle": last_battle,
    })


class HandOfWarGame(pyspiel.Game):
    """The hand of war game (no parameters)."""

    def __init__(self, params: dict | None = None):
        super().__init__(_GAME_TYPE, _GAME_INFO, params or {})

    def new_initial_state(self) -> HandOfWarState:
        return HandOfWarState(self)

    def make_py_observer(self, iig_obs_type: Any = None, params: dict | None = None) -> HandOfWarObserver:
        return HandOfWarObserver(iig_obs_type or pyspiel.IIGObservationType(perfect_recall=False), params)


class HandOfWarState(pyspiel.State):
    """Piles (lists of card ids, top first), the pot, the pending picks and each player's observation log.

    A log is the JSON text of the player's events so far, each followed by a comma (a string, so cloning
    is cheap).
    """

    def __init__(self, game: HandOfWarGame):
        super().__init__(game)
        self.dealt: list[int] = []
        self.draw: list[list[int]] = [[], []]
        self.hand: list[list[int]] = [[], []]
        self.won: list[list[int]] = [[], []]
        self.pot_up: list[int] = []  # face-up battle cards of tied battles in the current showdown
        self.pot_down: list[int] = []  # burned face-down cards of the current showdown
        self.pick: list[int | None] = [None, None]
        self.last: tuple[int, int] | None = None  # the cards of the last resolved battle
        self.over = False
        self.logs = ["", ""]
        self.logging = True  # off only for internal replays that never read the logs

    def current_player(self) -> int:
        if self.over:
            return pyspiel.PlayerId.TERMINAL
        if len(self.dealt) < NUM_CARDS:
            return pyspiel.PlayerId.CHANCE
        return 0 if self.pick[0] is None else 1

    def _legal_actions(self, player: int) -> list[int]:
        return sorted(self.hand[player])

    def chance_outcomes(self) -> list[tuple[int, float]]:
        left = [c for c in range(NUM_CARDS) if c not in self.dealt]
        return [(c, 1.0 / len(left)) for c in left]

    def _apply_action(self, action: int) -> None:
        player = self.current_player()
        self._check_legal(player, action)
        if self.logging:
            mine = _ACTION_JSON[player == pyspiel.PlayerId.CHANCE][action]
            for p in (0, 1):
                self.logs[p] += f"[{self.observation_json(p)},{mine if p == player else 'null'}],"
        if player == pyspiel.PlayerId.CHANCE:
            self.dealt.append(action)
            self.draw[(len(self.dealt) - 1) % 2].append(action)
            if len(self.dealt) == NUM_CARDS:
                self._refill()
            return
        self.hand[player].remove(action)
        self.pick[player] = action
        if player == 1:
            self._battle()

    def _check_legal(self, player: int, action: int) -> None:
        """Raises ValueError unless ``action`` is legal for ``player`` here (a card not yet dealt, a card in hand)."""
        if player == pyspiel.PlayerId.CHANCE:
            ok = 0 <= action < NUM_CARDS and action not in self.dealt
        else:
            ok = player >= 0 and action in self.hand[player]
        if not ok:
            raise ValueError(f"hand_of_war: action {action} is not legal for player {player} in state {self}")

    def _battle(self) -> None:
        c0, c1 = self.pick  # type: ignore[misc]
        assert c0 is not None and c1 is not None
        self.pick = [None, None]
        self.last = (c0, c1)
        self.pot_up += [c0, c1]
        if strength(c0) != strength(c1):
            winner = 0 if strength(c0) > strength(c1) else 1
            self.won[winner] += self.pot_up + self.pot_down
            self.pot_up, self.pot_down = [], []
        elif not self.draw[0] or not self.draw[1]:  # a burn is needed but a draw pile is empty
            self.over = True
            return
        else:
            self.pot_down += [self.draw[0].pop(0), self.draw[1].pop(0)]
        self._refill()
        if not self.hand[0] or not self.hand[1] or NUM_CARDS in (len(self.won[0]), len(self.won[1])):
            self.over = True

    def _refill(self) -> None:
        for p in (0, 1):
            while len(self.hand[p]) < HAND_SIZE and self.draw[p]:
                self.hand[p].append(self.draw[p].pop(0))

    def _action_to_string(self, player: int, action: int) -> str:
        return ("deal " if player == pyspiel.PlayerId.CHANCE else "play ") + card_name(action)

    def is_terminal(self) -> bool:
        return self.over

    def returns(self) -> list[float]:
        if not self.over or len(self.won[0]) == len(self.won[1]):
            return [0.0, 0.0]
        return [1.0, -1.0] if len(self.won[0]) > len(self.won[1]) else [-1.0, 1.0]

    def observation_key(self, player: int) -> tuple:
        """Everything ``player`` may see, as a hashable tuple (the opponent's hand, the draw piles' cards
        and a pending hidden pick are not in it)."""
        opp = 1 - player
        last = None if self.last is None else (self.last[player], self.last[opp])
        return (tuple(sorted(self.hand[player])), self.pick[player], self.pick[opp] is not None,
                len(self.hand[opp]), len(self.draw[player]), len(self.draw[opp]), len(self.won[player]),
                len(self.won[opp]), tuple(self.pot_up), len(self.pot_down), last)

    def observation_dict(self, player: int) -> dict[str, Any]:
        """What ``player`` sees now, as the JSON-able dict its observation string holds."""
        return json.loads(self.observation_json(player))

    def observation_json(self, player: int) -> str:
        return _observation_text(self.observation_key(player))

    def information_state_json(self, player: int) -> str:
        """Every observation ``player`` had (oldest first, the current one last) and its own actions."""
        # Built from the stored JSON texts (no re-parsing): the same text as dumping the parsed events.
        return f'{{"player":{player},"events":[{self.logs[player]}[{self.observation_json(player)},null]]}}'

    def __str__(self) -> str:
        names = lambda cards: [card_name(c) for c in cards]  # noqa: E731
        return _json({
            "draw_piles": [names(d) for d in self.draw], "hands": [names(h) for h in self.hand],
            "win_piles": [names(w) for w in self.won], "pot_face_up": names(self.pot_up),
            "pot_face_down": names(self.pot_down), "picks": [None if c is None else card_name(c) for c in self.pick],
        })

    def resample_from_infostate(self, player_id: int, probability_sampler: Any) -> HandOfWarState:
        """A state with the same information state for ``player_id``; unseen cards are redealt.

        Uses ``probability_sampler()`` (floats in [0, 1)). The draw has the right support (the result is
        always consistent with what the player saw), not the exact posterior of any opponent policy.
        """
        history = resample_history(self.get_game(), [int(a) for a in self.history()], player_id,
                                   lambda: float(probability_sampler()))
        state = self.get_game().new_initial_state()
        for action in history:
            state.apply_action(action)
        return state


class HandOfWarObserver:
    """Observation (``perfect_recall=False``) or information state (``True``): JSON strings and tensors.

    Tensor per state: own hand (16), own pending pick (16), opponent picked (1), last battle own card (16)
    and opponent card (16), pot face-up cards (16), then scaled counts: face-down pot, both draw piles,
    both win piles, opponent hand size (6). The information-state tensor stacks one row per state so far,
    each followed by the one-hot of the player's own action there (16).
    """

    _FRAME = 5 * NUM_CARDS + 1 + 6

    def __init__(self, iig_obs_type: Any, params: dict | None):
        if params:
            raise ValueError(f"hand_of_war observer: no parameters are supported, got {params}")
        self.perfect_recall = bool(iig_obs_type.perfect_recall)
        shape = (_MAX_STATES, self._FRAME + NUM_CARDS) if self.perfect_recall else (self._FRAME,)
        self.tensor = np.zeros(int(np.prod(shape)), np.float32)
        self.dict = {"info_state" if self.perfect_recall else "observation": self.tensor.reshape(shape)}

    def set_from(self, state: HandOfWarState, player: int) -> None:
        self.tensor.fill(0)
        if not self.perfect_recall:
            _encode(self.tensor, state.observation_dict(player))
            return
        rows = next(iter(self.dict.values()))
        events = json.loads(state.information_state_json(player))["events"]
        for row, (obs, action) in zip(rows, events):
            _encode(row, obs)
            if action is not None:
                row[self._FRAME + card_id(action.split()[1])] = 1

    def string_from(self, state: HandOfWarState, player: int) -> str:
        return state.information_state_json(player) if self.perfect_recall else state.observation_json(player)


def resample_history(game: pyspiel.Game, actions: list[int], player: int, uniform: Any) -> list[int]:
    """An action history that gives ``player`` the same observations and own actions as ``actions``.

    Cards the player has seen keep their deal positions (its own drawn cards) or are put back into an
    opponent hand slot that was drawn before the battle they were played in; every unseen card is dealt
    at random to the remaining positions; an unrevealed pending pick of player 0 is redrawn from its hand.
    """
    opp = 1 - player
    state = game.new_initial_state()
    state.logging = False  # only the cards are read here
    seen: set[int] = set()
    picks: list[tuple[int, list[int], int]] = []  # (history index, opponent hand positions, card) per opp pick
    for i, action in enumerate(actions):
        if state.current_player() == opp:
            picks.append((i, [state.dealt.index(c) for c in state.hand[opp]], action))
        state.apply_action(action)
        seen.update(state.hand[player])
    pending = player == 1 and bool(picks) and picks[-1][0] == len(actions) - 1
    new: list[int | None] = [None] * NUM_CARDS
    for c in seen:
        new[state.dealt.index(c)] = c
    drawn: set[int] = set()
    for _, positions, card in picks[:-1] if pending else picks:
        drawn.update(positions)
        new[_pick(sorted(q for q in drawn if new[q] is None), uniform)] = card
        seen.add(card)
    unseen = [c for c in range(NUM_CARDS) if c not in seen]
    for q in range(NUM_CARDS):
        if new[q] is None:
            new[q] = unseen.pop(int(uniform() * len(unseen)) % len(unseen))
    out = list(new[: min(NUM_CARDS, len(actions))]) + list(actions[NUM_CARDS:])
    if pending:
        drawn.update(picks[-1][1])
        in_hand = [q for q in sorted(drawn) if new[q] not in out[NUM_CARDS:-1]]
        out[-1] = new[_pick(in_hand, uniform)]
    return out  # type: ignore[return-value]


def _pick(items: list, uniform: Any) -> Any:
    return items[min(int(uniform() * len(items)), len(items) - 1)]


def _encode(row: np.ndarray, obs: dict[str, Any]) -> None:
    for c in obs["my_hand"]:
        row[card_id(c)] = 1
    if obs["my_pick"]:
        row[NUM_CARDS + card_id(obs["my_pick"])] = 1
    row[2 * NUM_CARDS] = float(obs["opponent_picked"])
    if obs["last_battle"]:
        row[2 * NUM_CARDS + 1 + card_id(obs["last_battle"]["my_card"])] = 1
        row[3 * NUM_CARDS + 1 + card_id(obs["last_battle"]["opponent_card"])] = 1
    for c in obs["pot_face_up"]:
        row[4 * NUM_CARDS + 1 + card_id(c)] = 1
    counts = [obs["pot_face_down"] / 8, obs["my_draw_pile"] / PILE_SIZE, obs["opponent_draw_pile"] / PILE_SIZE,
              obs["my_win_pile"] / NUM_CARDS, obs["opponent_win_pile"] / NUM_CARDS,
              obs["opponent_hand_size"] / HAND_SIZE]
    row[5 * NUM_CARDS + 1:5 * NUM_CARDS + 7] = counts


pyspiel.register_game(_GAME_TYPE, HandOfWarGame)
