"""HAND-WRITTEN TEST FIXTURE (not LLM output): an observation encoder for connect four (cwm.contract.ENCODER_API).

Each of the 42 cells of the 6x7 board becomes three numbers (empty, the observer's disc, the opponent's
disc); 126 numbers in all.
"""

MARKS = ("x", "o")


def encode(observation, player_id):
    mine, theirs = MARKS[player_id], MARKS[1 - player_id]
    vector = []
    for row in observation["board"]:
        for cell in row:
            vector += [float(cell == "."), float(cell == mine), float(cell == theirs)]
    return vector
