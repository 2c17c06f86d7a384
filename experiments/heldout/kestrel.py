"""Kestrel: a two-player trick-taking game with bids, invented for cwm's held-out measurement (OpenSpiel Python).

Rules, at a rulebook's level: ``experiments/heldout/kestrel.md``. Not in cwm's registry, so it stays held out;
cwm loads it as ``experiments/heldout/kestrel.py:kestrel``. Twenty-one cards (three suits, ranks 1-7): seven to
each hand, one turned face up to name the trump suit, six left unseen. Each player bids how many of the seven
tricks it will take (the second bid may not make the two bids add up to seven); the hands are then played out,
following suit if able, else trumping if able. Within a suit the higher rank wins, except that a 1 beats the 7 of
its own suit. A player scores one point a trick, ten more for taking exactly its bid, and two for the last trick;
the returns are the two scores' difference.

What makes it a test of the synthesis loop: the follow-then-trump rule, the second bidder's forbidden bid, the
1-beats-7 exception (a rare branch), and the scoring's three parts. Observation and information-state strings
are JSON text (cwm's ``json`` view parses them into dicts).
"""

from __future__ import annotations

import itertools
import json
from typing import Any

import numpy as np
import pyspiel

SUITS = ("W", "R", "F")  # wind, rain, fire
RANKS = 7
NUM_CARDS = len(SUITS) * RANKS
HAND = 7
DEALT = 2 * HAND + 1  # seven to each hand, one at a time, then the trump card face up
TRICK_POINT, EXACT_BONUS, LAST_BONUS = 1, 10, 2

# Action ids: a card dealt (chance) or played is its card id; a bid of b tricks is BID + b.
BID = NUM_CARDS
NUM_ACTIONS = BID + HAND + 1
MAX_GAME_LENGTH = DEALT + 2 + 2 * HAND
_MAX_SCORE = HAND * TRICK_POINT + EXACT_BONUS + LAST_BONUS

_GAME_TYPE = pyspiel.GameType(
    short_name="kestrel",
    long_name="Kestrel",
    dynamics=pyspiel.GameType.Dynamics.SEQUENTIAL,
    chance_mode=pyspiel.GameType.ChanceMode.EXPLICIT_STOCHASTIC,
    information=pyspiel.GameType.Information.IMPERFECT_INFORMATION,
    utility=pyspiel.GameType.Utility.ZERO_SUM,
    reward_model=pyspiel.GameType.RewardModel.TERMINAL,
    max_num_players=2,
    min_num_players=2,
    provides_information_state_string=True,
    provides_information_state_tensor=False,
    provides_observation_string=True,
    provides_observation_tensor=False,
    parameter_specification={},
)
_GAME_INFO = pyspiel.GameInfo(
    num_distinct_actions=NUM_ACTIONS,
    max_chance_outcomes=NUM_CARDS,
    num_players=2,
    min_utility=-float(_MAX_SCORE),
    max_utility=float(_MAX_SCORE),
    utility_sum=0.0,
    max_game_length=MAX_GAME_LENGTH,
)


def card_name(card: int) -> str:
    """``"R5"``: suit letter then rank."""
    return f"{SUITS[card // RANKS]}{card % RANKS + 1}"


def suit(card: int) -> int:
    return card // RANKS


def rank(card: int) -> int:
    return card % RANKS + 1


def beats(card: int, other: int) -> bool:
    """Whether ``card`` beats ``other`` of the same suit: the higher rank, except that a 1 beats the 7."""
    a, b = rank(card), rank(other)
    if {a, b} == {1, RANKS}:
        return a == 1
    return a > b


def trick_winner(lead: int, follow: int, trump: int) -> int:
    """0 when the leader's card takes the trick, 1 when the follower's does."""
    if suit(follow) == suit(lead):
        return int(beats(follow, lead))
    return int(suit(follow) == trump)


def forbidden_bid(first_bid: int) -> int | None:
    """The bid the second bidder may not make: the one that brings the two bids to seven tricks."""
    left = HAND - first_bid
    return left if 0 <= left <= HAND else None


def _json(obj: Any) -> str:
    return json.dumps(obj, separators=(",", ":"))


class KestrelGame(pyspiel.Game):
    """The Kestrel game (no parameters)."""

    def __init__(self, params: dict | None = None):
        super().__init__(_GAME_TYPE, _GAME_INFO, params or {})

    def new_initial_state(self) -> KestrelState:
        return KestrelState(self)

    def make_py_observer(self, iig_obs_type: Any = None, params: dict | None = None) -> KestrelObserver:
        return KestrelObserver(iig_obs_type or pyspiel.IIGObservationType(perfect_recall=False), params)


class KestrelState(pyspiel.State):
    """Hands, the trump card, bids, the trick in play, tricks taken, and each player's log of (observation,
    own action) as JSON text (a string, so cloning is cheap)."""

    def __init__(self, game: KestrelGame):
        super().__init__(game)
        self.hands: list[list[int]] = [[], []]
        self.dealt: list[int] = []
        self.trump_card: int | None = None
        self.bids: list[int | None] = [None, None]
        self.trick: list[tuple[int, int]] = []  # (player, card) in the order played
        self.last_trick: tuple[list[tuple[int, int]], int] | None = None  # its cards and its winner
        self.tricks = [0, 0]
        self.leader = 0
        self.logs = ["", ""]

    def phase(self) -> str:
        if len(self.dealt) < DEALT:
            return "deal"
        if self.bids[1] is None:
            return "bid"
        return "over" if sum(self.tricks) == HAND else "play"

    def current_player(self) -> int:
        phase = self.phase()
        if phase == "over":
            return pyspiel.PlayerId.TERMINAL
        if phase == "deal":
            return pyspiel.PlayerId.CHANCE
        if phase == "bid":
            return 0 if self.bids[0] is None else 1
        return self.leader if not self.trick else 1 - self.leader

    def chance_outcomes(self) -> list[tuple[int, float]]:
        left = [c for c in range(NUM_CARDS) if c not in self.dealt]
        return [(c, 1.0 / len(left)) for c in left]

    def _legal_actions(self, player: int) -> list[int]:
        if self.phase() == "bid":
            banned = forbidden_bid(self.bids[0]) if player == 1 else None  # type: ignore[arg-type]
            return [BID + b for b in range(HAND + 1) if b != banned]
        hand = sorted(self.hands[player])
        if not self.trick:
            return hand
        led = suit(self.trick[0][1])
        trump = suit(self.trump_card)  # type: ignore[arg-type]
        for wanted in (led, trump):
            same = [c for c in hand if suit(c) == wanted]
            if same:
                return same
        return hand

    def _apply_action(self, action: int) -> None:
        player = self.current_player()
        legal = ({c for c, _ in self.chance_outcomes()} if player == pyspiel.PlayerId.CHANCE
                 else set(self._legal_actions(player)) if player >= 0 else set())
        if action not in legal:
            raise ValueError(f"kestrel: action {action} is not legal for player {player} in state {self}")
        own = _json(self._action_to_string(player, action))  # a chance outcome is no player's own action
        for p in (0, 1):
            self.logs[p] += f"[{self.observation_json(p)},{own if p == player else 'null'}],"
        if player == pyspiel.PlayerId.CHANCE:
            self._deal(action)
        elif action >= BID:
            self.bids[player] = action - BID
        else:
            self._play(player, action)

    def _deal(self, card: int) -> None:
        self.dealt.append(card)
        if len(self.dealt) < DEALT:
            self.hands[(len(self.dealt) - 1) % 2].append(card)
        else:
            self.trump_card = card

    def _play(self, player: int, card: int) -> None:
        self.hands[player].remove(card)
        self.trick.append((player, card))
        if len(self.trick) < 2:
            return
        (leader, lead), (_, follow) = self.trick
        winner = leader if trick_winner(lead, follow, suit(self.trump_card)) == 0 else 1 - leader  # type: ignore[arg-type]
        self.tricks[winner] += 1
        self.last_trick = (self.trick, winner)
        self.trick = []
        self.leader = winner

    def _action_to_string(self, player: int, action: int) -> str:
        if player == pyspiel.PlayerId.CHANCE:
            return f"deal {card_name(action)}"
        if action >= BID:
            return f"bid {action - BID}"
        return f"play {card_name(action)}"

    def is_terminal(self) -> bool:
        return self.phase() == "over"

    def scores(self) -> list[int]:
        """Each player's score: a point a trick, ten for taking exactly its bid, two for the last trick."""
        out = [TRICK_POINT * t + (EXACT_BONUS if t == b else 0) for t, b in zip(self.tricks, self.bids)]
        if self.is_terminal() and self.last_trick is not None:
            out[self.last_trick[1]] += LAST_BONUS
        return out

    def returns(self) -> list[float]:
        if not self.is_terminal():
            return [0.0, 0.0]
        s = self.scores()
        return [float(s[0] - s[1]), float(s[1] - s[0])]

    def observation_dict(self, player: int) -> dict[str, Any]:
        """What ``player`` sees: its hand, the trump card, the bids, the trick in play and the last one, the
        tricks taken, who is to move; at the end, the scores."""
        def who(p: int) -> str:
            return "me" if p == player else "opponent"

        to_move = self.current_player()
        over = self.is_terminal()
        last = None if self.last_trick is None else {
            "cards": [{"by": who(p), "card": card_name(c)} for p, c in self.last_trick[0]],
            "won_by": who(self.last_trick[1])}
        return {
            "my_hand": [card_name(c) for c in sorted(self.hands[player])],
            "opponent_cards": len(self.hands[1 - player]),
            "trump": None if self.trump_card is None else card_name(self.trump_card),
            "bids": {"me": self.bids[player], "opponent": self.bids[1 - player]},
            "trick": [{"by": who(p), "card": card_name(c)} for p, c in self.trick],
            "last_trick": last,
            "tricks": {"me": self.tricks[player], "opponent": self.tricks[1 - player]},
            "to_move": who(to_move) if to_move >= 0 else None,
            "scores": {"me": self.scores()[player], "opponent": self.scores()[1 - player]} if over else None,
        }

    def observation_json(self, player: int) -> str:
        return _json(self.observation_dict(player))

    def information_state_json(self, player: int) -> str:
        """Every observation ``player`` had (oldest first, the current one last) and its own actions."""
        return f'{{"player":{player},"events":[{self.logs[player]}[{self.observation_json(player)},null]]}}'

    def __str__(self) -> str:
        return _json({"hands": [[card_name(c) for c in sorted(h)] for h in self.hands],
                      "trump": None if self.trump_card is None else card_name(self.trump_card),
                      "bids": self.bids, "trick": [[p, card_name(c)] for p, c in self.trick],
                      "tricks": self.tricks, "leader": self.leader})

    def resample_from_infostate(self, player_id: int, probability_sampler: Any) -> KestrelState:
        """A state with the same information state for ``player_id``: the other hand redrawn, uniformly among the
        hands consistent with what ``player_id`` saw (the other player's cards already played, and no card of a
        suit it showed it lacked).

        ``probability_sampler()`` (floats in [0, 1)) supplies the randomness.
        """
        history = resample_history([int(a) for a in self.history()], player_id, lambda: float(probability_sampler()))
        state = self.get_game().new_initial_state()
        for action in history:
            state.apply_action(action)
        return state


def _what_player_knows(actions: list[int], player: int) -> tuple[list[int], set[int], list[int], set[int]]:
    """(the other player's deal steps, the cards ``player`` has seen, the other's cards seen played, the suits
    the other has shown it lacks), from the action history."""
    state = KestrelGame().new_initial_state()
    other_steps: list[int] = []
    seen: set[int] = set()
    played: list[int] = []
    void: set[int] = set()
    for i, action in enumerate(actions):
        mover = state.current_player()
        if mover == pyspiel.PlayerId.CHANCE:
            receiver = (len(state.dealt)) % 2 if len(state.dealt) < 2 * HAND else None
            if receiver == 1 - player:
                other_steps.append(i)
            else:
                seen.add(action)
        elif action < BID:
            seen.add(action)
            if mover == 1 - player:
                played.append(action)
                if state.trick:  # it followed: a card off the led suit shows a void, and off trump too
                    led, trump = suit(state.trick[0][1]), suit(state.trump_card)  # type: ignore[arg-type]
                    if suit(action) != led:
                        void.add(led)
                        if suit(action) != trump:
                            void.add(trump)
        state.apply_action(action)
    return other_steps, seen, played, void


def resample_history(actions: list[int], player: int, uniform: Any) -> list[int]:
    """An action history that gives ``player`` the same observations and own actions as ``actions``: the cards
    the other player still holds are redrawn uniformly among the sets ``player`` cannot rule out, and the
    other's seven cards are dealt back to its deal steps in a random order, with ``uniform()`` (floats in
    [0, 1))."""
    other_steps, seen, played, void = _what_player_knows(actions, player)
    if not other_steps:
        return list(actions)
    held = len(other_steps) - len(played)
    pool = [c for c in range(NUM_CARDS) if c not in seen and suit(c) not in void]
    choices = list(itertools.combinations(pool, held))
    cards = list(played) + list(choices[min(int(uniform() * len(choices)), len(choices) - 1)])
    out = list(actions)
    for i in other_steps:
        out[i] = cards.pop(min(int(uniform() * len(cards)), len(cards) - 1))
    return out


class KestrelObserver:
    """Observation (``perfect_recall=False``) or information state (``True``) as JSON strings; no tensors."""

    def __init__(self, iig_obs_type: Any, params: dict | None):
        if params:
            raise ValueError(f"kestrel observer: no parameters are supported, got {params}")
        self.perfect_recall = bool(iig_obs_type.perfect_recall)
        self.tensor = np.zeros(0, np.float32)
        self.dict: dict[str, np.ndarray] = {}

    def set_from(self, state: KestrelState, player: int) -> None:
        pass

    def string_from(self, state: KestrelState, player: int) -> str:
        return state.information_state_json(player) if self.perfect_recall else state.observation_json(player)


pyspiel.register_game(_GAME_TYPE, KestrelGame)
