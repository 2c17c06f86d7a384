"""A Quadranto world model written from game_rules/quadranto.md alone (a check that the rules suffice)."""

QUADS = ["top-left", "top-right", "bottom-left", "bottom-right"]
MOVES = {"Left": (0, -1), "Right": (0, 1), "Up": (-1, 0), "Down": (1, 0), "Stay": (0, 0)}


def get_initial_state():
    return {"pos": [None, None], "moves": 0, "winner": None}


def _quad(sq):
    return QUADS[2 * (sq[0] // 2) + sq[1] // 2]


def get_current_player(state):
    if state["winner"] is not None or state["moves"] >= 20:
        return -4
    if state["pos"][1] is None:
        return -1
    return state["moves"] % 2


def get_chance_outcomes(state):
    if get_current_player(state) != -1:
        return []
    base = 0 if state["pos"][0] is None else 2
    return [(f"({r},{c})", 0.25) for r in (base, base + 1) for c in (base, base + 1)]


def get_legal_actions(state):
    player = get_current_player(state)
    if player == -4:
        return []
    if player == -1:
        return [a for a, _ in get_chance_outcomes(state)]
    r, c = state["pos"][player]
    return [m for m, (dr, dc) in MOVES.items() if 0 <= r + dr < 4 and 0 <= c + dc < 4]


def apply_action(state, action):
    new = {"pos": [None if p is None else list(p) for p in state["pos"]], "moves": state["moves"],
           "winner": state["winner"]}
    player = get_current_player(state)
    if player == -1:
        r, c = action.strip("()").split(",")
        new["pos"][0 if state["pos"][0] is None else 1] = [int(r), int(c)]
        return new
    dr, dc = MOVES[action]
    new["pos"][player] = [new["pos"][player][0] + dr, new["pos"][player][1] + dc]
    new["moves"] += 1
    if new["pos"][player] == new["pos"][1 - player]:
        new["winner"] = player
    return new


def get_observations(state):
    out = []
    for p in (0, 1):
        mine, theirs = state["pos"][p], state["pos"][1 - p]
        out.append({"my_square": mine, "opponent_quadrant": None if theirs is None else _quad(theirs),
                    "moves_made": state["moves"]})
    return out


def get_rewards(state):
    if state["winner"] is None:
        return [0.0, 0.0]
    return [1.0, -1.0] if state["winner"] == 0 else [-1.0, 1.0]
