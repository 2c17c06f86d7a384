"""HAND-WRITTEN TEST FIXTURE (not LLM output): a reference inference function for Hanabi, any number of
players (cwm.contract.INFERENCE_API, the "text" view: ``{"observation": TEXT}``, TEXT OpenSpiel's
observation string). It is the inference of cwm's offline Hanabi demo session
(tests/data/synthesis/hanabi/inference_2_fixed.md), kept here for the tests.

Everything but the player's own cards is in its observations: the other hands (so every card dealt to
another player), the fireworks, the tokens and the discards. Its own cards are tracked slot by slot: a card it played or discarded is read off the next observation (the firework that rose, or the
last discard); a card still in its hand is drawn from the cards no observation accounts for, among the
colours and ranks its latest observation lists as still possible. The other players' moves are read off the
observations: a hand that lost a card played it (a firework rose or a life was lost) or discarded it; else a
hint, whose effect on the hinted hand's knowledge is worked out for each possible hint and compared with
what the player saw next. The draws are consistent, not weighted by the true posterior (which under
uniformly random play also weighs how many hints each deal allows).
"""

import random
import re

COLOURS, RANKS, COPIES = "RYGWB", "12345", {"1": 3, "2": 2, "3": 2, "4": 2, "5": 1}
CARD = re.compile(r"^(XX|[RYGWB][1-5]) \|\| (\S\S)\|(\S*)$")


def _text(event):
    return event["observation"]["observation"]


def _blocks(text):
    """Each hand, the observer's own first: (card or 'XX', hinted, possible) per slot; and the block whose
    player is to act (-1 if none)."""
    body = text.split("Hands:\n", 1)[1].split("\nDeck size:", 1)[0]
    hands, acting = [], -1
    for i, block in enumerate(body.split("-----")):
        if "Cur player" in block:
            acting = i
        hands.append([m.groups() for line in block.splitlines() if (m := CARD.match(line.strip()))])
    return hands, acting


def _fireworks(text):
    return {f[0]: int(f[1:]) for f in re.search(r"Fireworks: (.*)", text).group(1).split()}


def _number(text, key):
    return int(re.search(key + r": (\d+)", text).group(1))


def _discards(text):
    return re.findall(r"[RYGWB][1-5]", re.search(r"Discards:(.*)", text).group(1))


def _revealed(before, after):
    """The card a player played or discarded between two observations."""
    rose = [c for c, h in _fireworks(after).items() if h > _fireworks(before)[c]]
    return f"{rose[0]}{_fireworks(after)[rose[0]]}" if rose else _discards(after)[-1]


def _structure(events):
    """Per step: ('deal', card or own slot id), ('own', action) or ('other', own slot ids then); the own
    cards revealed (id -> card) and the ids still in the hand at the end, slot by slot."""
    steps, hand, revealed, next_id = [], [], {}, 0
    for k in range(len(events) - 1):
        now, after = _text(events[k]), _text(events[k + 1])
        before_hands, after_hands = _blocks(now)[0], _blocks(after)[0]
        grew = [i for i, (a, b) in enumerate(zip(before_hands, after_hands)) if len(b) == len(a) + 1]
        if events[k]["action"] is not None:
            action = events[k]["action"]
            slot = re.match(r"\((?:Play|Discard) (\d)\)", action)
            if slot:
                revealed[hand.pop(int(slot.group(1)))] = _revealed(now, after)
            steps.append(("own", action))
        elif grew and sum(map(len, after_hands)) == sum(map(len, before_hands)) + 1:
            if grew[0] == 0:
                hand.append(next_id)
                steps.append(("deal", next_id))
                next_id += 1
            else:
                steps.append(("deal", after_hands[grew[0]][-1][0]))
        else:
            steps.append(("other", list(hand)))
    return steps, hand, revealed


def _unseen(text):
    """The cards no observation accounts for: the deck less the other hands, the fireworks and the discards."""
    left = {c + r: COPIES[r] for c in COLOURS for r in RANKS}
    seen = [card for hand in _blocks(text)[0][1:] for card, _, _ in hand] + _discards(text)
    seen += [f"{c}{r}" for c, h in _fireworks(text).items() for r in range(1, h + 1)]
    for card in seen:
        left[card] -= 1
    return left


def _draw_own(events, hand, rng):
    """A card for each slot still in the hand, allowed by its hints and the unseen cards."""
    allowed = [possible for _, _, possible in _blocks(_text(events[-1]))[0][0]]
    for _ in range(1000):
        left = _unseen(_text(events[-1]))
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


def _hinted(block, cards, kind, value):
    """The knowledge lines of a hand after a hint of ``kind`` ('color' or 'rank') ``value``."""
    out = []
    for (shown, hinted, possible), card in zip(block, cards):
        colours = "".join(ch for ch in possible if ch.isalpha())
        ranks = "".join(ch for ch in possible if ch.isdigit())
        at = 0 if kind == "color" else 1
        if card[at] == value:
            hinted = hinted[:at] + value + hinted[at + 1:]
            colours, ranks = (value, ranks) if at == 0 else (colours, value)
        elif at == 0:
            colours = colours.replace(value, "")
        else:
            ranks = ranks.replace(value, "")
        out.append((shown, hinted, colours + ranks))
    return out


def _other_move(before, after, own_cards, rng):
    """The move of the player to act in ``before`` after which the observer sees ``after``."""
    hands, actor = _blocks(before)
    later = _blocks(after)[0]
    if len(later[actor]) == len(hands[actor]) - 1:
        slot = next((i for i, line in enumerate(later[actor]) if line != hands[actor][i]), len(later[actor]))
        played = _fireworks(after) != _fireworks(before) or _number(after, "Life tokens") < _number(before, "Life tokens")
        return f"({'Play' if played else 'Discard'} {slot})"
    fits = []
    for target, block in enumerate(hands):
        if target == actor or any(later[b] != hands[b] for b in range(len(hands)) if b != target):
            continue  # a hint changes what is known of the hinted hand only
        cards = own_cards if target == 0 else [card for card, _, _ in block]
        offset = (target - actor) % len(hands)
        for kind, values in (("color", COLOURS), ("rank", RANKS)):
            for value in values:
                present = any(card[0 if kind == "color" else 1] == value for card in cards)
                if present and _hinted(block, cards, kind, value) == later[target]:
                    fits.append(f"(Reveal player +{offset} {kind} {value})")
    if not fits:
        raise ValueError("no move of the player to act gives the observation seen next")
    return rng.choice(fits)


def resample_history(events, player_id, seed):
    rng = random.Random(seed)
    steps, hand, revealed = _structure(events)
    own = revealed | _draw_own(events, hand, rng)
    history = []
    for k, (kind, value) in enumerate(steps):
        if kind == "deal":
            history.append(f"(Deal {own[value] if isinstance(value, int) else value})")
        elif kind == "own":
            history.append(value)
        else:
            history.append(_other_move(_text(events[k]), _text(events[k + 1]), [own[i] for i in value], rng))
    return history
