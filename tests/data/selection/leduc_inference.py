"""HAND-WRITTEN TEST FIXTURE (not LLM output): an inference function for the reference Leduc model.

It rebuilds the whole history from one player's events in a single pass: its own card and the public card
are in its observations, the opponent's bets show as changes of the opponent's ante (above the player's:
a raise; level: a call; below: a fold), and the opponent's card is drawn uniformly from the cards the
player has not seen.
"""

import random

CARDS = 6


def resample_history(events, player_id, seed):
    rng = random.Random(seed)
    opponent = 1 - player_id
    last = events[-1]["observation"]
    seen = {last["private"], last.get("public")}
    hidden = rng.choice([c for c in range(CARDS) if c not in seen])
    history, dealt = [], 0
    for now, after in zip(events, events[1:]):
        before, next_obs = now["observation"], after["observation"]
        if now["action"] is not None:
            history.append(now["action"])
        elif before["player"] == -1:
            if dealt < 2:
                card = next_obs["private"] if dealt == player_id else hidden
                dealt += 1
            else:
                card = next_obs["public"]
            history.append(f"Chance outcome:{card}")
        else:
            mine, theirs = next_obs["ante"][player_id], next_obs["ante"][opponent]
            history.append("Raise" if theirs > mine else "Call" if theirs == mine else "Fold")
    return history
