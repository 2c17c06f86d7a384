"""HAND-WRITTEN TEST FIXTURE (not LLM output): a value function for the reference tic-tac-toe model.

It meets the value contract (``cwm.contract.VALUE_API``): the true return at terminal states, and in between
a number in [-0.9, 0.9] from the open lines: a line the opponent has not entered counts for the player by its
marks, one the player has not entered against it, and a player to move with two marks on an open line is
about to win.
"""

LINES = ((0, 1, 2), (3, 4, 5), (6, 7, 8), (0, 3, 6), (1, 4, 7), (2, 5, 8), (0, 4, 8), (2, 4, 6))


def _winner(board):
    for a, b, c in LINES:
        if board[a] != "." and board[a] == board[b] == board[c]:
            return board[a]
    return None


def _threat(board, mark, other):
    return any([board[i] for i in line].count(mark) == 2 and other not in [board[i] for i in line] for line in LINES)


def get_value(state, player_id):
    board = state["board"]
    mine, theirs = "xo"[player_id], "xo"[1 - player_id]
    winner = _winner(board)
    if winner is not None:
        return 1.0 if winner == mine else -1.0
    if "." not in board:
        return 0.0
    to_move = "xo"[state["player"]]
    if _threat(board, to_move, "xo"[1 - state["player"]]):
        return 0.9 if to_move == mine else -0.9
    score = 0
    for line in LINES:
        cells = [board[i] for i in line]
        if theirs not in cells:
            score += cells.count(mine)
        if mine not in cells:
            score -= cells.count(theirs)
    return max(-0.8, min(0.8, score / 8))
