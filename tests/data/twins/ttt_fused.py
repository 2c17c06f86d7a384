"""HAND-WRITTEN TEST FIXTURE (not LLM output): a faster twin of tests/data/reference/tic_tac_toe_model.py with its
own playout loop (cwm.contract.PLAYOUT).

The contract functions are those of tests/data/twins/ttt_fast.py; ``playout`` plays a whole random playout on a
list it owns (one draw per move, the legal moves in get_legal_actions' order, rewards added as the library
adds them). tests/sandbox/test_playout_check.py derives wrong twins from this source by small textual patches
(keep the patched lines unchanged).
"""

LINES_THROUGH = (
    ((0, 1, 2), (0, 3, 6), (0, 4, 8)),
    ((0, 1, 2), (1, 4, 7)),
    ((0, 1, 2), (2, 5, 8), (2, 4, 6)),
    ((3, 4, 5), (0, 3, 6)),
    ((3, 4, 5), (1, 4, 7), (0, 4, 8), (2, 4, 6)),
    ((3, 4, 5), (2, 5, 8)),
    ((6, 7, 8), (0, 3, 6), (2, 4, 6)),
    ((6, 7, 8), (1, 4, 7)),
    ((6, 7, 8), (2, 5, 8), (0, 4, 8)),
)
SYMBOLS = "xo"
NAMES = tuple(tuple(f"{s}({i // 3},{i % 3})" for i in range(9)) for s in SYMBOLS)
CELL = {name: i for names in NAMES for i, name in enumerate(names)}
REWARDS = {"x": [1.0, -1.0], "o": [-1.0, 1.0], "": [0.0, 0.0]}


def get_initial_state():
    return {"board": ".........", "player": 0, "winner": "", "moves": 0}


def _over(state):
    return state["winner"] != "" or state["moves"] == 9


def get_current_player(state):
    return -4 if _over(state) else state["player"]


def get_legal_actions(state):
    if _over(state):
        return []
    names = NAMES[state["player"]]
    board = state["board"]
    return [names[i] for i in range(9) if board[i] == "."]


def get_chance_outcomes(state):
    return []


def apply_action(state, action):
    cell = CELL[action]
    symbol = SYMBOLS[state["player"]]
    board = state["board"][:cell] + symbol + state["board"][cell + 1:]
    winner = ""
    for a, b, c in LINES_THROUGH[cell]:
        if board[a] == board[b] == board[c] == symbol:
            winner = symbol
    return {"board": board, "player": 1 - state["player"], "winner": winner, "moves": state["moves"] + 1}


def get_observations(state):
    current = "Terminal" if _over(state) else SYMBOLS[state["player"]]
    first = {"board": list(state["board"]), "current_player": current}
    return [first, {"board": list(state["board"]), "current_player": current}]


def get_rewards(state):
    return REWARDS[state["winner"]]


def playout(state, returns, rand, limit):
    if _over(state):
        return returns, None
    board = list(state["board"])
    player, moves, winner, steps = state["player"], state["moves"], "", 0
    empty = [i for i in range(9) if board[i] == "."]  # ascending: get_legal_actions' order
    while steps < limit:
        cell = empty.pop(int(rand() * len(empty)))
        symbol = SYMBOLS[player]
        board[cell] = symbol
        moves += 1
        steps += 1
        player = 1 - player
        for a, b, c in LINES_THROUGH[cell]:
            if board[a] == board[b] == board[c] == symbol:
                winner = symbol
        if winner or moves == 9:
            rewards = REWARDS[winner]
            return [returns[0] + rewards[0], returns[1] + rewards[1]], None
    return returns, {"board": "".join(board), "player": player, "winner": winner, "moves": moves}
