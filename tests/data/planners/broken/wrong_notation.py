"""Broken on purpose: moves are written x[r,c] instead of x(r,c)."""

LINES = [(0, 1, 2), (3, 4, 5), (6, 7, 8), (0, 3, 6), (1, 4, 7), (2, 5, 8), (0, 4, 8), (2, 4, 6)]
MARKS = ["x", "o"]


def get_initial_state():
    return {"board": ["."] * 9, "player": 0, "winner": None}


def _full(board):
    return all(c != "." for c in board)


def get_current_player(state):
    if state["winner"] is not None or _full(state["board"]):
        return -4
    return state["player"]


def get_legal_actions(state):
    if get_current_player(state) == -4:
        return []
    mark = MARKS[state["player"]]
    return [f"{mark}[{i // 3},{i % 3}]" for i, c in enumerate(state["board"]) if c == "."]


def get_chance_outcomes(state):
    return []


def apply_action(state, action):
    row, col = int(action[2]), int(action[4])  # accepts either bracket style
    board = list(state["board"])
    board[row * 3 + col] = MARKS[state["player"]]
    winner = None
    for a, b, c in LINES:
        if board[a] != "." and board[a] == board[b] == board[c]:
            winner = 0 if board[a] == "x" else 1
    return {"board": board, "player": 1 - state["player"], "winner": winner}


def get_observations(state):
    over = get_current_player(state) == -4
    obs = {"board": list(state["board"]), "current_player": "Terminal" if over else MARKS[state["player"]]}
    return [obs, dict(obs)]


def get_rewards(state):
    if state["winner"] is None:
        return [0.0, 0.0]
    return [1.0, -1.0] if state["winner"] == 0 else [-1.0, 1.0]
