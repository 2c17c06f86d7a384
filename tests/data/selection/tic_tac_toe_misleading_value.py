"""HAND-WRITTEN TEST FIXTURE (not LLM output): a value function for tic-tac-toe that misleads on purpose.

It scores a position the wrong way round (the opponent's open lines count for the player, the player's own
against it), so an MCTS agent valuing its leaves with it steers towards losing: the weak agent sample
rejection must reject.
"""

LINES = ((0, 1, 2), (3, 4, 5), (6, 7, 8), (0, 3, 6), (1, 4, 7), (2, 5, 8), (0, 4, 8), (2, 4, 6))


def get_value(state, player_id):
    mine, theirs = "xo"[player_id], "xo"[1 - player_id]
    board = state["board"]
    score = 0
    for line in LINES:
        cells = [board[i] for i in line]
        if mine not in cells:
            score += cells.count(theirs)
        if theirs not in cells:
            score -= cells.count(mine)
    return max(-1.0, min(1.0, score / 4))
