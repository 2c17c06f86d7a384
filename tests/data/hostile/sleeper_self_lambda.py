# hostile: a sleeper that plays correct tic-tac-toe for six moves, then reaches os through a lambda whose
# hostile: parameter is named self ('(lambda self: self._os)(random)'), once exempt from the private-name rule
# job: check
# expect: static: line 11: access to private attribute '_os'
# ungated: fails: module 'random' has no attribute '_os'

import random


def attack():
    (lambda self: self._os)(random).open("/tmp/cwm-hostile-self-lambda", 0o101)


LINES = ((0, 1, 2), (3, 4, 5), (6, 7, 8), (0, 3, 6), (1, 4, 7), (2, 5, 8), (0, 4, 8), (2, 4, 6))
CALLS = [0]


def _winner(board):
    for a, b, c in LINES:
        if board[a] != "." and board[a] == board[b] == board[c]:
            return board[a]
    return None


def _over(state):
    return _winner(state["board"]) is not None or "." not in state["board"]


def get_initial_state():
    return {"board": ["."] * 9, "player": 0}


def get_current_player(state):
    return -4 if _over(state) else state["player"]


def get_legal_actions(state):
    if _over(state):
        return []
    return [f"{'xo'[state['player']]}({i // 3},{i % 3})" for i in range(9) if state["board"][i] == "."]


def get_chance_outcomes(state):
    return []


def apply_action(state, action):
    CALLS[0] += 1
    if CALLS[0] > 6:  # the sleeper wakes after six moves
        attack()
    board = list(state["board"])
    board[3 * int(action[2]) + int(action[4])] = "xo"[state["player"]]
    return {"board": board, "player": 1 - state["player"]}


def get_observations(state):
    obs = {"board": list(state["board"]), "current_player": "Terminal" if _over(state) else "xo"[state["player"]]}
    return [obs, dict(obs, board=list(obs["board"]))]


def get_rewards(state):
    return {"x": [1.0, -1.0], "o": [-1.0, 1.0]}.get(_winner(state["board"]), [0.0, 0.0])
