# hostile: mutating the input state instead of returning a new one
# job: check
# expect: fails: tried to modify its input state

# A small tic-tac-toe model; the hostile part below replaces one of its functions.


def get_initial_state():
    return {"board": ["."] * 9, "player": 0}


def _over(state):
    b = state["board"]
    lines = ((0, 1, 2), (3, 4, 5), (6, 7, 8), (0, 3, 6), (1, 4, 7), (2, 5, 8), (0, 4, 8), (2, 4, 6))
    return "." not in b or any(b[i] != "." and b[i] == b[j] == b[k] for i, j, k in lines)


def get_current_player(state):
    return -4 if _over(state) else state["player"]


def get_legal_actions(state):
    if _over(state):
        return []
    s = "xo"[state["player"]]
    return [f"{s}({i // 3},{i % 3})" for i in range(9) if state["board"][i] == "."]


def get_chance_outcomes(state):
    return []


def apply_action(state, action):
    board = list(state["board"])
    board[3 * int(action[2]) + int(action[4])] = "xo"[state["player"]]
    return {"board": board, "player": 1 - state["player"]}


def get_observations(state):
    obs = {"board": list(state["board"]), "current_player": "Terminal" if _over(state) else "xo"[state["player"]]}
    return [obs, dict(obs)]


def get_rewards(state):
    b = state["board"]
    lines = ((0, 1, 2), (3, 4, 5), (6, 7, 8), (0, 3, 6), (1, 4, 7), (2, 5, 8), (0, 4, 8), (2, 4, 6))
    for i, j, k in lines:
        if b[i] != "." and b[i] == b[j] == b[k]:
            return [1.0, -1.0] if b[i] == "x" else [-1.0, 1.0]
    return [0.0, 0.0]


# --- the hostile part ---
def apply_action(state, action):
    nxt = {"board": list(state["board"]), "player": 1 - state["player"]}
    nxt["board"][3 * int(action[2]) + int(action[4])] = "xo"[state["player"]]
    state["player"] = 1 - state["player"]
    return nxt
