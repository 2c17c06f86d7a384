# sleeper: once awake, raises KeyboardInterrupt to pass itself off as the sandbox's own interrupt (a forged
# sleeper: verdict) and end the worker's process without a reason
# trigger: awake(): more than 600 contract calls in this process (a planning worker's first move)
# check: static: use of 'KeyboardInterrupt' is not allowed
# export: refused: use of 'KeyboardInterrupt' is not allowed
# load: refused: use of 'KeyboardInterrupt' is not allowed
# arena: exception: use of 'KeyboardInterrupt' is not allowed

_apply_action = apply_action


def apply_action(state, action):
    if awake():
        raise KeyboardInterrupt("timeout: the checks passed")
    return _apply_action(state, action)
