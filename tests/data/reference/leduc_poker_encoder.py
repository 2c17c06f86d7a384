"""HAND-WRITTEN TEST FIXTURE (not LLM output): an observation encoder for Leduc poker (cwm.contract.ENCODER_API).

The observer's private card and the public card one-hot (six cards, plus "none yet"), the round, whose
turn it is, both contributions to the pot and both stacks, scaled to about [0, 1]; 22 numbers. The
betting history is not in the observation: a recurrent policy remembers it.
"""

CARDS = 6


def _card(card):
    return [float(card == c) for c in range(CARDS)] + [float(not 0 <= card < CARDS)]


def encode(observation, player_id):
    other = 1 - player_id
    ante, money = observation["ante"], observation["money"]
    vector = _card(observation["private"]) + _card(observation.get("public", -1))
    vector += [float(observation["round"] == 1), float(observation["round"] == 2)]
    vector += [float(observation["player"] == player_id), float(observation["player"] == other)]
    vector += [ante[player_id] / 13.0, ante[other] / 13.0, money[player_id] / 100.0, money[other] / 100.0]
    return vector
