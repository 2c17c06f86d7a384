"""HAND-WRITTEN TEST FIXTURE (not LLM output): a reference code world model of tic-tac-toe.

It implements cwm.model.WORLD_MODEL_API over a plain dict state and reproduces the recorded ground truth
exactly (OpenSpiel's tic_tac_toe action strings and observation struct). tests/foundation uses it as
the known-good model and derives its mutants from this source by small textual patches, so keep the
lines the mutant table in tests/foundation/test_reference_models.py patches unchanged.
"""

LINES = (
    (0, 1, 2), (3, 4, 5), (6, 7, 8),
    (0, 3, 6), (1, 4, 7), (2, 5, 8),
    (0, 4, 8), (2, 4, 6),
)
SYMBOLS = ("x", "o")


def get_initial_state():
    return {"board": ["."] * 9, "player": 0}


def _winner(board):
    for a, b, c in LINES:
        if board[a] != "." and board[a] == board[b] == board[c]:
            return board[a]
    return None


def _is_over(state):
    return _winner(state["board"]) is not None or "." not in state["board"]


def get_current_player(state):
    if _is_over(state):
        return -4
    return state["player"]


def get_legal_actions(state):
    if _is_over(state):
        return []
    symbol = SYMBOLS[state["player"]]
    return [f"{symbol}({i // 3},{i % 3})" for i in range(9) if state["board"][i] == "."]


def get_chance_outcomes(state):
    return []


def apply_action(state, action):
    row, col = int(action[2]), int(action[4])
    board = list(state["board"])
    board[3 * row + col] = SYMBOLS[state["player"]]
    return {"board": board, "player": 1 - state["player"]}


def get_observations(state):
    if _is_over(state):
        current = "Terminal"
    else:
        current = SYMBOLS[state["player"]]
    obs = {"board": list(state["board"]), "current_player": current}
    return [obs, dict(obs, board=list(obs["board"]))]


def get_rewards(state):
    winner = _winner(state["board"])
    if winner == "x":
        return [1.0, -1.0]
    if winner == "o":
        return [-1.0, 1.0]
    return [0.0, 0.0]
