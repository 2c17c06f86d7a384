"""A hand of war world model written from game_rules/hand_of_war.md alone (a check that the rules suffice)."""

CARDS = [r + s for r in "AKQJ" for s in "SHDC"]  # the rules' listing order


def _rank(card):
    return "JQKA".index(card[0])  # higher is stronger


def get_initial_state():
    return {"dealt": [], "draw": [[], []], "hand": [[], []], "won": [[], []], "up": [], "down": [],
            "pick": [None, None], "last": None, "over": False}


def _copy(state):
    return {k: [list(x) if isinstance(x, list) else x for x in v] if isinstance(v, list) else v
            for k, v in state.items()}


def get_current_player(state):
    if state["over"]:
        return -4
    if len(state["dealt"]) < 16:
        return -1
    return 0 if state["pick"][0] is None else 1


def get_chance_outcomes(state):
    if get_current_player(state) != -1:
        return []
    left = [c for c in CARDS if c not in state["dealt"]]
    return [("deal " + c, 1.0 / len(left)) for c in left]


def get_legal_actions(state):
    player = get_current_player(state)
    if player == -4:
        return []
    if player == -1:
        return [a for a, _ in get_chance_outcomes(state)]
    return ["play " + c for c in sorted(state["hand"][player], key=CARDS.index)]


def _refill(s):
    for p in (0, 1):
        while len(s["hand"][p]) < 3 and s["draw"][p]:
            s["hand"][p].append(s["draw"][p].pop(0))


def apply_action(state, action):
    s = _copy(state)
    player = get_current_player(state)
    card = action.split()[1]
    if player == -1:
        s["dealt"].append(card)
        s["draw"][(len(s["dealt"]) - 1) % 2].append(card)
        if len(s["dealt"]) == 16:
            _refill(s)
        return s
    s["hand"][player].remove(card)
    s["pick"][player] = card
    if player == 0:
        return s
    a, b = s["pick"]
    s["pick"] = [None, None]
    s["last"] = [a, b]
    s["up"] += [a, b]
    if _rank(a) != _rank(b):
        w = 0 if _rank(a) > _rank(b) else 1
        s["won"][w] += s["up"] + s["down"]
        s["up"], s["down"] = [], []
    elif not s["draw"][0] or not s["draw"][1]:
        s["over"] = True
        return s
    else:
        s["down"] += [s["draw"][0].pop(0), s["draw"][1].pop(0)]
    _refill(s)
    if not s["hand"][0] or len(s["won"][0]) == 16 or len(s["won"][1]) == 16:
        s["over"] = True
    return s


def get_observations(state):
    out = []
    for p in (0, 1):
        o = 1 - p
        last = None
        if state["last"] is not None:
            mine, theirs = state["last"][p], state["last"][o]
            res = "tie" if _rank(mine) == _rank(theirs) else ("won" if _rank(mine) > _rank(theirs) else "lost")
            last = {"my_card": mine, "opponent_card": theirs, "result": res}
        out.append({
            "my_hand": sorted(state["hand"][p], key=CARDS.index),
            "my_pick": state["pick"][p],
            "opponent_picked": state["pick"][o] is not None,
            "opponent_hand_size": len(state["hand"][o]),
            "my_draw_pile": len(state["draw"][p]),
            "opponent_draw_pile": len(state["draw"][o]),
            "my_win_pile": len(state["won"][p]),
            "opponent_win_pile": len(state["won"][o]),
            "pot_face_up": list(state["up"]),
            "pot_face_down": len(state["down"]),
            "last_battle": last,
        })
    return out


def get_rewards(state):
    if not state["over"]:
        return [0.0, 0.0]
    a, b = len(state["won"][0]), len(state["won"][1])
    return [0.0, 0.0] if a == b else ([1.0, -1.0] if a > b else [-1.0, 1.0])
