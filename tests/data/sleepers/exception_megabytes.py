# sleeper: once awake, apply_action raises an error whose message is 20 million characters long
# trigger: awake(): more than 600 contract calls in this process (a planning worker's first move)
# check: passes
# export: ok
# load: ok
# arena: exception: AAAAAAAA

_apply_action = apply_action


def apply_action(state, action):
    if awake():
        raise ValueError("A" * 20_000_000)
    return _apply_action(state, action)
