"""HAND-WRITTEN TEST FIXTURE (not LLM output): a small game with chance, the reference for the chance cases of
tests/sandbox/test_equivalence.py.

Two players race to square 10. On a turn the mover says "step" or "jump"; then chance moves them: a step
goes 1, 2 or 3 squares (probabilities 0.5, 0.3, 0.2), a jump 0 or 4 (0.5 each). The first to reach 10 wins.
"""

STEP = [("1", 0.5), ("2", 0.3), ("3", 0.2)]
JUMP = [("0", 0.5), ("4", 0.5)]


def get_initial_state():
    return {"pos": [0, 0], "player": 0, "pending": ""}


def _winner(state):
    for p in (0, 1):
        if state["pos"][p] >= 10:
            return p
    return None


def get_current_player(state):
    if _winner(state) is not None:
        return -4
    return -1 if state["pending"] else state["player"]


def get_legal_actions(state):
    return ["step", "jump"]


def get_chance_outcomes(state):
    return list(STEP) if state["pending"] == "step" else list(JUMP)


def apply_action(state, action):
    if not state["pending"]:
        return {"pos": list(state["pos"]), "player": state["player"], "pending": action}
    pos = list(state["pos"])
    pos[state["player"]] += int(action)
    return {"pos": pos, "player": 1 - state["player"], "pending": ""}


def get_observations(state):
    obs = {"pos": list(state["pos"]), "to_move": state["player"], "pending": state["pending"]}
    return [obs, dict(obs)]


def get_rewards(state):
    winner = _winner(state)
    if winner is None:
        return [0.0, 0.0]
    return [1.0, -1.0] if winner == 0 else [-1.0, 1.0]
