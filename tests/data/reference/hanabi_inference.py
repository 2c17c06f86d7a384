"""HAND-WRITTEN TEST FIXTURE (not LLM output): a reference inference function for Hanabi, any number of
players, written on the ground truth.

``resample_history(events, player_id, seed)`` (cwm.contract.INFERENCE_API, the "text" view: ``{"observation":
TEXT}``) returns a full history (every deal and every player's move, as action strings) consistent with what
the player saw. Everything but the player's own cards is in its observations: the other hands (so every card
dealt to another player), the fireworks, tokens and discards. Its own cards are tracked slot by slot through
its events: a card it played or discarded is read off the next observation (the firework that rose, or the
last discard); a card still in its hand is drawn from the cards no observation accounts for, among those its
hints allow (the colours and ranks its latest observation lists as still possible), one slot after another
in a random order, again from the start if a slot is left with no card. The moves of the other players are
named by replaying the history in OpenSpiel's engine (built only from the cards drawn here) and keeping a
legal move after which the player's observation is the one it saw. The draws are consistent, not weighted
by the true posterior (which under uniformly random play also weighs how many hints each deal allows).
"""

from __future__ import annotations

import random
import re
from collections import Counter

import pyspiel

COLOURS, RANKS, COPIES = "RYGWB", "12345", {"1": 3, "2": 2, "3": 2, "4": 2, "5": 1}
CARD = re.compile(r"^(XX|[RYGWB][1-5]) \|\| (\S+)\|(\S*)$")


def _text(event):
    return event["observation"]["observation"]


def _blocks(text):
    """Each hand of an observation, the observer's own first: a list of (card or 'XX', colours and ranks
    still possible) per slot."""
    body = text.split("Hands:\n", 1)[1].split("\nDeck size:", 1)[0]
    hands = []
    for block in body.split("-----"):
        hands.append([(m.group(1), m.group(3)) for line in block.splitlines() if (m := CARD.match(line.strip()))])
    return hands


def _fireworks(text):
    found = re.search(r"Fireworks: (.*)", text).group(1).split()
    return {f[0]: int(f[1:]) for f in found}


def _discards(text):
    return re.findall(r"[RYGWB][1-5]", re.search(r"Discards:(.*)", text).group(1))


def _revealed(before, after):
    """The card the observer played or discarded between two observations."""
    rose = [c for c, h in _fireworks(after).items() if h > _fireworks(before)[c]]
    return f"{rose[0]}{_fireworks(after)[rose[0]]}" if rose else _discards(after)[-1]


def _structure(events, player_id):
    """Per step: ('deal', card or own slot id), ('own', action) or ('other', None); the own cards revealed
    (id -> card) and the ids still in the hand at the end, slot by slot."""
    steps, hand, revealed, next_id = [], [], {}, 0
    for k in range(len(events) - 1):
        now, after = _text(events[k]), _text(events[k + 1])
        before_hands, after_hands = _blocks(now), _blocks(after)
        grew = [i for i, (a, b) in enumerate(zip(before_hands, after_hands)) if len(b) == len(a) + 1]
        if events[k]["action"] is not None:
            action = events[k]["action"]
            slot = re.match(r"\((?:Play|Discard) (\d)\)", action)
            if slot:
                revealed[hand.pop(int(slot.group(1)))] = _revealed(now, after)
            steps.append(("own", action))
        elif grew and sum(len(b) for b in after_hands) == sum(len(b) for b in before_hands) + 1:
            if grew[0] == 0:
                hand.append(next_id)
                steps.append(("deal", next_id))
                next_id += 1
            else:
                steps.append(("deal", after_hands[grew[0]][-1][0]))
        else:
            steps.append(("other", None))
    return steps, hand, revealed


def _unseen(events):
    """The cards no observation accounts for: the deck less the other hands, the fireworks and the discards
    (the observer's own played and discarded cards among them), as the last observation shows them."""
    text = _text(events[-1])
    left = Counter({c + r: COPIES[r] for c in COLOURS for r in RANKS})
    seen = [card for hand in _blocks(text)[1:] for card, _ in hand] + _discards(text)
    seen += [f"{c}{r}" for c, h in _fireworks(text).items() for r in range(1, h + 1)]
    for card in seen:
        left[card] -= 1
    return left


def _draw_own(events, hand, rng):
    """A card for each slot still in the hand, allowed by its hints and the unseen cards."""
    allowed = [possible for _, possible in _blocks(_text(events[-1]))[0]]
    for _ in range(1000):
        left = _unseen(events)
        cards = {}
        for slot in rng.sample(range(len(hand)), len(hand)):
            fits = [c for c in sorted(left) if left[c] > 0 and c[0] in allowed[slot] and c[1] in allowed[slot]]
            if not fits:
                break
            pick = rng.choice(fits)
            left[pick] -= 1
            cards[hand[slot]] = pick
        else:
            return cards
    raise ValueError("no deal of the player's own cards fits its hints")


def resample_history(events, player_id, seed):
    rng = random.Random(seed)
    steps, hand, revealed = _structure(events, player_id)
    own = revealed | _draw_own(events, hand, rng)
    players = len(_blocks(_text(events[0])))
    state = pyspiel.load_game(f"hanabi(players={players})").new_initial_state()
    history = []
    for k, (kind, value) in enumerate(steps):
        if kind == "deal":
            name = f"(Deal {own[value] if isinstance(value, int) else value})"
        elif kind == "own":
            name = value
        else:
            name = _matching(state, player_id, _text(events[k + 1]), rng)
        action = next(a for a in _actions(state) if state.action_to_string(state.current_player(), a) == name)
        state.apply_action(action)
        history.append(name)
    return history


def _actions(state):
    return [a for a, _ in state.chance_outcomes()] if state.is_chance_node() else state.legal_actions()


def _matching(state, player_id, seen, rng):
    """A legal move of the player to act after which ``player_id`` observes ``seen`` (one at random)."""
    fits = []
    for a in state.legal_actions():
        child = state.child(a)
        if child.observation_string(player_id) == seen:
            fits.append(state.action_to_string(state.current_player(), a))
    if not fits:
        raise ValueError(f"no move of player {state.current_player()} gives the observation seen next")
    return rng.choice(fits)
