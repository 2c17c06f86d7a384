"""HAND-WRITTEN TEST FIXTURE (not LLM output): an observation encoder for tic-tac-toe (cwm.contract.ENCODER_API).

Each of the nine cells becomes three numbers (empty, the observer's mark, the opponent's mark), so one
network plays both seats from its own point of view; 27 numbers in all.
"""

MARKS = ("x", "o")


def encode(observation, player_id):
    mine, theirs = MARKS[player_id], MARKS[1 - player_id]
    vector = []
    for cell in observation["board"]:
        vector += [float(cell == "."), float(cell == mine), float(cell == theirs)]
    return vector
