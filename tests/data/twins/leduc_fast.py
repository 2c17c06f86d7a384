"""HAND-WRITTEN TEST FIXTURE (not LLM output): a twin of tests/data/reference/leduc_poker_model.py.

The same game and the same answers (action strings in the same order, chance outcomes, observations, rewards)
over another state: the three cards in one fixed-length list, the round's bets as two numbers, the result
worked out once when the hand ends. tests/agents/test_twin_inference.py plans on it beside the model with the
model's inference (tests/data/reference/leduc_poker_inference.py).
"""

NONE = -10000
RAISE = (0, 2, 4)  # by round
PREFIX = "Chance outcome:"


def get_initial_state():
    return {"deal": [NONE, NONE, NONE], "dealt": 0, "rnd": 1, "to": -1, "bet": [1, 1], "rz": 0, "acts": 0,
            "end": False, "prev": -1, "pay": [0.0, 0.0]}


def get_current_player(state):
    return -4 if state["end"] else state["to"]


def _left(state):
    deal = state["deal"]
    return [c for c in range(6) if c != deal[0] and c != deal[1] and c != deal[2]]


def get_legal_actions(state):
    if state["end"]:
        return []
    who = state["to"]
    if who == -1:
        return [PREFIX + str(c) for c in _left(state)]
    bet = state["bet"]
    out = ["Fold", "Call"] if bet[1 - who] > bet[who] else ["Call"]
    if state["rz"] < 2:
        out.append("Raise")
    return out


def get_chance_outcomes(state):
    if state["end"] or state["to"] != -1:
        return []
    left = _left(state)
    return [(PREFIX + str(c), 1.0 / len(left)) for c in left]


def _result(deal, bet, folder):
    if folder >= 0:
        loser = folder
    else:
        public = deal[2] // 2
        a, b = deal[0] // 2, deal[1] // 2
        if (a == public) != (b == public):
            loser = 1 if a == public else 0
        elif a != b:
            loser = 1 if a > b else 0
        else:
            return [0.0, 0.0]
    pay = [0.0, 0.0]
    pay[loser] = -float(bet[loser])
    pay[1 - loser] = float(bet[loser])
    return pay


def apply_action(state, action):
    new = dict(state)
    who = state["to"]
    if who == -1:
        deal = list(state["deal"])
        deal[state["dealt"]] = int(action[len(PREFIX):])
        new["deal"], new["dealt"] = deal, state["dealt"] + 1
        if new["dealt"] >= 2:  # after the private cards, and after the public one
            new["to"] = 0
        return new
    other = 1 - who
    bet = list(state["bet"])
    new["prev"], new["bet"] = who, bet
    if action == "Fold":
        new["end"], new["pay"] = True, _result(state["deal"], bet, who)
        return new
    if action == "Raise":
        bet[who] = bet[other] + RAISE[state["rnd"]]
        new["rz"], new["acts"], new["to"] = state["rz"] + 1, state["acts"] + 1, other
        return new
    bet[who] = bet[other]  # Call
    new["acts"] = state["acts"] + 1
    if new["acts"] < 2:
        new["to"] = other
    elif state["rnd"] == 1:
        new["rnd"], new["rz"], new["acts"], new["to"] = 2, 0, 0, -1
    else:
        new["end"], new["pay"] = True, _result(state["deal"], bet, -1)
    return new


def get_observations(state):
    end, deal, bet = state["end"], state["deal"], state["bet"]
    out = []
    for me in (0, 1):
        seen = {"observer": me, "private": deal[me], "round": state["rnd"],
                "player": state["prev"] if end else state["to"], "pot": 0 if end else bet[0] + bet[1]}
        if end:
            seen["money"] = [100 + int(p) for p in state["pay"]]
        else:
            seen["money"] = [100 - bet[0], 100 - bet[1]]
        if deal[2] != NONE:
            seen["public"] = deal[2]
        seen["ante"] = [bet[0], bet[1]]
        out.append(seen)
    return out


def get_rewards(state):
    return list(state["pay"]) if state["end"] else [0.0, 0.0]
