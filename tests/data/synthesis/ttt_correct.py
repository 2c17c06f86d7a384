LINES = [
    (0, 1, 2), (3, 4, 5), (6, 7, 8),
    (0, 3, 6), (1, 4, 7), (2, 5, 8),
    (0, 4, 8), (2, 4, 6),
]
MARKS = ["x", "o"]


def get_initial_state():
    return {"board": ["."] * 9, "player": 0}


def _winner(board):
    for a, b, c in LINES:
        if board[a] != "." and board[a] == board[b] == board[c]:
            return MARKS.index(board[a])
    return None


def _over(state):
    return _winner(state["board"]) is not None or "." not in state["board"]


def get_current_player(state):
    return -4 if _over(state) else state["player"]


def get_legal_actions(state):
    if _over(state):
        return []
    mark = MARKS[state["player"]]
    return [f"{mark}({i // 3},{i % 3})" for i in range(9) if state["board"][i] == "."]


def get_chance_outcomes(state):
    return []


def apply_action(state, action):
    row, col = int(action[2]), int(action[4])
    board = list(state["board"])
    board[3 * row + col] = MARKS[state["player"]]
    return {"board": board, "player": 1 - state["player"]}


def get_observations(state):
    shown = "Terminal" if _over(state) else MARKS[state["player"]]
    obs = {"board": list(state["board"]), "current_player": shown}
    return [obs, dict(obs)]


def get_rewards(state):
    winner = _winner(state["board"])
    if winner is None:
        return [0.0, 0.0]
    return [1.0, -1.0] if winner == 0 else [-1.0, 1.0]
