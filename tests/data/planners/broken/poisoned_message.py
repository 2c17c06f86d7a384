"""Broken on purpose: apply_action raises on the fourth move with a message no file or terminal should see raw:
a lone surrogate, ANSI escape sequences (clear screen, red, a cursor move), NUL bytes, a carriage return
that would overwrite the line, and a bidi override."""

LINES = [(0, 1, 2), (3, 4, 5), (6, 7, 8), (0, 3, 6), (1, 4, 7), (2, 5, 8), (0, 4, 8), (2, 4, 6)]
MARKS = ["x", "o"]
POISON = "cell \ud800 gone\x1b[2J\x1b[31mRED\x1b[0m\x00\x00\rFORGED LINE\u202e"


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
    return [f"{mark}({i // 3},{i % 3})" for i, c in enumerate(state["board"]) if c == "."]


def get_chance_outcomes(state):
    return []


def apply_action(state, action):
    row, col = int(action[2]), int(action[4])
    if state["board"].count(".") == 6:
        raise ValueError(POISON)
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
