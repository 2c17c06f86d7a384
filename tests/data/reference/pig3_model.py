"""HAND-WRITTEN TEST FIXTURE (not LLM output): a reference code world model of three-player Pig to 12,
OpenSpiel's ``pig(players=3,winscore=12)``.

It implements cwm.model.WORLD_MODEL_API over a plain dict state and reproduces the ground truth's action
strings, chance outcomes, text observations and returns, so the N-player tests can plan on a model file
the way a ``cwm:`` agent plans on an LLM's (in a hardened worker, through the arena).
"""

PLAYERS = 3
WIN_SCORE = 12
HORIZON = 1000  # decisions after which the game ends with no winner (OpenSpiel's default)
FACES = 6


def get_initial_state():
    return {"scores": [0] * PLAYERS, "turn_total": 0, "player": 0, "rolling": False, "decisions": 0}


def _over(state):
    return state["decisions"] >= HORIZON or max(state["scores"]) >= WIN_SCORE


def get_current_player(state):
    if _over(state):
        return -4
    return -1 if state["rolling"] else state["player"]


def get_legal_actions(state):
    if _over(state):
        return []
    if state["rolling"]:  # a chance node's legal actions are its outcomes
        return [f"Roll {face}" for face in range(1, FACES + 1)]
    if state["scores"][state["player"]] + state["turn_total"] >= WIN_SCORE:
        return ["stop"]  # enough to win: stopping is the only move
    return ["roll", "stop"]


def get_chance_outcomes(state):
    if _over(state) or not state["rolling"]:
        return []
    return [(f"Roll {face}", 1 / FACES) for face in range(1, FACES + 1)]


def apply_action(state, action):
    new = {"scores": list(state["scores"]), "turn_total": state["turn_total"], "player": state["player"],
           "rolling": False, "decisions": state["decisions"]}
    if action == "roll":
        new["rolling"] = True
        new["decisions"] += 1
    elif action == "stop":
        new["scores"][new["player"]] += new["turn_total"]
        new["turn_total"] = 0
        new["player"] = (new["player"] + 1) % PLAYERS
        new["decisions"] += 1
    else:  # a chance outcome, "Roll N"
        face = int(action.split()[1])
        if face == 1:
            new["turn_total"] = 0
            new["player"] = (new["player"] + 1) % PLAYERS
        else:
            new["turn_total"] += face
    return new


def get_observations(state):
    scores = " ".join(str(s) for s in state["scores"])
    rolling = " (rolling)" if state["rolling"] else ""
    text = f"Scores: {scores}, Turn total: {state['turn_total']}\nCurrent player: {state['player']}{rolling}\n"
    return [{"observation": text} for _ in range(PLAYERS)]


def get_rewards(state):
    if not _over(state) or max(state["scores"]) < WIN_SCORE:
        return [0.0] * PLAYERS
    winner = state["scores"].index(max(state["scores"]))
    return [1.0 if p == winner else -1.0 / (PLAYERS - 1) for p in range(PLAYERS)]
