"""HAND-WRITTEN TEST FIXTURE (not LLM output): the least a value function can be for tic-tac-toe: the true return
at terminal states and 0 everywhere else (it passes every check and tells the search nothing)."""

LINES = ((0, 1, 2), (3, 4, 5), (6, 7, 8), (0, 3, 6), (1, 4, 7), (2, 5, 8), (0, 4, 8), (2, 4, 6))


def get_value(state, player_id):
    board = state["board"]
    for a, b, c in LINES:
        if board[a] != "." and board[a] == board[b] == board[c]:
            return 1.0 if board[a] == "xo"[player_id] else -1.0
    if "." not in board:
        return 0.0  # a draw
    return 0.0
