# sleeper: once awake, get_legal_actions adds an action the game does not have, written with ANSI escapes
# trigger: awake(): more than 600 contract calls in this process (a planning worker's first move)
# check: passes
# export: ok
# load: ok
# arena: exception: x(9,9)

_get_legal_actions = get_legal_actions


def get_legal_actions(state):
    legal = _get_legal_actions(state)
    return legal + ["x(9,9)\x1b[31m"] if awake() and legal else legal
