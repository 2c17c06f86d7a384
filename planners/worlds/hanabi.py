"""Worlds of OpenSpiel's Hanabi consistent with one player's observations: its own hand redrawn.

A player of Hanabi sees every card but those in its own hand: the other hands, the discards and the
fireworks, and of its own cards only what the hints said (``observation_string`` shows each card's plausible
colours and ranks). Cards it played or discarded were revealed, so the only hidden cards of the past are the
ones in its hand now. A world redraws them: each card of the hand gets a card of the *unseen pool* (the deck
less every card the player has seen) whose colour and rank its hints allow, the cards distinct, uniformly
over all such assignments of physical cards; the deal events that gave the player those cards are replaced
in the real history and the history is replayed in the engine.

Why this is the posterior: the deals are drawn card by card from the deck, so every order of physical cards
is equally likely, and a hint's marks are exactly the plausible sets the observation shows. With the other
players' actions weighted alike whatever the hidden cards (the players' policies do not read them), the
posterior is uniform over the assignments that keep every hint's marks, which is what is drawn. (A uniformly
random opponent is not quite such a policy: its number of legal hints depends on the player's cards.)

The draw: each card picks a physical card among those its hints allow, and the tuple is kept when the picks
are distinct (every valid tuple has the same chance, so the kept ones are uniform); after
``_REJECTION_TRIES`` tries without one, which takes tightly hinted hands and few copies left, the valid
tuples are enumerated and one is picked uniformly.
"""

from __future__ import annotations

import itertools

import numpy as np
import pyspiel

from cwm.types import CHANCE
from planners.gt_resample import ResampleFailure

COLOR_LETTERS = "RYGWB"  # the engine's colour order (a card's id is colour * ranks + rank)
_BATCH = 256  # rejection tries drawn at once
_REJECTION_TRIES = 16 * _BATCH
_MAX_ENUMERATED = 200_000  # valid tuples enumerated after rejection gave up (a tight hand has few)


def hanabi_problem(game: pyspiel.Game) -> str:
    """Why ``HanabiWorlds`` does not serve these Hanabi parameters (``""`` when it does): the observations must
    show the hints (the default card-knowledge observations) and player 0 must start (no chance event before
    the deal)."""
    params = game.get_parameters()
    if str(params.get("observation_type", "1")) not in ("", "1"):
        return "the Hanabi world sampler needs the card-knowledge observations (observation_type=1)"
    if params.get("random_start_player", False):
        return "the Hanabi world sampler needs player 0 to start (random_start_player=false)"
    return ""


class HanabiWorlds:
    """Draws Hanabi worlds consistent with one player's observations (a ``Sampler`` for ``planners.ISMCTS``).

    Args:
      game: a Hanabi game (``hanabi(...)``) that ``hanabi_problem`` accepts.

    Raises:
      ValueError: the game is no Hanabi this sampler serves, or its deck is not the one its rules give.

    Randomness: each draw uses only the ``np.random.Generator`` it is given.
    """

    def __init__(self, game: pyspiel.Game):
        problem = hanabi_problem(game) if game.get_type().short_name == "hanabi" else "it is not Hanabi"
        if problem:
            raise ValueError(f"HanabiWorlds cannot serve {game}: {problem}")
        params = game.get_parameters()
        self.game = game
        self.players = game.num_players()
        self.colors = int(params.get("colors", 5))
        self.ranks = int(params.get("ranks", 5))
        self.hand_size = int(params.get("hand_size", 5 if self.players < 4 else 4))
        self.deck = _deck(game, self.colors, self.ranks)
        self.slot_of = _slot_actions(game)
        self._prepared: dict[tuple[int, tuple[int, ...]], tuple[list[int], list[np.ndarray], np.ndarray]] = {}

    def __call__(self, state: pyspiel.State, player: int, rng: np.random.Generator) -> pyspiel.State:
        """A fresh state whose history gives ``player`` the same observations as ``state``'s."""
        history = [int(a) for a in state.history()]
        slots, allowed, pool = self._prepare(state, player, history)
        picks = _distinct_picks(allowed, rng)
        replacements = {i: int(pool[j]) for i, j in zip(slots, picks)}
        world = self.game.new_initial_state()
        for i, action in enumerate(history):
            world.apply_action(replacements.get(i, action))
        return world

    def _prepare(self, state: pyspiel.State, player: int,
                 history: list[int]) -> tuple[list[int], list[np.ndarray], np.ndarray]:
        """The deal events of ``player``'s hand, the pool's cards each may take (indices into the pool), and the
        pool (one entry per physical card); kept for the last information state asked about."""
        key = (player, tuple(history))
        if key not in self._prepared:
            steps = [(int(s.player), int(s.action)) for s in state.full_history()]
            slots = self.hand_events(steps, player)
            plausible = self.plausible(state.observation_string(player))
            if len(plausible) != len(slots):
                raise ResampleFailure(f"player {player}'s observation shows {len(plausible)} own cards, the "
                                      f"history deals it {len(slots)}")
            pool = self.unseen(steps, slots)
            allowed = [np.flatnonzero(np.isin(pool, sorted(cards))) for cards in plausible]
            self._prepared = {key: (slots, allowed, pool)}
        return self._prepared[key]

    def hand_events(self, steps: list[tuple[int, int]], player: int) -> list[int]:
        """The positions in a history (``(mover, action)`` per step) of the deals that gave ``player`` its current cards, in hand
        order: a deal goes to the first player whose hand is short (the opening deal, then whoever just
        played or discarded), a play or discard takes the card from its slot and the hand closes up."""
        hands: list[list[int]] = [[] for _ in range(self.players)]
        for i, (mover, action) in enumerate(steps):
            if mover == CHANCE:
                short = [p for p in range(self.players) if len(hands[p]) < self.hand_size]
                if not short:
                    raise ResampleFailure(f"a deal at step {i} of the history while every hand is full")
                hands[short[0]].append(i)
            elif action in self.slot_of:
                hands[mover].pop(self.slot_of[action])
        return hands[player]

    def plausible(self, observation: str) -> list[set[int]]:
        """The cards (ids) each card of the observer's hand may be, from the hints its observation shows."""
        lines = observation.splitlines()
        start = lines.index("Hands:") + 1
        own = [line for line in itertools.takewhile(lambda x: x != "-----", lines[start:]) if "||" in line]
        out = []
        for line in own:
            knowledge = line.split("||", 1)[1].strip().split("|", 1)[1]
            colors = [COLOR_LETTERS.index(c) for c in knowledge if c.isalpha()]
            ranks = [int(c) - 1 for c in knowledge if c.isdigit()]
            out.append({c * self.ranks + r for c in colors for r in ranks})
        return out

    def unseen(self, steps: list[tuple[int, int]], slots: list[int]) -> np.ndarray:
        """The cards the player has not seen, one entry per physical card: the deck less every card dealt but
        those of its hand (the deal events ``slots``)."""
        counts = self.deck.copy()
        hidden = set(slots)
        for i, (mover, action) in enumerate(steps):
            if mover == CHANCE and i not in hidden:
                counts[action] -= 1
        return np.repeat(np.arange(len(counts)), counts)


def _deck(game: pyspiel.Game, colors: int, ranks: int) -> np.ndarray:
    """Copies of each card in the deck: three of the lowest rank, one of the highest, two of the others (the
    engine's rule), checked against the probabilities of the first deal."""
    copies = [3 if r == 0 else 1 if r == ranks - 1 else 2 for r in range(ranks)]
    deck = np.array([copies[r] for _ in range(colors) for r in range(ranks)])
    outcomes = dict(game.new_initial_state().chance_outcomes())
    if any(abs(outcomes.get(card, 0.0) - n / deck.sum()) > 1e-9 for card, n in enumerate(deck)):
        raise ValueError(f"{game}: the first deal's probabilities are not a deck of {copies} copies per colour")
    return deck


def _slot_actions(game: pyspiel.Game) -> dict[int, int]:
    """Play and discard actions -> the hand slot they take a card from."""
    state, out = game.new_initial_state(), {}
    for action in range(game.num_distinct_actions()):
        words = state.action_to_string(0, action).strip("()").split()
        if words[0] in ("Play", "Discard"):
            out[action] = int(words[1])
    return out


def _distinct_picks(allowed: list[np.ndarray], rng: np.random.Generator) -> list[int]:
    """One pool index per card, each from its ``allowed`` indices, all distinct, uniformly over such tuples."""
    if any(len(a) == 0 for a in allowed):
        raise ResampleFailure("a card of the hand has no unseen card its hints allow")
    if not allowed:
        return []
    for _ in range(_REJECTION_TRIES // _BATCH):
        picks = np.stack([a[rng.integers(len(a), size=_BATCH)] for a in allowed])
        ordered = np.sort(picks, axis=0)
        distinct = np.flatnonzero((np.diff(ordered, axis=0) != 0).all(axis=0)) if len(allowed) > 1 else [0]
        if len(distinct):
            return [int(j) for j in picks[:, distinct[0]]]
    return _enumerated_pick(allowed, rng)


def _enumerated_pick(allowed: list[np.ndarray], rng: np.random.Generator) -> list[int]:
    """A uniform pick among every tuple of distinct allowed indices (listed by backtracking)."""
    found: list[tuple[int, ...]] = []
    stack: list[tuple[int, ...]] = [()]
    while stack:
        prefix = stack.pop()
        if len(prefix) == len(allowed):
            found.append(prefix)
            if len(found) > _MAX_ENUMERATED:
                raise ResampleFailure(f"more than {_MAX_ENUMERATED} hands fit the hints after rejection failed")
            continue
        stack.extend(prefix + (int(j),) for j in allowed[len(prefix)] if int(j) not in prefix)
    if not found:
        raise ResampleFailure("no assignment of distinct unseen cards fits the hints")
    return list(found[int(rng.integers(len(found)))])
