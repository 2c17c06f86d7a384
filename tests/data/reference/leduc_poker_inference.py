"""HAND-WRITTEN TEST FIXTURE (not LLM output): a reference inference function for Leduc poker.

It implements cwm.contract.INFERENCE_API for tests/data/reference/leduc_poker_model.py (and the oracle model:
both show the "brackets" view of OpenSpiel's observations). Every move is read off the player's own events
except the opponent's private card, which is drawn uniformly from the cards the player has not seen (and, at
a showdown, that give the payoffs the player saw): under uniformly random play that is the posterior.
tests/data/reference/leduc_poker_inference_mutants.py derives broken variants by small textual patches, so
keep the lines it patches unchanged.
"""

import random

NO_CARD = -10000
START_MONEY = 100


def _deal(card):
    return f"Chance outcome:{card}"


def _opponent_move(before, after, opponent):
    """The opponent's betting move, read off the antes before and after it."""
    mine = before["ante"][1 - opponent]
    if after["ante"][opponent] > mine:
        return "Raise"
    if after["ante"][opponent] == mine:
        return "Call"
    return "Fold"


def _payoffs(cards, public, ante, folder):
    """The final money of both players (as the terminal observation shows it)."""
    if folder is not None:
        loser = folder
    else:
        pairs = [c // 2 == public // 2 for c in cards]
        ranks = [c // 2 for c in cards]
        if pairs[0] != pairs[1]:
            loser = 1 if pairs[0] else 0
        elif ranks[0] != ranks[1]:
            loser = 1 if ranks[0] > ranks[1] else 0
        else:
            return [START_MONEY, START_MONEY]
    money = [START_MONEY, START_MONEY]
    money[loser] -= ante[loser]
    money[1 - loser] += ante[loser]
    return money


def _moves(events, player_id):
    """The history with None at the deals the player did not see (the opponent's private card), their
    indices, and the player who folded (if one did)."""
    history, holes, folder = [], [], None
    deals = 0
    for k in range(len(events) - 1):
        now, after = events[k]["observation"], events[k + 1]["observation"]
        actor = now["player"]
        if actor == -1:
            if deals == player_id:
                history.append(_deal(after["private"]))
            elif deals == 2:
                history.append(_deal(after["public"]))
            else:
                holes.append(len(history))
                history.append(None)
            deals += 1
        elif actor == player_id:
            history.append(events[k]["action"])
            if events[k]["action"] == "Fold":  # the player's own fold ends the game as the opponent's does
                folder = actor
        else:
            move = _opponent_move(now, after, actor)
            if move == "Fold":
                folder = actor
            history.append(move)
    return history, holes, folder


def _candidates(events, player_id, folder):
    """The opponent's possible private cards: unseen ones, giving the payoffs shown if the game ended."""
    last = events[-1]["observation"]
    seen = [c for c in (last["private"], last.get("public")) if c is not None and c != NO_CARD]
    cards = [c for c in range(6) if c not in seen]
    if last["pot"] != 0 or last.get("public") is None or last["private"] == NO_CARD:
        return cards  # the game goes on (only a finished game shows an empty pot)
    out = []
    for c in cards:
        hands = [last["private"], c] if player_id == 0 else [c, last["private"]]
        if _payoffs(hands, last["public"], last["ante"], folder) == last["money"]:
            out.append(c)
    return out


def resample_history(events, player_id, seed):
    rng = random.Random(seed)
    history, holes, folder = _moves(events, player_id)
    cards = _candidates(events, player_id, folder)
    for hole in holes:
        card = rng.choice(cards)
        cards.remove(card)
        history[hole] = _deal(card)
    return history
