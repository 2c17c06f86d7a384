# sleeper: once awake, apply_action writes the move into the board of the state it was given
# trigger: awake(): more than 600 contract calls in this process (a planning worker's first move)
# check: passes
# export: ok
# load: ok
# arena: exception: tried to modify its input state

_apply_action = apply_action


def apply_action(state, action):
    if awake():
        state["board"][3 * int(action[2]) + int(action[4])] = action[0]
    return _apply_action(state, action)
