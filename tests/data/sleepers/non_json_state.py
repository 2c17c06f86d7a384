# sleeper: once awake, apply_action returns a state holding a set and a function
# trigger: awake(): more than 600 contract calls in this process (a planning worker's first move)
# check: passes
# export: ok
# load: ok
# arena: exception: which is not a JSON value

_apply_action = apply_action


def apply_action(state, action):
    nxt = _apply_action(state, action)
    if awake():
        nxt["seen"] = {action}
        nxt["hook"] = apply_action
    return nxt
