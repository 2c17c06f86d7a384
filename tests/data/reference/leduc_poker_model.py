"""HAND-WRITTEN TEST FIXTURE (not LLM output): a reference code world model of Leduc poker.

It implements cwm.model.WORLD_MODEL_API over a plain dict state and reproduces the recorded ground truth
exactly: OpenSpiel's leduc_poker action strings (chance outcomes included) and the "brackets" view of its
observation strings (see game_rules/leduc_poker.md). tests/foundation derives mutants from this source by
small textual patches, so keep the lines patched by the mutant table unchanged.
"""

NO_CARD = -10000
RAISE_SIZE = {1: 2, 2: 4}
MAX_RAISES = 2
START_MONEY = 100


def get_initial_state():
    return {
        "cards": [],          # private cards dealt so far: player 0's, then player 1's
        "public": None,       # the public card once dealt
        "round": 1,
        "player": -1,         # player to act; -1 while a card is to be dealt
        "ante": [1, 1],       # each player's contribution to the pot
        "raises": 0,          # raises in the current round
        "acted": 0,           # actions in the current round
        "folded": None,       # the player who folded
        "done": False,
        "last": -1,           # the player who acted last
    }


def get_current_player(state):
    if state["done"]:
        return -4
    return state["player"]


def _deck(state):
    used = list(state["cards"])
    if state["public"] is not None:
        used.append(state["public"])
    return [c for c in range(6) if c not in used]


def get_legal_actions(state):
    player = get_current_player(state)
    if player == -4:
        return []
    if player == -1:
        return [f"Chance outcome:{c}" for c in _deck(state)]
    actions = []
    if state["ante"][1 - player] > state["ante"][player]:
        actions.append("Fold")
    actions.append("Call")
    if state["raises"] < MAX_RAISES:
        actions.append("Raise")
    return actions


def get_chance_outcomes(state):
    if get_current_player(state) != -1:
        return []
    deck = _deck(state)
    return [(f"Chance outcome:{c}", 1.0 / len(deck)) for c in deck]


def _copy(state):
    new = dict(state)
    new["cards"] = list(state["cards"])
    new["ante"] = list(state["ante"])
    return new


def apply_action(state, action):
    new = _copy(state)
    player = state["player"]
    if player == -1:
        card = int(action.split(":")[1])
        if len(new["cards"]) < 2:
            new["cards"].append(card)
        else:
            new["public"] = card
        if len(new["cards"]) == 2:
            new["player"] = 0
        return new
    new["last"] = player
    opponent = 1 - player
    if action == "Fold":
        new["folded"] = player
        new["done"] = True
    elif action == "Call":
        new["ante"][player] = new["ante"][opponent]
        new["acted"] += 1
        if new["acted"] >= 2:
            _end_round(new)
        else:
            new["player"] = opponent
    else:  # Raise
        new["ante"][player] = new["ante"][opponent] + RAISE_SIZE[new["round"]]
        new["raises"] += 1
        new["acted"] += 1
        new["player"] = opponent
    return new


def _end_round(state):
    if state["round"] == 1:
        state["round"] = 2
        state["raises"] = 0
        state["acted"] = 0
        state["player"] = -1
    else:
        state["done"] = True


def _rank(card):
    return card // 2


def _returns(state):
    ante = state["ante"]
    if state["folded"] is not None:
        loser = state["folded"]
    else:
        public = _rank(state["public"])
        ranks = [_rank(c) for c in state["cards"]]
        pairs = [r == public for r in ranks]
        if pairs[0] != pairs[1]:
            loser = 1 if pairs[0] else 0
        elif ranks[0] != ranks[1]:
            loser = 1 if ranks[0] > ranks[1] else 0
        else:
            return [0.0, 0.0]
    out = [0.0, 0.0]
    out[loser] = -float(ante[loser])
    out[1 - loser] = float(ante[loser])
    return out


def get_observations(state):
    done = state["done"]
    returns = _returns(state) if done else [0.0, 0.0]
    shown_player = state["last"] if done else state["player"]
    observations = []
    for observer in range(2):
        cards = state["cards"]
        obs = {
            "observer": observer,
            "private": cards[observer] if len(cards) > observer else NO_CARD,
            "round": state["round"],
            "player": shown_player,
            "pot": 0 if done else sum(state["ante"]),
        }
        if done:
            obs["money"] = [START_MONEY + int(r) for r in returns]
        else:
            obs["money"] = [START_MONEY - a for a in state["ante"]]
        if state["public"] is not None:
            obs["public"] = state["public"]
        obs["ante"] = list(state["ante"])
        observations.append(obs)
    return observations


def get_rewards(state):
    if not state["done"]:
        return [0.0, 0.0]
    return _returns(state)
