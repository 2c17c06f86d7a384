"""HAND-WRITTEN TEST FIXTURE (not LLM output): a reference inference function for tiny Hanabi.

It implements cwm.contract.INFERENCE_API for the oracle model (the "text" view: ``{"observation": TEXT}``,
TEXT OpenSpiel's observation string, ``p1:d0 p0:a2``). Every move is read off the player's own events except
the other player's card, drawn uniformly from the cards that pay the return the player saw (at the end of
the game) or from both cards (before it): the other's actions are the same for both of its cards under
uniformly random play, so that is the posterior.
"""

import random

PAYOFF = [  # by (player 0's card, player 1's card): rows player 0's action, columns player 1's action
    [[[10, 0, 0], [4, 8, 4], [10, 0, 0]], [[0, 0, 10], [4, 8, 4], [0, 0, 10]]],
    [[[0, 0, 10], [4, 8, 4], [0, 0, 0]], [[10, 0, 0], [4, 8, 4], [10, 0, 0]]],
]


def _seen(events):
    """The player's own card (or None before its deal) and the actions made, from its last observation."""
    words = events[-1]["observation"]["observation"].split()
    own = words[0].split(":d")[1] if ":d" in words[0] else None
    actions = [w.split(":a")[1] for w in words[1:]]
    return own, actions


def resample_history(events, player_id, seed):
    rng = random.Random(seed)
    own, actions = _seen(events)
    other = 1 - player_id
    cards = [0, 1]
    last = events[-1]
    if last.get("terminal") and len(actions) == 2:
        a0, a1 = int(actions[0]), int(actions[1])

        def pays(c):
            deal = [int(own), c] if player_id == 0 else [c, int(own)]
            return PAYOFF[deal[0]][deal[1]][a0][a1] == last["return"]

        cards = [c for c in cards if pays(c)]
    deal = [None, None]
    deal[player_id] = own
    deal[other] = str(rng.choice(cards))
    history = [f"d{deal[0]}", f"d{deal[1]}"] + [f"p{i}a{a}" for i, a in enumerate(actions)]
    return history[: len(events) - 1]
