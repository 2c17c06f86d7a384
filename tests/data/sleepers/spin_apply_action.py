# sleeper: apply_action spins forever once awake
# trigger: awake(): more than 600 contract calls in this process (a planning worker's first move)
# check: passes
# export: ok
# load: ok
# arena: timeout: more than its budget of

_apply_action = apply_action


def apply_action(state, action):
    while awake():
        pass
    return _apply_action(state, action)
