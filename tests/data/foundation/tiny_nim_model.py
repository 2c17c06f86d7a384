"""Hand-written test fixture: a world model of tests/data/foundation/tiny_nim.py (pile of 7, take 1 or 2)."""


def get_initial_state():
    return {"pile": 7, "player": 0, "winner": None}


def get_current_player(state):
    return -4 if state["winner"] is not None else state["player"]


def get_legal_actions(state):
    if state["winner"] is not None:
        return []
    return [f"take {n}" for n in (1, 2) if n <= state["pile"]]


def get_chance_outcomes(state):
    return []


def apply_action(state, action):
    pile = state["pile"] - int(action.split()[1])
    winner = state["player"] if pile == 0 else None
    return {"pile": pile, "player": 1 - state["player"], "winner": winner}


def get_observations(state):
    text = f"pile {state['pile']}, player {state['player']} to move"
    return [{"observation": text}, {"observation": text}]


def get_rewards(state):
    if state["winner"] is None:
        return [0.0, 0.0]
    return [1.0, -1.0] if state["winner"] == 0 else [-1.0, 1.0]
