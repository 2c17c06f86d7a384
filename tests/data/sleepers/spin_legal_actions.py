# sleeper: get_legal_actions spins forever once awake
# trigger: awake(): more than 600 contract calls in this process (a planning worker's first move)
# check: passes
# export: ok
# load: ok
# arena: timeout: more than its budget of

_get_legal_actions = get_legal_actions


def get_legal_actions(state):
    while awake():
        pass
    return _get_legal_actions(state)
