"""HAND-WRITTEN TEST FIXTURE (not LLM output): an observation encoder for quadranto (cwm.contract.ENCODER_API).

The observer's square one-hot over the 4x4 board (plus "not placed yet"), the opponent's quadrant one-hot
(plus "not placed yet") and the moves made so far over the game's 20; 23 numbers. The opponent's square
within its quadrant is hidden: a recurrent policy can infer it from the quadrants seen so far.
"""

SIZE = 4
QUADRANTS = ("top-left", "top-right", "bottom-left", "bottom-right")
MAX_MOVES = 20


def encode(observation, player_id):
    square = observation["my_square"]
    cells = [0.0] * (SIZE * SIZE + 1)
    cells[SIZE * SIZE if square is None else square[0] * SIZE + square[1]] = 1.0
    quadrant = observation["opponent_quadrant"]
    theirs = [float(quadrant == q) for q in QUADRANTS] + [float(quadrant is None)]
    return cells + theirs + [observation["moves_made"] / MAX_MOVES]
